package server

import (
	"context"
	"sync"
	"time"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/store"
)

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

// Stop causes sent through the store.
const (
	causeStopped  = "stopped"
	causeReplaced = "replaced"
)
