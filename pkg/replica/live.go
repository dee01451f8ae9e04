package replica

import (
	"sync"
	"time"
)

// liveRun is a run executing on this replica, between its journal's Begin
// and End.
type liveRun struct {
	id, agentID string
	stop        func(cause error) // cancels the run with a cause
	started     time.Time
	done        chan struct{} // closed by End
}

// liveRuns holds the runs executing here, by id.
type liveRuns struct {
	mu sync.Mutex
	m  map[string]*liveRun
}

func (l *liveRuns) add(r *liveRun) {
	r.done = make(chan struct{})
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*liveRun{}
	}
	l.m[r.id] = r
}

func (l *liveRuns) remove(id string) *liveRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.m[id]
	delete(l.m, id)
	return r
}

func (l *liveRuns) get(id string) *liveRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[id]
}

func (l *liveRuns) has(id string) bool { return l.get(id) != nil }

func (l *liveRuns) all() []*liveRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*liveRun, 0, len(l.m))
	for _, r := range l.m {
		out = append(out, r)
	}
	return out
}

// Started records a run that began here (its journal's Begin took the
// lease); stop cancels it with a cause.
func (rp *Replica) Started(id, agentID string, stop func(cause error)) {
	rp.live.add(&liveRun{id: id, agentID: agentID, stop: stop, started: time.Now()})
}

// Forget drops a run that took its lease but did not start after all.
func (rp *Replica) Forget(id string) { rp.live.remove(id) }

// Ending takes a run that is ending off the runs executing here; the
// function it returns, called once the run's end is stored, tells whoever
// waits for it (Stop).
func (rp *Replica) Ending(id string) (ended func()) {
	r := rp.live.remove(id)
	return func() {
		if r != nil {
			close(r.done)
		}
	}
}

// Running reports whether a run executes here.
func (rp *Replica) Running(id string) bool { return rp.live.has(id) }

// Stop cancels a run executing here with cause, and returns a channel
// closed once it has ended; nil when the run does not execute here.
func (rp *Replica) Stop(id string, cause error) <-chan struct{} {
	r := rp.live.get(id)
	if r == nil {
		return nil
	}
	r.stop(cause)
	return r.done
}
