package replica

import "sync"

// watchers wake the requests waiting for something to change in the
// store: a run's events or end ("run:ID"), an agent's lease ("lease:ID").
type watchers struct {
	mu sync.Mutex
	m  map[string]map[*Watcher]struct{}
}

// Watcher is one waiting request. Its channel (C) holds one wake-up at
// most: a waiter re-reads the store after each, so wake-ups may merge.
type Watcher struct {
	key string
	ch  chan struct{}
	w   *watchers
}

func runKey(id string) string   { return "run:" + id }
func leaseKey(id string) string { return "lease:" + id }

// WatchRun returns a watcher woken when a run's events or end may have
// changed in the store; close it when done.
func (rp *Replica) WatchRun(id string) *Watcher { return rp.watch.watch(runKey(id)) }

// WatchLease returns a watcher woken when an agent's lease may have been
// released; close it when done.
func (rp *Replica) WatchLease(agentID string) *Watcher { return rp.watch.watch(leaseKey(agentID)) }

func (w *watchers) watch(key string) *Watcher {
	x := &Watcher{key: key, ch: make(chan struct{}, 1), w: w}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]map[*Watcher]struct{}{}
	}
	if w.m[key] == nil {
		w.m[key] = map[*Watcher]struct{}{}
	}
	w.m[key][x] = struct{}{}
	return x
}

// C is the channel that gets the wake-ups.
func (x *Watcher) C() <-chan struct{} { return x.ch }

// Close stops the wake-ups.
func (x *Watcher) Close() {
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
