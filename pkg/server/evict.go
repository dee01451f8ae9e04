package server

import (
	"runtime/metrics"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The registry holds at most maxLoaded sessions, whose footprints sum to at
// most maxBytes: beyond either, the least recently used sessions that no
// call uses (pinned) and nothing runs or waits in are dropped; the store
// holds their agents, and the next call loads them again, as after a
// restart. A session in use is never dropped, so those in use may exceed
// the bounds.

// sessionBytes is what the server keeps beside a session's engine: the
// session, its journal, its profile expander and its place in the
// registry (TestAgentCostMatchesHeap: an agent with an empty history takes
// about 1.2 KiB of heap in all, engine included).
const sessionBytes = 256

// dropped is what the registry keeps of an agent it dropped from memory:
// the config holding the secrets its client gave (none is stored, so a
// reload would lose them), their values for the redactor, and when the
// agent was created (an agent of the same id created since, on another
// replica, is another agent: it gets nothing of these).
type dropped struct {
	config  *agentv1.AgentConfig // nil: its client gave no secret
	keys    []string
	created time.Time
}

// registryLimits bound the sessions a registry holds; zero: no bound.
type registryLimits struct {
	maxLoaded int
	maxBytes  int64
}

// gcRoom is how much memory the process holds for each byte of live heap
// as the garbage collector runs it (GOGC=100: the heap grows to twice what
// the last collection left before the next one runs): what a session's
// footprint costs the process.
func gcRoom() float64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	pct := 100.0
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0 {
		pct = float64(s[0].Value.Uint64())
	}
	return 1 + pct/100
}

// cost is what a session holds in memory, as -agent-memory counts it.
func (r *registry) cost(sess *session) int64 {
	return int64(float64(sess.engine.Footprint()+sessionBytes) * r.room)
}

// pin marks sess used by a call, and most recently used. It returns false
// when sess is no longer the session registered for its agent (dropped
// or replaced meanwhile): look the agent up again.
func (r *registry) pin(sess *session) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[sess.id] != sess {
		return false
	}
	sess.pins++
	r.lru.MoveToFront(sess.used)
	return true
}

// unpin ends a call's use of sess: its footprint is counted again and the
// sessions beyond the bounds are dropped.
func (r *registry) unpin(sess *session) {
	size := r.cost(sess)
	r.mu.Lock()
	defer r.mu.Unlock()
	sess.pins--
	if r.m[sess.id] == sess {
		r.bytes += size - sess.size
		sess.size = size
	}
	r.evictLocked()
}

// held returns the config with the secrets of the agent rec when this
// registry dropped it from memory holding some: a load puts them back.
func (r *registry) held(rec *store.Agent) *agentv1.AgentConfig {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if d, ok := r.evicted[rec.ID]; ok && sameTime(d.created, rec.Created) {
		return d.config
	}
	return nil
}

// sameTime compares times as the stores keep them (microseconds).
func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

// add registers sess, just loaded from the store, pinned for its caller;
// its keys become known secrets. When another call registered the agent
// meanwhile, that session is pinned and returned instead.
func (r *registry) add(sess *session) (*session, error) {
	size := r.cost(sess)
	r.mu.Lock()
	if other := r.m[sess.id]; other != nil {
		other.pins++
		r.lru.MoveToFront(other.used)
		r.mu.Unlock()
		return other, nil
	}
	if r.closing {
		r.mu.Unlock()
		return nil, failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down")
	}
	d, reloaded := r.evicted[sess.id]
	delete(r.evicted, sess.id)
	sess.pins = 1
	r.insertLocked(sess, size)
	r.evictLocked()
	r.mu.Unlock()
	r.secrets.Add(sess.keys...)
	r.secrets.Remove(d.keys...) // the session holds them now
	if reloaded {
		r.tel.AgentReloaded()
	}
	return sess, nil
}

// put registers a session just created, replacing what the registry held
// of an agent of the same id (one deleted elsewhere), and returns the
// session it replaced, if any, for the caller to close.
func (r *registry) put(sess *session) (old *session) {
	size := r.cost(sess)
	r.mu.Lock()
	defer r.mu.Unlock()
	old = r.removeLocked(sess.id)
	r.insertLocked(sess, size)
	r.evictLocked()
	return old
}

// remove forgets what the registry holds of an agent (it was deleted) and
// returns its session, if one was loaded.
func (r *registry) remove(key string) *session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.removeLocked(key)
}

func (r *registry) insertLocked(sess *session, size int64) {
	r.m[sess.id] = sess
	sess.used = r.lru.PushFront(sess)
	sess.size = size
	r.bytes += size
}

// removeLocked forgets the agent key: its session, or the secrets kept of it.
func (r *registry) removeLocked(key string) *session {
	if d, ok := r.evicted[key]; ok {
		delete(r.evicted, key)
		r.secrets.Remove(d.keys...)
	}
	sess := r.m[key]
	if sess == nil {
		return nil
	}
	delete(r.m, key)
	r.lru.Remove(sess.used)
	r.bytes -= sess.size
	return sess
}

func (r *registry) over() bool {
	return r.limits.maxLoaded > 0 && len(r.m) > r.limits.maxLoaded || r.limits.maxBytes > 0 && r.bytes > r.limits.maxBytes
}

// evictLocked drops the least recently used idle sessions while the
// registry holds more than its bounds allow.
func (r *registry) evictLocked() {
	for e := r.lru.Back(); e != nil && r.over(); {
		sess, prev := e.Value.(*session), e.Prev()
		// Closed first: a call that got it before it was dropped fails
		// instead of running on a copy nobody keeps.
		if sess.pins == 0 && sess.engine.CloseIdle() {
			cause := "memory"
			if r.limits.maxLoaded > 0 && len(r.m) > r.limits.maxLoaded {
				cause = "count"
			}
			d := dropped{keys: sess.heldKeys(), created: sess.created}
			if len(d.keys) > 0 {
				d.config = sess.engine.StoredConfig()
			}
			delete(r.m, sess.id)
			r.lru.Remove(sess.used)
			r.bytes -= sess.size
			r.evicted[sess.id] = d
			r.tel.AgentEvicted(cause)
		}
		e = prev
	}
}

// loaded returns how many sessions the registry holds and what they cost.
func (r *registry) loaded() (n int, bytes int64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m), r.bytes
}
