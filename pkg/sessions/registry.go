// Package sessions holds the agents a replica has loaded in memory: which
// are loaded, which calls use them, which are dropped to stay within the
// operator's bounds (a count and a memory budget), what is kept of those
// dropped, and how many sends run, in all and per tenant.
//
// The store holds every agent; a loaded session is its working copy. A
// dropped agent is loaded again by its next call, as after a restart.
package sessions

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/agentcore/agentcore/pkg/redact"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Session is what the registry needs of a loaded agent.
type Session interface {
	comparable
	// Key is the agent's id in the store.
	Key() string
	// Footprint is what the session holds in memory, in bytes.
	Footprint() int64
	// Keys are the secrets of its config, for the redactor.
	Keys() []string
	// Keep is what to keep of the session when it is dropped.
	Keep() Dropped
	// CloseIdle closes the session if nothing runs or waits in it, and
	// reports whether it did.
	CloseIdle() bool
	// Close ends the session's runs and closes it, waiting until ctx ends.
	Close(ctx context.Context)
	// Stop stops the session's run, waiting until ctx ends.
	Stop(ctx context.Context)
}

// Dropped is what the registry keeps of an agent it dropped from memory:
// the config holding the secrets its client gave (none is stored, so a
// reload would lose them), their values for the redactor, and when the
// agent was created (an agent of the same id created since, on another
// replica, is another agent: it gets nothing of these).
type Dropped struct {
	Config  *agentv1.AgentConfig // nil: its client gave no secret
	Keys    []string
	Created time.Time
}

// Limits bound the sessions a registry holds; zero: no bound.
type Limits struct {
	MaxLoaded int
	MaxBytes  int64
}

// Observer counts the registry's drops and reloads.
type Observer interface {
	// AgentEvicted: an agent was dropped from memory, for cause "count" or
	// "memory".
	AgentEvicted(cause string)
	// AgentReloaded: an agent dropped from memory was loaded again.
	AgentReloaded()
}

// ErrClosing refuses a send or a load while the server shuts down.
var ErrClosing = errors.New("the server is shutting down")

// LimitError refuses a send over a limit of concurrent sends: the
// server's (Scope "server") or the tenant's ("tenant").
type LimitError struct {
	Scope   string
	Running int
}

func (e *LimitError) Error() string {
	if e.Scope == "tenant" {
		return fmt.Sprintf("%d sends of this tenant are running, its limit (limits.concurrent_runs); retry later", e.Running)
	}
	return fmt.Sprintf("%d sends are running, the server's limit (-max-runs); retry later", e.Running)
}

// Registry holds the sessions loaded here, by key, within its limits, and
// counts running sends, in all and per tenant. At most Limits.MaxLoaded
// sessions, whose costs sum to at most Limits.MaxBytes: beyond either, the
// least recently used sessions that no call uses (pinned) and nothing runs
// or waits in are dropped. A session in use is never dropped, so those in
// use may exceed the bounds.
type Registry[S Session] struct {
	mu      sync.RWMutex
	m       map[string]*entry[S]
	running int
	runs    map[string]int // per tenant
	closing bool

	limits Limits
	// lru holds the entries of m, most recently used first; bytes sums
	// their costs; dropped are the agents dropped from memory.
	lru     list.List
	bytes   int64
	dropped map[string]Dropped
	// room is what a byte of footprint costs the process (GCRoom).
	room    float64
	secrets *redact.Secrets
	obs     Observer
}

// entry is a session and, guarded by the registry's mu, the calls using it
// (it is not dropped while one does), its place in the order of use and
// what it costs as last counted.
type entry[S Session] struct {
	s    S
	pins int
	used *list.Element
	size int64
}

// New returns an empty registry within limits; the keys of the sessions it
// holds, and of those it dropped, are secrets of the redactor's.
func New[S Session](limits Limits, secrets *redact.Secrets, obs Observer) *Registry[S] {
	return &Registry[S]{m: map[string]*entry[S]{}, runs: map[string]int{}, dropped: map[string]Dropped{},
		limits: limits, room: GCRoom(), secrets: secrets, obs: obs}
}

