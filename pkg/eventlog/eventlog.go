// Package eventlog writes the events of runs into the store in batches, on
// one goroutine: a run's events reach the store in order and without a gap,
// the events of concurrent runs share transactions, and a run's end goes
// with its last events. The stored log is what Attach replays and follows.
package eventlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// ErrEventsLost is the cause of a run whose events the store could not
// keep: it is stopped and ends failed (EVENTS_LOST), since no one could
// follow it (Attach) without a gap.
var ErrEventsLost = errors.New("the store could not keep this run's events")

// Bounds of the event log.
const (
	// maxBatch bounds the events of one store call.
	maxBatch = 2000
	// maxPendingEvents bounds the events waiting for the store (while it
	// fails, say): past it, the runs adding more lose their events.
	maxPendingEvents = 100_000
	// eventLinger is how long the log waits for more events before it
	// writes a batch that ends no run: fewer, larger writes, and a run's end
	// seldom waits behind a write in flight. A run's end goes at once.
	eventLinger = 2 * time.Millisecond
	// eventRetryFor is how long a batch the store refuses (not for its
	// content: it is unavailable) is retried, with back-off, before its
	// runs lose their events.
	eventRetryFor = 30 * time.Second
	// storeTimeout bounds one store call.
	storeTimeout = 30 * time.Second
)

// Log writes the events of runs to the store in batches, on one
// goroutine (Run): a run's events reach the store in order, the events of
// concurrent runs share transactions, and a run's end goes with its last
// events. A run whose events cannot be stored loses the later ones too,
// so that its stored log stays without a gap, and lost is told (the
// server stops the run).
type Log struct {
	st   store.Store
	log  hclog.Logger
	lost func(runID string, err error) // called without the lock held

	// flushing is held by whoever takes a batch and writes it (run, or a
	// run's end written on its own goroutine): batches are taken and
	// written one at a time, so that they reach the store in order.
	flushing sync.Mutex

	mu       sync.Mutex
	pending  []*agentv1.Event // guarded by mu
	spare    []*agentv1.Event // the last batch written, emptied, for the next one; guarded by mu
	ends     []*endWait       // guarded by mu
	dropped  map[string]error // runs that lost events, until their end; guarded by mu
	closed   bool             // guarded by mu
	wake     chan struct{}    // a new event, end or close: holds one wake-up
	retryMin time.Duration    // first back-off of a refused batch; guarded by mu
	retryFor time.Duration    // how long a refused batch is retried: eventRetryFor; guarded by mu

	// lingering: run waits in linger, which needs no wake-up for an event
	// unless it fills a batch (an end or a close still wakes it); guarded by mu.
	lingering bool
}

// endWait is a run's end queued behind its events; err is set when done
// closes.
type endWait struct {
	end  store.RunEnd
	done chan struct{}
	err  error
}

// New returns a log writing into st; lost is told of each run that lost
// events. Run writes the batches.
func New(st store.Store, log hclog.Logger, lost func(runID string, err error)) *Log {
	return &Log{st: st, log: log, lost: lost, dropped: map[string]error{}, wake: make(chan struct{}, 1),
		retryMin: 50 * time.Millisecond, retryFor: eventRetryFor}
}

// SetRetry sets how a batch the store refuses (it is unavailable) is
// retried: the first back-off, doubled at each try, and for how long before
// its runs lose their events (by default 50 ms and 30 s).
func (l *Log) SetRetry(first, limit time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.retryMin, l.retryFor = first, limit
}

func (l *Log) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Add queues an event for the store.
func (l *Log) Add(ev *agentv1.Event) {
	l.mu.Lock()
	if l.closed || l.dropped[ev.GetRunId()] != nil {
		l.mu.Unlock()
		return
	}
	if len(l.pending) >= maxPendingEvents {
		err := fmt.Errorf("%w: %d events were waiting for the store already", ErrEventsLost, len(l.pending))
		l.dropped[ev.GetRunId()] = err
		l.mu.Unlock()
		l.log.Warn("run events not stored", "run", ev.GetRunId(), "error", err)
		l.lost(ev.GetRunId(), err)
		return
	}
	l.pending = append(l.pending, ev)
	// A lingering log takes this event with the rest when its wait ends:
	// waking it for each (a send's every delta, a tool call's events)
	// only to find it calm costs a wake-up of its goroutine per event.
	quiet := l.lingering && len(l.pending) < maxBatch
	l.mu.Unlock()
	if !quiet {
		l.poke()
	}
}

