// Package hold holds back a session's history writes that need not be
// durable yet, for an agent.Journal (agent.JournalReleaser): held a moment
// to be joined by the next, then sent in order.
package hold

import (
	"sync"
	"time"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Delay is how long a history write that need not be durable yet waits
// for the step's next write to go with it: a step whose model answers
// within it, and whose calls run no tool (unknown tools, a stop), costs one
// statement (one transaction, one wait for the disk). The write held goes
// at once when a tool is about to run (JournalReleaser), and the tool waits
// for it, so that a crash while it runs finds the call; else after
// Delay, while the step goes on.
const Delay = 5 * time.Millisecond

// WriteFunc stores messages at position at of the history, durably or not.
type WriteFunc func(at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error

// Writes orders a session's history writes for a Journal that holds
// back the writes that need not be durable yet (JournalReleaser): they are
// held (Delay) to be joined by the next, then sent in the background;
// each write waits for the one before it. Its methods are called one at a
// time, by the run; the timer that sends a held write runs beside them.
// The zero value is ready.
type Writes struct {
	mu       sync.Mutex
	held     *heldWrite    // not sent yet; guarded by mu
	inflight *pendingWrite // the last write sent; guarded by mu
	failed   error         // a write failed: every call fails until flush; guarded by mu
}

// heldWrite is messages not sent yet, at position at, with the usage
// totals after them.
type heldWrite struct {
	at    int
	msgs  []*agentv1.Message
	usage *agentv1.Usage
	timer *time.Timer
}

// pendingWrite is a history write in flight; done closes when err is set.
type pendingWrite struct {
	done chan struct{}
	err  error
}

// Append writes msgs at position at: held when not durable, else at once
// with whatever is held before them, after the write in flight. Once a
// write failed, it and every later call return its error (until Flush).
func (w *Writes) Append(write WriteFunc, at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error {
	w.mu.Lock()
	if w.failed != nil {
		defer w.mu.Unlock()
		return w.failed
	}
	if h := w.held; h != nil {
		h.timer.Stop()
		w.held = nil
		if h.at+len(h.msgs) == at {
			at, msgs = h.at, append(h.msgs[:len(h.msgs):len(h.msgs)], msgs...)
		} else { // not a continuation (cannot happen: the history grows by these writes): send it first
			w.sendLocked(write, h)
		}
	}
	prev := w.inflight
	if prev != nil && prev.finished() {
		w.inflight = nil
		if prev.err != nil {
			w.failed = prev.err
			w.mu.Unlock()
			return prev.err
		}
		prev = nil
	}
	if !durable {
		h := &heldWrite{at: at, msgs: msgs, usage: usage}
		h.timer = time.AfterFunc(Delay, func() { w.expire(write, h) })
		w.held = h
		w.mu.Unlock()
		return nil
	}
	w.inflight = nil
	w.mu.Unlock()
	if prev != nil {
		if <-prev.done; prev.err != nil {
			w.fail(prev.err)
			return prev.err
		}
	}
	if err := write(at, msgs, usage, true); err != nil {
		w.fail(err)
		return err
	}
	return nil
}

func (w *Writes) fail(err error) {
	w.mu.Lock()
	w.failed = err
	w.mu.Unlock()
}

// expire sends h when its time is up, unless a later write took it.
func (w *Writes) expire(write WriteFunc, h *heldWrite) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held != h {
		return
	}
	w.held = nil
	w.sendLocked(write, h)
}

// Release sends what is held now and waits until every write sent is
// stored: the run's tools are about to run, and a call must be on record
// before it has any effect. A failed write is returned, and by every later
// call until Flush.
func (w *Writes) Release(write WriteFunc) error {
	w.mu.Lock()
	if w.failed != nil {
		defer w.mu.Unlock()
		return w.failed
	}
	if h := w.held; h != nil {
		h.timer.Stop()
		w.held = nil
		w.sendLocked(write, h)
	}
	p := w.inflight
	w.mu.Unlock()
	if p == nil {
		return nil
	}
	if <-p.done; p.err != nil {
		w.fail(p.err)
		return p.err
	}
	return nil
}

// sendLocked starts writing h after the write in flight.
func (w *Writes) sendLocked(write WriteFunc, h *heldWrite) {
	prev := w.inflight
	p := &pendingWrite{done: make(chan struct{})}
	w.inflight = p
	go func() { // waited for by the next write, or flush
		defer close(p.done)
		if prev != nil {
			if <-prev.done; prev.err != nil {
				p.err = prev.err // the history did not move: this write would conflict
				return
			}
		}
		p.err = write(h.at, h.msgs, h.usage, false)
	}()
}

// Flush sends what is held and waits for every write; it returns the
// first error, and the writes start afresh (the next run's).
func (w *Writes) Flush(write WriteFunc) error {
	w.mu.Lock()
	h, prev, failed := w.held, w.inflight, w.failed
	w.held, w.inflight, w.failed = nil, nil, nil
	if h != nil {
		h.timer.Stop()
	}
	w.mu.Unlock()
	if failed != nil {
		if prev != nil {
			<-prev.done
		}
		return failed
	}
	if prev != nil {
		if <-prev.done; prev.err != nil {
			return prev.err
		}
	}
	if h == nil {
		return nil
	}
	return write(h.at, h.msgs, h.usage, false)
}

// finished reports whether the write ended.
func (p *pendingWrite) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
