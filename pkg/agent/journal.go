package agent

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Journal makes a session durable: the session tells it about every run
// and every change a run makes to the history, in order, on the run's
// goroutine, and writes a change to its own memory only once the journal
// took it. pkg/server keeps one per agent over pkg/store; without one
// (Options.Journal nil) a session lives in memory only.
type Journal interface {
	// Begin is called when a send or compaction got the session's slot,
	// before it reads the history. It claims the agent for the run (other
	// processes sharing the journal may be running it: run.Busy says what
	// to do then; ErrBusy rejects) and returns the agent's state when it
	// changed elsewhere since the session last saw it (nil: unchanged). An
	// error ends the run before it starts; End is not called.
	Begin(ctx context.Context, run JournalRun) (*Snapshot, error)
	// Append records msgs appended to the history at index at, with the
	// session's usage totals after them, atomically. durable marks the
	// last write of a step (its tool results, an answer without calls, a
	// summary): the journal makes it durable before it returns; the writes
	// before it in the step (the input, a response with tool calls) may
	// become durable with it, and may still be in flight when Append
	// returns: their error then comes from the next Append, Replace or
	// End. An error fails the run.
	Append(ctx context.Context, runID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error
	// Replace records a history replaced by a send (SendOptions.History).
	Replace(ctx context.Context, runID string, msgs []*agentv1.Message) error
	// End is called once a run that began has ended, with its result or
	// error, before the session's slot passes to the next request.
	End(run JournalRun, res *Result, err error)
}

// JournalReleaser is a Journal that may hold back the writes that need not
// be durable yet (Append) to join them to the next: a run calls Release
// before it runs a tool (or asks permission for one), which returns once
// every write held or in flight is stored, so that a crash while the tool
// works finds the call. An error means the calls are not on record: the
// run runs none of them and fails.
type JournalReleaser interface {
	Release() error
}

// JournalRun describes a run to the journal.
type JournalRun struct {
	// ID is the run's id, as in its events.
	ID string
	// Compaction marks a manual compaction (Compact).
	Compaction bool
	// Busy is the send's busy policy (replace for a compaction).
	Busy agentv1.BusyPolicy
	// Attempt is 0 for a new run; more for a run resumed after a crash
	// (SendOptions.Continue), which the journal holds already: Begin
	// starts no new run then.
	Attempt int
	// Stop cancels the run with a cause (ErrStopped, ErrReplaced…), e.g.
	// when another process asks for it.
	Stop func(cause error)
}

// Snapshot is an agent's state as the journal holds it.
type Snapshot struct {
	History []*agentv1.Message
	Usage   *agentv1.Usage
}

// ErrNothingToResume is returned by a Send with Resume when the history
// has no turn waiting for the model: it is empty or ends with the model's
// answer.
var ErrNothingToResume = errors.New("nothing to resume: the history is empty or ends with the model's answer; send new input instead")

// begin tells the journal the run started and takes the state it returns.
func (r *run) begin(info JournalRun) error {
	j := r.session.opts.Journal
	if j == nil {
		return nil
	}
	info.ID, info.Stop = r.id, r.cancel
	snap, err := j.Begin(r.ctx, info)
	if err != nil {
		if r.ctx.Err() != nil && !errors.Is(err, ErrBusy) {
			return aborted(r.ctx)
		}
		return err
	}
	r.jrun, r.begun = info, true
	if snap != nil {
		r.session.mu.Lock()
		r.session.setHistoryLocked(snap.History)
		if snap.Usage != nil {
			r.session.usage = cloneUsage(snap.Usage)
		}
		r.session.mu.Unlock()
	}
	return nil
}

// releaseJournal stores the writes the journal holds back, before tools run.
func (r *run) releaseJournal() error {
	if j, ok := r.session.opts.Journal.(JournalReleaser); ok && r.begun {
		return j.Release()
	}
	return nil
}

// commit appends msgs to the history and adds usage to the run's and the
// session's totals, through the journal first when there is one; durable
// says the write ends a step (see Journal.Append). The
// journal write goes on when the run was stopped: a stopped round's tool
// results are part of a well-formed history.
func (r *run) commit(durable bool, usage *agentv1.Usage, msgs ...*agentv1.Message) error {
	return r.commitPriced(durable, usage, r.price, msgs...)
}

// commitPriced is commit with usage priced at price, the price of the
// model that spent it (a fallback's is its own).
func (r *run) commitPriced(durable bool, usage *agentv1.Usage, price Price, msgs ...*agentv1.Message) error {
	s := r.session
	s.mu.Lock()
	at := len(s.history)
	total := cloneUsage(s.usage)
	s.mu.Unlock()
	if usage != nil {
		addUsage(total, usage)
	}
	if j := s.opts.Journal; j != nil && r.begun {
		if err := j.Append(context.WithoutCancel(r.ctx), r.id, at, msgs, total, durable); err != nil {
			return &JournalError{Err: err}
		}
	}
	s.mu.Lock()
	s.history = append(s.history, msgs...)
	s.historyBytes += historyFootprint(msgs)
	if usage != nil {
		addUsage(s.usage, usage)
	}
	s.mu.Unlock()
	if usage != nil && r.usage != nil {
		addUsage(r.usage, usage)
	}
	if usage != nil && r.budget != nil {
		r.budget.spent(usage, price)
	}
	return nil
}

// replace replaces the history for a send, through the journal first.
func (r *run) replace(msgs []*agentv1.Message) error {
	if j := r.session.opts.Journal; j != nil && r.begun {
		if err := j.Replace(context.WithoutCancel(r.ctx), r.id, msgs); err != nil {
			return &JournalError{Err: err}
		}
	}
	r.session.mu.Lock()
	r.session.setHistoryLocked(msgs)
	r.session.mu.Unlock()
	return nil
}

// JournalError is a run's failure to record a change in the journal (the
// store is unreachable, or another process changed the history): the run
// stops there, its history in memory as the journal holds it.
type JournalError struct{ Err error }

func (e *JournalError) Error() string { return "the history could not be saved: " + e.Err.Error() }

func (e *JournalError) Unwrap() error { return e.Err }

func cloneUsage(u *agentv1.Usage) *agentv1.Usage {
	if u == nil {
		return &agentv1.Usage{}
	}
	return proto.Clone(u).(*agentv1.Usage)
}
