package telemetry

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
)

// maxCached bounds a bounded memo: the keys come from models and
// configurations (model and tool names, finish reasons), a few in
// practice; past the bound values are made at each use.
const maxCached = 256

// memo keeps values made once per key, for the hot path of a step: span
// names ("chat gpt-4o"), finish-reason attributes (a string slice, which
// OpenTelemetry copies into an array by reflection), and the metric series
// of a label set (hashing label values is most of a metric update's
// cost). The last key looked up is kept apart and compared before the map
// is hashed: a step asks for the same model and tool as the step before.
type memo[K comparable, V any] struct {
	last    atomic.Pointer[memoEntry[K, V]]
	entries sync.Map     // K -> *memoEntry[K, V]
	count   atomic.Int32 // keys in entries
	bound   int32        // the most keys the map keeps; 0: no bound
}

type memoEntry[K comparable, V any] struct {
	key   K
	value V
}

// get returns the value of k, made by mk(k) the first time.
func (c *memo[K, V]) get(k K, mk func(K) V) V {
	if e := c.last.Load(); e != nil && e.key == k {
		return e.value
	}
	if x, ok := c.entries.Load(k); ok {
		e := x.(*memoEntry[K, V])
		c.last.Store(e)
		return e.value
	}
	e := &memoEntry[K, V]{k, mk(k)}
	if c.bound > 0 && c.count.Load() >= c.bound {
		return e.value
	}
	if x, loaded := c.entries.LoadOrStore(k, e); loaded {
		e = x.(*memoEntry[K, V])
	} else {
		c.count.Add(1)
	}
	c.last.Store(e)
	return e.value
}

// spanStrings are the strings and attributes spans would otherwise build
// at each use.
type spanStrings struct {
	chat, tool memo[string, string] // model -> "chat "+model; tool -> "execute_tool "+tool
	reasons    memo[string, attribute.KeyValue]
}

func newSpanStrings() *spanStrings {
	s := &spanStrings{}
	s.chat.bound, s.tool.bound, s.reasons.bound = maxCached, maxCached, maxCached
	return s
}

func chatName(model string) string { return "chat " + model }
func toolName(tool string) string  { return "execute_tool " + tool }

// finishReasons is the gen_ai.response.finish_reasons attribute of one reason.
func finishReasons(reason string) attribute.KeyValue {
	return attrFinishReasons.StringSlice([]string{reason})
}
