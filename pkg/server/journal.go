package server

import (
	"context"
	"errors"
	"time"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/hold"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/eventlog"
	"github.com/agentcore/agentcore/pkg/replica"
	"github.com/agentcore/agentcore/pkg/runhooks"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// storeTimeout bounds the store writes that must happen even when the
// request that caused them is gone (a run's end, a recovery).
const storeTimeout = 30 * time.Second

// runOptions are what a send tells the journal beside the engine's JournalRun.
type runOptions struct {
	onDisconnect agentv1.OnDisconnect
	// resume is the run's resume record (store.Run.Resume); nil: the run
	// ends interrupted when a crash cuts it off.
	resume []byte
	// tree places the run in its run tree and holds what it passes to the
	// child runs it starts.
	tree treeOptions
	// hook is where the run's webhooks go; nil: none.
	hook *runhooks.Target
	user string // the user identity the run acts for (store.Run.User)
}

type runOptionsKey struct{}

func withRunOptions(ctx context.Context, o runOptions) context.Context {
	return context.WithValue(ctx, runOptionsKey{}, o)
}

func runOptionsFrom(ctx context.Context) runOptions {
	o, _ := ctx.Value(runOptionsKey{}).(runOptions)
	return o
}

// journal is a session's agent.Journal: the store, the lease across
// replicas, this replica's table of live runs.
type journal struct {
	srv  *Server
	sess *session
	// writes holds the history writes that need not be durable yet and keeps
	// them in order.
	writes hold.Writes
	// resumable says the current run is resumed after a crash (it has a
	// resume record); set by Begin (a session's runs begin and end one at
	// a time).
	resumable bool
	// kept are the writes the run kept back once the server's shutdown
	// began (Append); End writes or drops them.
	kept []keptWrite
	// hook is the current run's webhook, set by Begin; nil: none.
	hook *runhooks.Target
}

var (
	_ agent.Journal         = (*journal)(nil)
	_ agent.JournalReleaser = (*journal)(nil)
)

// Begin takes the agent's lease for the run, waiting, stopping the holder
// or refusing as the busy policy says, and hands back the stored state when
// it changed since this replica saw it.
func (j *journal) Begin(ctx context.Context, info agent.JournalRun) (*agent.Snapshot, error) {
	s, sess := j.srv, j.sess
	if info.Attempt > 0 {
		return j.beginResumed(ctx, info)
	}
	ro := runOptionsFrom(ctx)
	j.resumable, j.hook = ro.resume != nil, ro.hook
	run := &store.Run{ID: info.ID, AgentID: sess.id, Owner: s.cfg.ReplicaID, Compaction: info.Compaction,
		OnDisconnect: ro.onDisconnect, Resume: ro.resume,
		ParentRunID: ro.tree.parent, RootRunID: ro.tree.root, Depth: ro.tree.depth, ToolCallID: ro.tree.toolCall, User: ro.user}
	w := s.replica.WatchLease(sess.id)
	defer w.Close()
	stopped := ""
	for {
		err := s.store.StartRun(ctx, run, s.cfg.LeaseTTL)
		if err == nil {
			break
		}
		var be *store.BusyError
		if !errors.As(err, &be) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		switch {
		case be.Expired:
			if err := s.replica.Recover(ctx, be.RunID); err != nil {
				return nil, err
			}
			continue
		case info.Busy == agentv1.BusyPolicy_BUSY_POLICY_REJECT:
			return nil, agent.ErrBusy
		case info.Busy == agentv1.BusyPolicy_BUSY_POLICY_QUEUE:
		default: // replace: the latest instruction wins, on any replica
			if stopped != be.RunID {
				if err := s.store.Notify(ctx, store.Notice{Kind: store.NoticeStop, RunID: be.RunID, Text: replica.CauseReplaced}); err != nil {
					return nil, err
				}
				stopped = be.RunID
			}
		}
		select {
		case <-w.C():
		case <-time.After(leasePoll):
			stopped = "" // the notice may have been lost: say it again (see stopRemote)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.replica.Started(info.ID, sess.id, info.Stop)
	snap, err := j.sync(ctx, run.AgentVersion)
	if err != nil {
		s.replica.Forget(info.ID)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		_ = s.store.FinishRun(fctx, info.ID, agentv1.RunState_RUN_STATE_FAILED, nil, apierr.SyncFailedError(err))
		return nil, err
	}
	return snap, nil
}

// beginResumed begins a run this replica took over after a crash (it holds
// its lease already) with the agent as the store has it.
func (j *journal) beginResumed(ctx context.Context, info agent.JournalRun) (*agent.Snapshot, error) {
	s, sess := j.srv, j.sess
	j.resumable, j.hook = true, runOptionsFrom(ctx).hook
	v, err := s.store.AgentVersion(ctx, sess.id)
	if err != nil {
		return nil, err
	}
	s.replica.Started(info.ID, sess.id, info.Stop)
	snap, err := j.sync(ctx, v)
	if err != nil {
		s.replica.Forget(info.ID)
		return nil, err
	}
	return snap, nil
}

// sync returns the stored history and usage when another process changed
// the agent since this one last wrote or read it: when the agent's version
// as StartRun saw it is not the session's.
func (j *journal) sync(ctx context.Context, version int64) (*agent.Snapshot, error) {
	sess := j.sess
	sess.mu.Lock()
	same := sess.version == version
	sess.mu.Unlock()
	if same {
		return nil, nil
	}
	rec, err := j.srv.store.GetAgent(ctx, sess.id)
	if err != nil {
		return nil, err
	}
	h, v, err := j.srv.store.History(ctx, sess.id)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	sess.version = v
	sess.mu.Unlock()
	return &agent.Snapshot{History: h, Usage: rec.Usage}, nil
}

// Append writes a step's messages and the usage totals. A write that
// need not be durable (the input, a response with tool calls) is held a
// moment (hold.Delay) so that the step's next write takes it along, one
// statement for the step, and otherwise goes on in the background while
// the run goes on (the model request, the tool calls); the durable write
// ending a step waits for what went before it, in order. A failed write
// fails the run at the journal's next call; the session then reloads from
// the store when idle.
//
// A run that may be left for the next start to resume keeps its writes
// back once the server's shutdown began: if it is left (End), the results
// of the calls the shutdown stopped are not results (the tool was cut off,
// as by a crash), and the resumed run runs such a call again or reports it
// (cut_calls); if it ends, End writes them.
func (j *journal) Append(ctx context.Context, runID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error {
	if j.resumable && j.srv.agents.ShuttingDown() {
		j.kept = append(j.kept, keptWrite{at: at, msgs: msgs, usage: usage})
		return nil
	}
	return j.writes.Append(j.write, at, msgs, usage, durable)
}

// keptWrite is a write a resumable run kept back during the shutdown.
type keptWrite struct {
	at    int
	msgs  []*agentv1.Message
	usage *agentv1.Usage
}

// Release stores the write held back, before the run's tools run.
func (j *journal) Release() error { return j.writes.Release(j.write) }

// write stores messages at position at, durably or not.
func (j *journal) write(at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error {
	if durable {
		j.srv.faults.BeforeStepWrite() // test-only: a crash between a step's end and its journal write
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	v, err := j.srv.store.AppendHistory(ctx, j.sess.id, at, msgs, usage, durable)
	if err != nil {
		j.sess.stale() // the session's memory took the messages: reload it
		return err
	}
	j.sess.wrote(v)
	return nil
}

// Replace writes a history a send replaced.
func (j *journal) Replace(ctx context.Context, runID string, msgs []*agentv1.Message) error {
	if err := j.writes.Flush(j.write); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	v, err := j.srv.store.ReplaceHistory(ctx, j.sess.id, msgs)
	if err != nil {
		return err
	}
	j.sess.wrote(v)
	return nil
}

// End stores the run's end with its last events, in one write, and so
// releases the agent's lease. A run whose events the store could not keep
// ends failed (EVENTS_LOST).
func (j *journal) End(info agent.JournalRun, res *agent.Result, err error) {
	s := j.srv
	state, result, rerr := s.outcome(res, err)
	left := state == agentv1.RunState_RUN_STATE_INTERRUPTED && j.resumable
	kept := j.kept
	j.kept = nil
	for _, w := range kept {
		if left {
			break // cut off: the resumed run takes its calls up again
		}
		if werr := j.writes.Append(j.write, w.at, w.msgs, w.usage, true); werr != nil {
			s.log.Error("a history write of the run failed", "run", info.ID, "agent", j.sess.id, "error", werr)
			break
		}
	}
	if werr := j.writes.Flush(j.write); werr != nil {
		s.log.Error("the run's last history write failed", "run", info.ID, "agent", j.sess.id, "error", werr)
	}
	ended := s.replica.Ending(info.ID)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if left {
		// Stopped by this server's shutdown: the run stays running, for
		// this server's next start (or another replica, once its lease
		// expires) to resume; its events go with the log's last writes.
		s.log.Info("run left for the next start to resume", "run", info.ID, "agent", j.sess.id)
		ended()
		return
	}
	if errors.Is(err, replica.ErrLeaseLost) {
		// Another replica took the run over: its end is theirs to write.
		ended()
		return
	}
	end := store.RunEnd{RunID: info.ID, State: state, Result: result, Error: rerr}
	if eerr := s.events.End(ctx, end); eerr != nil {
		if errors.Is(eerr, eventlog.ErrEventsLost) {
			end = store.RunEnd{RunID: info.ID, State: agentv1.RunState_RUN_STATE_FAILED, Error: apierr.EventsLostError(eerr)}
		}
		if ferr := s.store.FinishRun(ctx, end.RunID, end.State, end.Result, end.Error); ferr != nil &&
			!errors.Is(ferr, store.ErrConflict) && !errors.Is(ferr, store.ErrNotFound) {
			s.log.Error("run end not stored", "run", info.ID, "agent", j.sess.id, "error", ferr)
		}
	}
	ended()
	s.hooks.Ended(j.hook, end, s.store.GetRun)
}

// outcome is the stored end of a run that returned res or err.
func (s *Server) outcome(res *agent.Result, err error) (agentv1.RunState, *agentv1.RunResultEvent, *agentv1.RunError) {
	switch {
	case err != nil:
		return apierr.RunState(err, s.agents.ShuttingDown()), nil, apierr.RunError(s.secrets.RedactStatus(s.sendError(err)))
	case res == nil:
		return agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil
	}
	return agentv1.RunState_RUN_STATE_SUCCEEDED, res.Proto(), nil
}

// leasePoll bounds how long a send waiting for another replica's run
// sleeps between looks at the lease (notices usually wake it sooner).
const leasePoll = 250 * time.Millisecond
