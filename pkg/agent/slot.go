package agent

import (
	"context"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// slot says who runs in a session: at most one active run, at most one
// replacing request waiting for the active run to end, and a queue of
// requests waiting their turn. It is guarded by Session.mu.
//
// A replacing request stops the active run and goes next, ahead of the
// queue; a newer replacing request supersedes one still waiting (the older
// fails as replaced: the latest instruction wins). A queued request waits
// for every run before it. A rejecting request runs only when nothing runs
// or waits.
type slot struct {
	active *run
	next   *waiter
	queue  []*waiter
	closed bool
}

// waiter is a request waiting for the slot. ready is closed when it is
// granted (run set) or failed (err set), under Session.mu.
type waiter struct {
	ctx   context.Context
	ready chan struct{}
	run   *run
	err   error
}

func (sl *slot) busy() bool { return sl.active != nil || sl.next != nil || len(sl.queue) > 0 }

func (sl *slot) waiting() int {
	n := len(sl.queue)
	if sl.next != nil {
		n++
	}
	return n
}

// grant makes the active run for a request with context ctx.
func (sl *slot) grant(ctx context.Context) *run {
	rctx, cancel := context.WithCancelCause(ctx)
	r := &run{id: newID("run_"), ctx: rctx, cancel: cancel, done: make(chan struct{})}
	sl.active = r
	return r
}

// handoff grants the slot to the next waiting request, if any.
func (sl *slot) handoff() {
	var w *waiter
	switch {
	case sl.next != nil:
		w, sl.next = sl.next, nil
	case len(sl.queue) > 0:
		w = sl.queue[0]
		sl.queue[0] = nil
		sl.queue = sl.queue[1:]
		if len(sl.queue) == 0 {
			sl.queue = nil
		}
	default:
		return
	}
	w.run = sl.grant(w.ctx)
	close(w.ready)
}

// remove takes a waiter that gave up out of the slot.
func (sl *slot) remove(w *waiter) {
	if sl.next == w {
		sl.next = nil
		return
	}
	for i, q := range sl.queue {
		if q == w {
			sl.queue = append(sl.queue[:i], sl.queue[i+1:]...)
			return
		}
	}
}

// close fails every waiting request and returns the active run.
func (sl *slot) close() *run {
	sl.closed = true
	if sl.next != nil {
		sl.next.fail(ErrClosed)
		sl.next = nil
	}
	for _, w := range sl.queue {
		w.fail(ErrClosed)
	}
	sl.queue = nil
	return sl.active
}

func (w *waiter) fail(cause error) {
	w.err = abortError(cause)
	close(w.ready)
}

// acquire waits until the request may run, as policy says, and returns its
// run, which the caller must end with release.
func (s *Session) acquire(ctx context.Context, policy agentv1.BusyPolicy) (*run, error) {
	if ctx.Err() != nil {
		return nil, aborted(ctx)
	}
	s.mu.Lock()
	sl := &s.slot
	if sl.closed {
		s.mu.Unlock()
		return nil, abortError(ErrClosed)
	}
	if !sl.busy() {
		r := sl.grant(ctx)
		s.mu.Unlock()
		return r, nil
	}
	w := &waiter{ctx: ctx, ready: make(chan struct{})}
	switch policy {
	case agentv1.BusyPolicy_BUSY_POLICY_REJECT:
		s.mu.Unlock()
		return nil, ErrBusy
	case agentv1.BusyPolicy_BUSY_POLICY_QUEUE:
		sl.queue = append(sl.queue, w)
	default:
		if sl.next != nil {
			sl.next.fail(ErrReplaced)
		}
		sl.next = w
		if sl.active != nil {
			sl.active.cancel(ErrReplaced)
		}
	}
	s.mu.Unlock()

	select {
	case <-w.ready:
		if w.err != nil {
			return nil, w.err
		}
		return w.run, nil
	case <-ctx.Done():
		s.mu.Lock()
		r := w.run
		if r == nil && w.err == nil {
			sl.remove(w)
		}
		s.mu.Unlock()
		if r != nil {
			s.release(r, nil, nil)
		}
		return nil, aborted(ctx)
	}
}

// release ends run r with its result or error: the journal learns how it
// ended, the slot goes to the next waiting request, then r's done channel
// closes.
func (s *Session) release(r *run, res *Result, err error) {
	r.cancel(context.Canceled)
	if r.begun {
		s.opts.Journal.End(r.jrun, res, err)
	}
	s.mu.Lock()
	if s.slot.active == r {
		s.slot.active = nil
		if !s.slot.closed {
			s.slot.handoff()
		}
	}
	s.mu.Unlock()
	close(r.done)
}
