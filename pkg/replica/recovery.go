package replica

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Recover ends a run whose server is gone: its history is repaired (every
// call of the last model response without a result gets an error result)
// and it becomes interrupted, which releases the agent's lease. Two replicas
// may try at once: the store lets one of each write through.
func (rp *Replica) Recover(ctx context.Context, runID string) error {
	return rp.end(ctx, runID, agentv1.RunState_RUN_STATE_INTERRUPTED, func(r *store.Run) *agentv1.RunError {
		return &agentv1.RunError{
			Code: int32(codes.Unavailable), Reason: agentv1.ErrorReason_ERROR_REASON_RUN_INTERRUPTED.Wire(),
			Message: "the server running it (replica " + r.Owner + ") stopped before the run ended; its history was repaired: send again, or send with resume to go on",
		}
	})
}

// GiveUp ends a run taken over to be resumed that cannot be (why says
// why), as Recover does.
func (rp *Replica) GiveUp(ctx context.Context, runID, why string) error {
	rp.opts.Log.Warn("run not resumed", "run", runID, "why", why)
	return rp.end(ctx, runID, agentv1.RunState_RUN_STATE_INTERRUPTED, func(*store.Run) *agentv1.RunError {
		return &agentv1.RunError{
			Code: int32(codes.Unavailable), Reason: agentv1.ErrorReason_ERROR_REASON_RUN_INTERRUPTED.Wire(),
			Message: "the run was cut off by a crash and could not be resumed (" + why + "); its history was repaired: send again, or send with resume to go on",
		}
	})
}

// end ends a run cut off by a crash in state, with the error errOf says,
// its history repaired.
func (rp *Replica) end(ctx context.Context, runID string, state agentv1.RunState, errOf func(*store.Run) *agentv1.RunError) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	r, err := rp.opts.Store.GetRun(ctx, runID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if r.Done() {
		return nil
	}
	h, _, err := rp.opts.Store.History(ctx, r.AgentID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if n := len(h); n > 0 && h[n-1].GetRole() == agentv1.Role_ROLE_ASSISTANT {
		var results []*agentv1.Part
		for _, p := range h[n-1].GetParts() {
			if c := p.GetToolCall(); c != nil {
				results = append(results, history.ToolResult(c.GetId(), c.GetName(),
					history.TextOutput(fmt.Sprintf(agent.CutText, c.GetName())), true))
			}
		}
		if len(results) > 0 {
			if _, err := rp.opts.Store.AppendHistory(ctx, r.AgentID, n, []*agentv1.Message{history.Tool(results...)}, nil, true); err != nil &&
				!errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	err = rp.opts.Store.FinishRun(ctx, runID, state, nil, errOf(r))
	if err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err == nil {
		rp.opts.Log.Info("run ended after a crash", "run", runID, "agent", r.AgentID, "replica", r.Owner, "state", state, "attempts", r.Attempts)
	}
	return nil
}

// takeUp deals with a run cut off by a crash: it is resumed here when its
// record asks for it and it has attempts left, ended failed when it has
// none (a run that keeps crashing its server), else ended interrupted.
func (rp *Replica) takeUp(ctx context.Context, r *store.Run) error {
	if r.Resume == nil || r.Compaction || rp.opts.Resume == nil {
		return rp.Recover(ctx, r.ID)
	}
	if r.Attempts >= rp.opts.ResumeAttempts {
		return rp.end(ctx, r.ID, agentv1.RunState_RUN_STATE_FAILED, func(r *store.Run) *agentv1.RunError {
			return &agentv1.RunError{
				Code: int32(codes.Aborted), Reason: agentv1.ErrorReason_ERROR_REASON_RESUME_LIMIT.Wire(),
				Message: fmt.Sprintf("the run was cut off by a crash %d times (resumed %d times, the server's -resume-attempts): "+
					"something in it may be crashing the server; its history was repaired: look at the server's log, then send again", r.Attempts+1, r.Attempts),
			}
		})
	}
	taken, err := rp.opts.Store.TakeOverRun(ctx, r.ID, rp.opts.ID, r.Attempts, rp.opts.LeaseTTL)
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return nil // another replica took it, or it ended meanwhile
	}
	if err != nil {
		return err
	}
	rp.opts.Log.Info("run resumed after a crash", "run", r.ID, "agent", r.AgentID, "attempt", taken.Attempts,
		"replica", rp.opts.ID, "cut_off_replica", r.Owner, "last_seq", taken.LastSeq)
	rp.resuming.add(r.ID)
	rp.opts.Resume(taken)
	return nil
}

// Resumed says that a run this replica took over has started (Started) or
// will not: the sweep may look at it again.
func (rp *Replica) Resumed(id string) { rp.resuming.remove(id) }

// idSet is a set of run ids.
type idSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *idSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	s.m[id] = true
}

func (s *idSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func (s *idSet) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// recoverPage is how many running runs RecoverStale reads at a time.
const recoverPage = 1000

// RecoverStale ends the runs cut off by a server that stopped: at start
// (startup) every run this replica owned, and on a store no other process
// uses every running run; always those whose lease expired. It goes
// through every running run, a page at a time.
func (rp *Replica) RecoverStale(ctx context.Context, startup bool) {
	q := store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_RUNNING, Limit: recoverPage}
	for {
		runs, err := rp.opts.Store.ListRuns(ctx, q)
		if err != nil {
			rp.opts.Log.Warn("listing running runs", "error", err)
			return
		}
		for _, r := range runs {
			stale := r.LeaseExpired && !rp.live.has(r.ID) && !rp.resuming.has(r.ID)
			if startup && (!rp.opts.Store.Shared() || r.Owner == rp.opts.ID) {
				stale = true
			}
			if stale {
				if err := rp.takeUp(ctx, r); err != nil {
					rp.opts.Log.Warn("recovering a run", "run", r.ID, "error", err)
				}
			}
		}
		if len(runs) < q.Limit || ctx.Err() != nil {
			return
		}
		last := runs[len(runs)-1]
		q.Before = &store.Cursor{Started: last.Started, ID: last.ID}
	}
}