// End stores a run's end after its queued events, in the same write, and
// returns once it is stored (or ctx ends). An error wrapping
// ErrEventsLost says the run lost events (its end was not stored).
//
// When no batch is being written, the caller writes the queue and its end
// itself, as Run would have: the run's end then costs no hand-off to the
// log's goroutine and back (two wake-ups on the path to the send's reply).
func (l *Log) End(ctx context.Context, e store.RunEnd) error {
	w := &endWait{end: e, done: make(chan struct{})}
	self := l.flushing.TryLock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if self {
			l.flushing.Unlock()
		}
		return store.ErrClosed
	}
	l.ends = append(l.ends, w)
	l.mu.Unlock()
	if self {
		l.flush()
		l.flushing.Unlock()
		return w.err // flush closed w.done
	}
	l.poke()
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run writes batches until Close, then writes what is left and returns.
func (l *Log) Run() {
	for {
		if l.calm() {
			l.linger()
		}
		l.flushing.Lock()
		wrote, closed := l.flush()
		l.flushing.Unlock()
		if !wrote {
			if closed {
				return
			}
			<-l.wake
		}
	}
}

// flush takes the queued events and ends and writes them; it reports
// whether there was anything to write, and whether the log is closed (as
// it was when the queue was taken). The caller holds l.flushing.
func (l *Log) flush() (wrote, closed bool) {
	l.mu.Lock()
	batch, ends, closed := l.pending, l.ends, l.closed
	l.pending, l.spare, l.ends = l.spare, nil, nil
	l.mu.Unlock()
	if len(batch) == 0 && len(ends) == 0 {
		return false, closed
	}
	all := batch
	for len(batch) > maxBatch {
		l.write(batch[:maxBatch], nil)
		batch = batch[maxBatch:]
	}
	l.write(batch, ends) // the ends after every event queued before them
	l.reuse(all)
	return true, closed
}

// maxSpare bounds the capacity of the batch slice kept for reuse: one grown
// by a burst is let go.
const maxSpare = 256

// reuse keeps a written batch's slice, emptied, to take the next events:
// no store keeps the slice (they copy what they keep), so each batch need
// not grow a new one from nothing.
func (l *Log) reuse(batch []*agentv1.Event) {
	if cap(batch) == 0 || cap(batch) > maxSpare {
		return
	}
	clear(batch) // the events go with the store's copies
	l.mu.Lock()
	l.spare = batch[:0]
	l.mu.Unlock()
}

// calm reports whether the queue holds events but no end, not a full
// batch, and the log is not closing: a batch that can wait a little.
func (l *Log) calm() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending) > 0 && len(l.pending) < maxBatch && len(l.ends) == 0 && !l.closed
}

// linger waits eventLinger for more events, less when an end comes or
// the events fill a batch.
func (l *Log) linger() {
	l.setLingering(true)
	defer l.setLingering(false)
	t := time.NewTimer(eventLinger)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return
		case <-l.wake:
			if !l.calm() {
				return
			}
		}
	}
}

func (l *Log) setLingering(on bool) {
	l.mu.Lock()
	l.lingering = on
	l.mu.Unlock()
}

// Close stops taking events and ends; Run returns once the queued ones
// are written.
func (l *Log) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.poke()
}

