package server

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/store"
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

// watchers wake the requests waiting for something to change in the
// store: a run's events or end ("run:ID"), an agent's lease ("lease:ID").
type watchers struct {
	mu sync.Mutex
	m  map[string]map[*watcher]struct{}
}

// watcher is one waiting request. ch holds one wake-up at most: a waiter
// re-reads the store after each, so wake-ups may merge.
type watcher struct {
	key string
	ch  chan struct{}
	w   *watchers
}

func runKey(id string) string   { return "run:" + id }
func leaseKey(id string) string { return "lease:" + id }

func (w *watchers) watch(key string) *watcher {
	x := &watcher{key: key, ch: make(chan struct{}, 1), w: w}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]map[*watcher]struct{}{}
	}
	if w.m[key] == nil {
		w.m[key] = map[*watcher]struct{}{}
	}
	w.m[key][x] = struct{}{}
	return x
}

func (x *watcher) close() {
	x.w.mu.Lock()
	defer x.w.mu.Unlock()
	delete(x.w.m[x.key], x)
	if len(x.w.m[x.key]) == 0 {
		delete(x.w.m, x.key)
	}
}

func (w *watchers) wake(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for x := range w.m[key] {
		select {
		case x.ch <- struct{}{}:
		default:
		}
	}
}

func (w *watchers) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, set := range w.m {
		for x := range set {
			select {
			case x.ch <- struct{}{}:
			default:
			}
		}
	}
}

// onNotice handles a notice from the store: wake whoever waits for it,
// stop a run here, deliver a permission decision made elsewhere.
func (s *Server) onNotice(n store.Notice) {
	switch n.Kind {
	case store.NoticeEvents, store.NoticeRunEnded:
		s.watch.wake(runKey(n.RunID))
	case store.NoticeLease:
		s.watch.wake(leaseKey(n.AgentID))
	case store.NoticeResync:
		// Notices sent before now were not heard: whoever waits looks
		// again, and a decision stored elsewhere meanwhile is delivered.
		s.watch.wakeAll()
		for _, k := range s.perms.keys() {
			s.deliverStored(k.run, k.call)
		}
	case store.NoticeStop:
		if r := s.live.get(n.RunID); r != nil {
			cause := agent.ErrStopped
			if n.Text == causeReplaced {
				cause = agent.ErrReplaced
			}
			r.stop(cause)
		}
	case store.NoticePermission:
		if s.live.has(n.RunID) {
			s.deliverStored(n.RunID, n.Text)
		}
	}
}

// listen runs the store's notices into onNotice until ctx ends.
func (s *Server) listen(ctx context.Context) {
	for {
		err := s.store.Listen(ctx, s.onNotice)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("store notices interrupted; listening again", "error", err)
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return
		}
	}
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
