package tool

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestTraceContextReachesThePlugin pins the trace context's way into a
// plugin: the span in the call's context goes in ExecuteRequest, sdk/tool
// puts it on the handler's context (tool.TraceContext reads it back) and
// tool.Run passes it to commands as TRACEPARENT and TRACESTATE. Without a
// span nothing is passed.
func TestTraceContextReachesThePlugin(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	ts, err := trace.ParseTraceState("vendor=abc")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xa1, 0xb2}, SpanID: trace.SpanID{0xc3, 0xd4}, TraceFlags: trace.FlagsSampled, TraceState: ts,
	})
	const traceparent = "00-a1b20000000000000000000000000000-c3d4000000000000-01"
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		context map[string]string
		env     string
	}{
		{"traced", trace.ContextWithSpanContext(context.Background(), sc),
			map[string]string{"traceparent": traceparent, "tracestate": "vendor=abc"}, traceparent + "|vendor=abc"},
		{"not traced", context.Background(), nil, "|"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := set.Execute(tc.ctx, "tracectx", json.RawMessage(`{}`), Options{})
			if res.Error {
				t.Fatalf("result: %v", OutputText(res.Output))
			}
			var got struct {
				Context map[string]string `json:"context"`
				Env     string            `json:"env"`
			}
			if err := json.Unmarshal([]byte(OutputText(res.Output)), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Context) != len(tc.context) || got.Context["traceparent"] != tc.context["traceparent"] ||
				got.Context["tracestate"] != tc.context["tracestate"] {
				t.Errorf("handler's trace context = %v, want %v", got.Context, tc.context)
			}
			if got.Env != tc.env {
				t.Errorf("command saw %q, want %q", got.Env, tc.env)
			}
		})
	}
}

// TestOutcomes pins Result.Outcome for each way a call ends.
func TestOutcomes(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		tool, input string
		ctx         context.Context
		want        Outcome
	}{
		{"echo", `{"text":"x"}`, context.Background(), OutcomeOK},
		{"fail", `{}`, context.Background(), OutcomeError},
		{"nope", `{}`, context.Background(), OutcomeError},
		{"add", `{"a":"1"}`, context.Background(), OutcomeError},
		{"exit", `{"code":3}`, context.Background(), OutcomeCrash},
		{"loop_timeout", `{}`, context.Background(), OutcomeTimeout},
		{"loop", `{}`, stopped, OutcomeKilled},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if res := set.Execute(tc.ctx, tc.tool, json.RawMessage(tc.input), Options{}); res.Outcome != tc.want {
				t.Errorf("outcome = %q, want %q (%s)", res.Outcome, tc.want, OutputText(res.Output))
			}
		})
	}
}

// processCounts records what a host tells its ProcessObserver.
type processCounts struct {
	mu                             sync.Mutex
	started, reused, killed, ended map[string]int
}

func (c *processCounts) add(m *map[string]int, plugin string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[plugin]++
}

func (c *processCounts) ProcessStarted(p string) { c.add(&c.started, p) }
func (c *processCounts) ProcessReused(p string)  { c.add(&c.reused, p) }
func (c *processCounts) ProcessKilled(p string)  { c.add(&c.killed, p) }
func (c *processCounts) ProcessEnded(p string)   { c.add(&c.ended, p) }

func (c *processCounts) get(m *map[string]int, plugin string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return (*m)[plugin]
}

// TestProcessObserver pins the process events: a scan starts a process
// that the next call reuses, a timed-out call's process is killed, and
// once the host is closed every started process has ended.
func TestProcessObserver(t *testing.T) {
	var c processCounts
	h := NewHost(Config{Observer: &c, MaxIdle: 1})
	set, err := h.Scan(context.Background(), filepath.Join(dirs.good, "testplug"))
	if err != nil {
		t.Fatal(err)
	}
	const plug = "testplug"
	if c.get(&c.started, plug) != 1 {
		t.Fatalf("started after the scan = %d", c.get(&c.started, plug))
	}
	set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{})
	if c.get(&c.reused, plug) != 1 || c.get(&c.started, plug) != 1 {
		t.Errorf("after a call: reused %d started %d", c.get(&c.reused, plug), c.get(&c.started, plug))
	}
	set.Execute(context.Background(), "loop_timeout", json.RawMessage(`{}`), Options{})
	if c.get(&c.killed, plug) != 1 {
		t.Errorf("killed = %d after a timeout", c.get(&c.killed, plug))
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if s, e := c.get(&c.started, plug), c.get(&c.ended, plug); s != e || s < 1 {
		t.Errorf("started %d, ended %d after Close", s, e)
	}
}
