package replica

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// interruptedText answers, in the repaired history, a call cut off by a
// server that stopped.
const interruptedText = "The server stopped (restart or crash) before this call of %s finished: it may or may not have run, and its result is lost."

// Recover ends a run whose server is gone: its history is repaired (every
// call of the last model response without a result gets an error result)
// and it becomes interrupted, which releases the agent's lease. Two replicas
// may try at once: the store lets one of each write through.
func (rp *Replica) Recover(ctx context.Context, runID string) error {
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
					history.TextOutput(fmt.Sprintf(interruptedText, c.GetName())), true))
			}
		}
		if len(results) > 0 {
			if _, err := rp.opts.Store.AppendHistory(ctx, r.AgentID, n, []*agentv1.Message{history.Tool(results...)}, nil, true); err != nil &&
				!errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	err = rp.opts.Store.FinishRun(ctx, runID, agentv1.RunState_RUN_STATE_INTERRUPTED, nil, &agentv1.RunError{
		Code: int32(codes.Unavailable), Reason: agentv1.ErrorReason_ERROR_REASON_RUN_INTERRUPTED.Wire(),
		Message: "the server running it (replica " + r.Owner + ") stopped before the run ended; its history was repaired: send again, or send with resume to go on",
	})
	if err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err == nil {
		rp.opts.Log.Info("run interrupted", "run", runID, "agent", r.AgentID, "replica", r.Owner)
	}
	return nil
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
			stale := r.LeaseExpired && !rp.live.has(r.ID)
			if startup && (!rp.opts.Store.Shared() || r.Owner == rp.opts.ID) {
				stale = true
			}
			if stale {
				if err := rp.Recover(ctx, r.ID); err != nil {
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
