package replica

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	"github.com/agentcore/agentcore/pkg/store"
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

// Ask is the engine's permission hook: it waits for an answer from the
// run's stream, RespondPermission on any replica, or the permission
// timeout, which denies.
func (rp *Replica) Ask(ctx context.Context, req agent.PermissionRequest) agent.Decision {
	reason := fmt.Sprintf("no one answered within the permission timeout (%s)", rp.opts.PermissionTimeout)
	d, ok := rp.Await(ctx, req.RunID, req.ToolCallID, reason)
	if !ok {
		return agent.Decision{Reason: "the run ended before the client answered"}
	}
	return d
}

// Await waits for the answer to request id of a run here, kept in the
// store as a permission request (of a kind its id tells): from any
// replica, or, after the permission timeout, a refusal for timedOut, which
// it stores. ok is false when ctx ended first.
func (rp *Replica) Await(ctx context.Context, run, id, timedOut string) (d agent.Decision, ok bool) {
	k := permKey{run, id}
	ch := rp.perms.add(k)
	defer rp.perms.remove(k)
	if d, ok := rp.storedDecision(ctx, k); ok { // answered before we listened
		return d, true
	}
	timer := time.NewTimer(rp.opts.PermissionTimeout)
	defer timer.Stop()
	select {
	case d := <-ch:
		return d, true
	case <-timer.C:
		return rp.decide(k, false, timedOut), true
	case <-ctx.Done():
		return agent.Decision{}, false
	}
}

// Answer stores the answer to a request of a run and hands it to the run,
// here or, through a notice, on the replica that runs it. The store's
// errors are returned as they are (store.ErrNotFound: no such request,
// store.ErrConflict: answered already).
func (rp *Replica) Answer(ctx context.Context, run, id string, allow bool, reason string) error {
	if _, err := rp.opts.Store.AnswerPermission(ctx, run, id, allow, reason); err != nil {
		return err
	}
	if rp.Running(run) {
		rp.Deliver(run, id, agent.Decision{Allow: allow, Reason: reason})
		return nil
	}
	return rp.opts.Store.Notify(ctx, store.Notice{Kind: store.NoticePermission, RunID: run, Text: id})
}

// Decide answers a request of a run here, unless someone answered first
// (then that answer stands).
func (rp *Replica) Decide(run, call string, allow bool, reason string) agent.Decision {
	return rp.decide(permKey{run, call}, allow, reason)
}

func (rp *Replica) decide(k permKey, allow bool, reason string) agent.Decision {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	p, err := rp.opts.Store.AnswerPermission(ctx, k.run, k.call, allow, reason)
	if err != nil && p != nil && p.Answered {
		return decision(p)
	}
	return agent.Decision{Allow: allow, Reason: reason}
}

// storedDecision returns the stored answer of a request, if it has one.
func (rp *Replica) storedDecision(ctx context.Context, k permKey) (agent.Decision, bool) {
	ps, err := rp.opts.Store.Permissions(ctx, k.run)
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
func (rp *Replica) deliverStored(run, call string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	k := permKey{run, call}
	if d, ok := rp.storedDecision(ctx, k); ok {
		rp.perms.deliver(k, d)
	}
}

// Deliver hands a decision to the request of a run here waiting for it, if
// any.
func (rp *Replica) Deliver(run, call string, d agent.Decision) {
	rp.perms.deliver(permKey{run, call}, d)
}

// Waiting returns the calls of a run here waiting for an answer.
func (rp *Replica) Waiting(run string) []string { return rp.perms.waiting(run) }

// DenyWaiting denies, for reason, the calls waiting for an answer of the
// runs here that in selects.
func (rp *Replica) DenyWaiting(in func(run string) bool, reason string) {
	seen := map[string]bool{}
	for _, k := range rp.perms.keys() {
		if seen[k.run] {
			continue
		}
		seen[k.run] = true
		if !in(k.run) {
			continue
		}
		for _, call := range rp.Waiting(k.run) {
			if hostreq.IsElicitation(call) {
				continue // answered with RespondElicitation, never on a stream
			}
			rp.Deliver(k.run, call, rp.Decide(k.run, call, false, reason))
		}
	}
}