// write stores one batch of events and ends, sorted by run (stable: a
// run's events keep their order), and settles what it could not store.
func (l *Log) write(batch []*agentv1.Event, ends []*endWait) {
	byRun := func(a, b *agentv1.Event) int { return strings.Compare(a.GetRunId(), b.GetRunId()) }
	if !slices.IsSortedFunc(batch, byRun) { // a batch of one run is: most are
		slices.SortStableFunc(batch, byRun)
	}
	l.mu.Lock()
	if len(l.dropped) > 0 { // queued before their run lost events: the stored log stays without a gap
		kept := batch[:0:0]
		for _, ev := range batch {
			if l.dropped[ev.GetRunId()] == nil {
				kept = append(kept, ev)
			}
		}
		batch = kept
	}
	keep := ends[:0:0]
	for _, w := range ends {
		if lost := l.dropped[w.end.RunID]; lost != nil { // not stored: the run ends failed (EVENTS_LOST)
			w.err = lost
			delete(l.dropped, w.end.RunID)
			close(w.done)
		} else {
			keep = append(keep, w)
		}
	}
	ends = keep
	l.mu.Unlock()
	if len(batch) == 0 && len(ends) == 0 {
		return
	}
	err := l.appendRetrying(batch, ends)
	var ee *store.EventsError
	if err != nil && !errors.As(err, &ee) && errorsIsAny(err, store.ErrConflict, store.ErrNotFound) && len(runsOf(batch)) > 1 {
		// Refused for what it holds, with no run named: find the run at
		// fault by writing each run alone.
		for _, run := range runsOf(batch) {
			var evs []*agentv1.Event
			for _, ev := range batch {
				if ev.GetRunId() == run {
					evs = append(evs, ev)
				}
			}
			var mine []*endWait
			for _, w := range ends {
				if w.end.RunID == run {
					mine = append(mine, w)
				}
			}
			l.write(evs, mine)
		}
		var rest []*endWait
		for _, w := range ends {
			if !slices.Contains(runsOf(batch), w.end.RunID) {
				rest = append(rest, w)
			}
		}
		if len(rest) > 0 {
			l.write(nil, rest)
		}
		return
	}
	switch {
	case err == nil:
	case ee != nil:
		for id, why := range ee.Runs {
			l.drop(id, why)
		}
	default: // given up: every run of the batch lost these events
		for _, id := range runsOf(batch) {
			l.drop(id, err)
		}
	}
	l.mu.Lock()
	for _, w := range ends {
		if lost := l.dropped[w.end.RunID]; lost != nil {
			w.err = lost
		} else if err != nil && ee == nil && !slices.Contains(runsOf(batch), w.end.RunID) {
			w.err = err // an end alone, not stored
		}
		delete(l.dropped, w.end.RunID)
	}
	l.mu.Unlock()
	for _, w := range ends {
		close(w.done)
	}
}

// drop records that a run lost events (once) and tells lost.
func (l *Log) drop(run string, why error) {
	err := why
	if !errors.Is(why, ErrEventsLost) {
		err = fmt.Errorf("%w: %w", ErrEventsLost, why)
	}
	l.mu.Lock()
	first := l.dropped[run] == nil
	if first {
		l.dropped[run] = err
	}
	l.mu.Unlock()
	if first {
		l.log.Warn("run events not stored", "run", run, "error", why)
		l.lost(run, err)
	}
}

// appendRetrying stores a batch, retrying with back-off while the store
// fails for no reason of the batch's (unavailable), for retryFor.
func (l *Log) appendRetrying(batch []*agentv1.Event, ends []*endWait) error {
	es := make([]store.RunEnd, len(ends))
	for i, w := range ends {
		es[i] = w.end
	}
	l.mu.Lock()
	first, limit := l.retryMin, l.retryFor
	l.mu.Unlock()
	deadline := time.Now().Add(limit)
	for wait := first; ; wait = min(2*wait, 2*time.Second) {
		err := l.append(batch, es)
		var ee *store.EventsError
		if err == nil || errors.As(err, &ee) || errorsIsAny(err, store.ErrConflict, store.ErrNotFound, store.ErrClosed) ||
			time.Now().Add(wait).After(deadline) {
			return err
		}
		l.log.Debug("events not stored yet; retrying", "events", len(batch), "error", err, "in", wait)
		time.Sleep(wait)
	}
}

func (l *Log) append(batch []*agentv1.Event, ends []store.RunEnd) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return l.st.AppendEvents(ctx, batch, ends...)
}

// runsOf lists the runs of a batch sorted by run, in order.
func runsOf(batch []*agentv1.Event) []string {
	var out []string
	for _, ev := range batch {
		if n := len(out); n == 0 || out[n-1] != ev.GetRunId() {
			out = append(out, ev.GetRunId())
		}
	}
	return out
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
