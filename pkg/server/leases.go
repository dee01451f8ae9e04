package server

import (
	"context"
	"errors"
	"sort"
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

// maintain renews this replica's leases, ends the runs of replicas that
// died and sweeps old events, until ctx ends.
func (s *Server) maintain(ctx context.Context) {
	renew := time.NewTicker(s.cfg.LeaseTTL / 3)
	defer renew.Stop()
	sweep := time.NewTicker(s.cfg.LeaseTTL / 2)
	defer sweep.Stop()
	retention := time.NewTicker(min(max(s.cfg.EventRetention/4, time.Second), 10*time.Minute))
	defer retention.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			s.renewLeases(ctx)
		case <-sweep.C:
			s.recoverStale(ctx, false)
		case <-retention.C:
			s.sweepEvents(ctx)
		}
	}
}

// renewLeases extends this replica's leases; a local run whose lease was
// not renewed lost it (another replica ended it) and stops.
func (s *Server) renewLeases(ctx context.Context) {
	before := time.Now()
	ids, err := s.store.RenewLeases(ctx, s.cfg.ReplicaID, s.cfg.LeaseTTL)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("renewing leases", "error", err)
		}
		return
	}
	for _, r := range s.live.all() {
		if r.started.Before(before) && !containsSorted(ids, r.id) {
			s.log.Warn("run lost its lease", "run", r.id, "agent", r.agentID)
			r.stop(errLeaseLost)
		}
	}
}

func containsSorted(ids []string, id string) bool {
	i := sort.SearchStrings(ids, id)
	return i < len(ids) && ids[i] == id
}

// sweepEvents deletes the events of runs that ended before the retention.
func (s *Server) sweepEvents(ctx context.Context) {
	n, err := s.store.DeleteEvents(ctx, time.Now().Add(-s.cfg.EventRetention))
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("sweeping old events", "error", err)
	case n > 0:
		s.log.Debug("old events swept", "events", n)
	}
}

// errLeaseLost is the cause of a run stopped because its lease was taken
// over by another replica (this one failed to renew it in time).
var errLeaseLost = errors.New("the run lost its lease: another replica ended it as interrupted")

// leasePoll bounds how long a send waiting for another replica's run
// sleeps between looks at the lease (notices usually wake it sooner).
const leasePoll = 250 * time.Millisecond

// eventsLost stops a run here whose events the store could not keep.
func (s *Server) eventsLost(runID string, err error) {
	if r := s.live.get(runID); r != nil {
		r.stop(err)
	}
}