// GCRoom is how much memory the process holds for each byte of live heap
// as the garbage collector runs it (GOGC=100: the heap grows to twice what
// the last collection left before the next one runs): what a session's
// footprint costs the process.
func GCRoom() float64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	pct := 100.0
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0 {
		pct = float64(s[0].Value.Uint64())
	}
	return 1 + pct/100
}

// Cost is what a session holds in memory as the memory budget counts it:
// its footprint with the garbage collector's room.
func (r *Registry[S]) Cost(s S) int64 {
	return int64(float64(s.Footprint()) * r.room)
}

// Cached returns the session loaded for key, if any.
func (r *Registry[S]) Cached(key string) (s S, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.m[key]; e != nil {
		return e.s, true
	}
	return s, false
}

// All returns the sessions loaded.
func (r *Registry[S]) All() []S {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]S, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, e.s)
	}
	return out
}

// Loaded returns how many sessions the registry holds and what they cost.
func (r *Registry[S]) Loaded() (n int, bytes int64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m), r.bytes
}

// ShuttingDown reports whether StopAll or CloseAll began.
func (r *Registry[S]) ShuttingDown() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.closing
}

// StartRun counts a send of the tenant against the server's limit and the
// tenant's (0: none); done undoes it. It returns ErrClosing or a
// *LimitError when the send may not start.
func (r *Registry[S]) StartRun(limit int, tenant string, tenantLimit int) (done func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, ErrClosing
	}
	if limit > 0 && r.running >= limit {
		return nil, &LimitError{Scope: "server", Running: r.running}
	}
	if n := r.runs[tenant]; tenantLimit > 0 && n >= tenantLimit {
		return nil, &LimitError{Scope: "tenant", Running: n}
	}
	r.running++
	r.runs[tenant]++
	return func() {
		r.mu.Lock()
		r.running--
		if r.runs[tenant]--; r.runs[tenant] <= 0 {
			delete(r.runs, tenant)
		}
		r.mu.Unlock()
	}, nil
}

// Pin marks s used by a call, and most recently used. It returns false
// when s is no longer the session registered for its agent (dropped or
// replaced meanwhile): look the agent up again.
func (r *Registry[S]) Pin(s S) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.m[s.Key()]
	if e == nil || e.s != s {
		return false
	}
	e.pins++
	r.lru.MoveToFront(e.used)
	return true
}

