package telemetry

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
)

// maxCached bounds each of cache's maps: the values come from models and
// configurations (model and tool names, finish reasons), a few in
// practice; past the bound they are made at each use.
const maxCached = 256

// cache keeps the strings and attributes a span would otherwise build
// each time: "chat gpt-4o" and the like, and a finish reason's attribute
// (a string slice, which OpenTelemetry copies into an array by reflection).
type cache struct {
	names   sync.Map // prefix+name -> itself
	nNames  atomic.Int32
	reasons sync.Map // finish reason -> attribute.KeyValue
	nReason atomic.Int32
}

type nameKey struct{ prefix, name string }

// name returns prefix+name.
func (c *cache) name(prefix, name string) string {
	k := nameKey{prefix, name}
	if v, ok := c.names.Load(k); ok {
		return v.(string)
	}
	s := prefix + name
	if c.nNames.Load() < maxCached {
		if _, loaded := c.names.LoadOrStore(k, s); !loaded {
			c.nNames.Add(1)
		}
	}
	return s
}

// finishReasons returns the gen_ai.response.finish_reasons attribute of
// one reason.
func (c *cache) finishReasons(reason string) attribute.KeyValue {
	if v, ok := c.reasons.Load(reason); ok {
		return v.(attribute.KeyValue)
	}
	kv := attrFinishReasons.StringSlice([]string{reason})
	if c.nReason.Load() < maxCached {
		if _, loaded := c.reasons.LoadOrStore(reason, kv); !loaded {
			c.nReason.Add(1)
		}
	}
	return kv
}
