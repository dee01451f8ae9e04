package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// permKey names a permission request.
type permKey struct{ run, call string }

// permWaiters holds the permission requests of runs here that wait for an
// answer, by run and call.
type permWaiters struct {
	mu sync.Mutex
	m  map[permKey]chan agent.Decision
}

func (p *permWaiters) add(k permKey) chan agent.Decision {
	ch := make(chan agent.Decision, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[permKey]chan agent.Decision{}
	}
	p.m[k] = ch
	return ch
}

func (p *permWaiters) remove(k permKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, k)
}

// deliver hands a decision to the waiting request, if any.
func (p *permWaiters) deliver(k permKey, d agent.Decision) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.m[k]; ok {
		select {
		case ch <- d:
		default:
		}
	}
}

// keys returns every request waiting for an answer.
func (p *permWaiters) keys() []permKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]permKey, 0, len(p.m))
	for k := range p.m {
		out = append(out, k)
	}
	return out
}

// waiting returns the calls of a run waiting for an answer.
func (p *permWaiters) waiting(run string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for k := range p.m {
		if k.run == run {
			out = append(out, k.call)
		}
	}
	return out
}

func decision(p *store.Permission) agent.Decision {
	return agent.Decision{Allow: p.Allow, Reason: p.Reason}
}

// askPermission is the engine's permission hook: it waits for an answer
// from the run's stream, RespondPermission on any replica, or the
// permission timeout, which denies.
func (s *Server) askPermission(ctx context.Context, req agent.PermissionRequest) agent.Decision {
	k := permKey{req.RunID, req.ToolCallID}
	ch := s.perms.add(k)
	defer s.perms.remove(k)
	if d, ok := s.storedDecision(ctx, k); ok { // answered before we listened
		return d
	}
	timer := time.NewTimer(s.cfg.PermissionTimeout)
	defer timer.Stop()
	select {
	case d := <-ch:
		return d
	case <-timer.C:
		reason := fmt.Sprintf("no one answered within the permission timeout (%s)", s.cfg.PermissionTimeout)
		return s.decide(k, false, reason)
	case <-ctx.Done():
		return agent.Decision{Reason: "the run ended before the client answered"}
	}
}

// decide answers a request of a run here, unless someone answered first
// (then that answer stands).
func (s *Server) decide(k permKey, allow bool, reason string) agent.Decision {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	p, err := s.store.AnswerPermission(ctx, k.run, k.call, allow, reason)
	if err != nil && p != nil && p.Answered {
		return decision(p)
	}
	return agent.Decision{Allow: allow, Reason: reason}
}

// storedDecision returns the stored answer of a request, if it has one.
func (s *Server) storedDecision(ctx context.Context, k permKey) (agent.Decision, bool) {
	ps, err := s.store.Permissions(ctx, k.run)
	if err != nil {
		return agent.Decision{}, false
	}
	for _, p := range ps {
		if p.CallID == k.call && p.Answered {
			return decision(p), true
		}
	}
	return agent.Decision{}, false
}

// deliverStored hands a decision another replica stored to the request
// waiting here.
func (s *Server) deliverStored(run, call string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	k := permKey{run, call}
	if d, ok := s.storedDecision(ctx, k); ok {
		s.perms.deliver(k, d)
	}
}

// answer stores a decision and hands it to the run, here or on the
// replica that runs it.
func (s *Server) answer(ctx context.Context, run, call string, allow bool, reason string) error {
	_, err := s.store.AnswerPermission(ctx, run, call, allow, reason)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_PERMISSION_NOT_FOUND, "run %q has no permission request for tool call %q", run, call)
	case errors.Is(err, store.ErrConflict):
		return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_PERMISSION_ANSWERED, "the permission request for tool call %q of run %q was answered already, or its run ended", call, run)
	case err != nil:
		return storeStatus(err)
	}
	k := permKey{run, call}
	if s.live.has(run) {
		s.perms.deliver(k, agent.Decision{Allow: allow, Reason: reason})
		return nil
	}
	if err := s.store.Notify(ctx, store.Notice{Kind: store.NoticePermission, RunID: run, Text: call}); err != nil {
		return storeStatus(err)
	}
	return nil
}