// Unpin ends a call's use of s: its cost is counted again and the sessions
// beyond the bounds are dropped.
func (r *Registry[S]) Unpin(s S) {
	size := r.Cost(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.m[s.Key()]; e != nil && e.s == s {
		e.pins--
		r.bytes += size - e.size
		e.size = size
	}
	r.evictLocked()
}

// Held returns the config with the secrets of the agent key, created at
// created, when the registry dropped it from memory holding some: a load
// puts them back.
func (r *Registry[S]) Held(key string, created time.Time) *agentv1.AgentConfig {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if d, ok := r.dropped[key]; ok && sameTime(d.Created, created) {
		return d.Config
	}
	return nil
}

// sameTime compares times as the stores keep them (microseconds).
func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

// Add registers s, just loaded from the store, pinned for its caller; its
// keys become known secrets. When another call registered the agent
// meanwhile, that session is pinned and returned instead. It returns
// ErrClosing when the registry is closing.
func (r *Registry[S]) Add(s S) (S, error) {
	size := r.Cost(s)
	r.mu.Lock()
	if other := r.m[s.Key()]; other != nil {
		other.pins++
		r.lru.MoveToFront(other.used)
		r.mu.Unlock()
		return other.s, nil
	}
	if r.closing {
		r.mu.Unlock()
		var none S
		return none, ErrClosing
	}
	d, reloaded := r.dropped[s.Key()]
	delete(r.dropped, s.Key())
	r.insertLocked(s, size).pins = 1
	r.evictLocked()
	r.mu.Unlock()
	r.secrets.Add(s.Keys()...)
	r.secrets.Remove(d.Keys...) // the session holds them now
	if reloaded {
		r.obs.AgentReloaded()
	}
	return s, nil
}

// Put registers a session just created, replacing what the registry held
// of an agent of the same key (one deleted elsewhere), and returns the
// session it replaced, if any, for the caller to close.
func (r *Registry[S]) Put(s S) (old S, replaced bool) {
	size := r.Cost(s)
	r.mu.Lock()
	defer r.mu.Unlock()
	old, replaced = r.removeLocked(s.Key())
	r.insertLocked(s, size)
	r.evictLocked()
	return old, replaced
}

// Remove forgets what the registry holds of the agent key (it was
// deleted): the secrets kept of it when dropped, and its session, if one
// was loaded, which it returns.
func (r *Registry[S]) Remove(key string) (S, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.removeLocked(key)
}

// Forget drops the agent key (it is gone): its session, closed, and the
// secrets kept of it, loaded or dropped.
func (r *Registry[S]) Forget(ctx context.Context, key string) {
	if s, ok := r.Remove(key); ok {
		s.Close(ctx)
		r.secrets.Remove(s.Keys()...)
	}
}

func (r *Registry[S]) insertLocked(s S, size int64) *entry[S] {
	e := &entry[S]{s: s, size: size}
	r.m[s.Key()] = e
	e.used = r.lru.PushFront(e)
	r.bytes += size
	return e
}

// removeLocked forgets the agent key: its session, or the secrets kept of it.
func (r *Registry[S]) removeLocked(key string) (s S, ok bool) {
	if d, ok := r.dropped[key]; ok {
		delete(r.dropped, key)
		r.secrets.Remove(d.Keys...)
	}
	e := r.m[key]
	if e == nil {
		return s, false
	}
	delete(r.m, key)
	r.lru.Remove(e.used)
	r.bytes -= e.size
	return e.s, true
}

func (r *Registry[S]) over() bool {
	return r.limits.MaxLoaded > 0 && len(r.m) > r.limits.MaxLoaded || r.limits.MaxBytes > 0 && r.bytes > r.limits.MaxBytes
}

// evictLocked drops the least recently used idle sessions while the
// registry holds more than its bounds allow.
func (r *Registry[S]) evictLocked() {
	for el := r.lru.Back(); el != nil && r.over(); {
		e, prev := el.Value.(*entry[S]), el.Prev()
		// Closed first: a call that got it before it was dropped fails
		// instead of running on a copy nobody keeps.
		if e.pins == 0 && e.s.CloseIdle() {
			cause := "memory"
			if r.limits.MaxLoaded > 0 && len(r.m) > r.limits.MaxLoaded {
				cause = "count"
			}
			key := e.s.Key()
			delete(r.m, key)
			r.lru.Remove(e.used)
			r.bytes -= e.size
			r.dropped[key] = e.s.Keep()
			r.obs.AgentEvicted(cause)
		}
		el = prev
	}
}

// StopAll marks the registry closing (new sends and loads fail with
// ErrClosing) and stops every session's run, waiting for each until ctx
// ends.
func (r *Registry[S]) StopAll(ctx context.Context) {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range r.All() {
		wg.Go(func() { s.Stop(ctx) })
	}
	wg.Wait()
}

// CloseAll marks the registry closing and closes every session, waiting
// for each until ctx ends.
func (r *Registry[S]) CloseAll(ctx context.Context) {
	r.mu.Lock()
	r.closing = true
	all := r.m
	r.m = map[string]*entry[S]{}
	r.lru.Init()
	r.bytes = 0
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range all {
		wg.Go(func() { e.s.Close(ctx) })
	}
	wg.Wait()
}
