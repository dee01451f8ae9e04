package telemetry

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// coalesced returns a tracer whose spans go through a coalescer (with
// delay and max) to a span recorder, the coalescer and the recorder.
func coalesced(t *testing.T, delay time.Duration, max int, opts ...sdktrace.TracerProviderOption) (trace.Tracer, *coalescer, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	c := newCoalescer(rec)
	c.delay, c.max = delay, max
	tp := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(c)}, opts...)...)
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp.Tracer("test"), c, rec
}

// endedNames returns the names of the spans rec has been handed, in order.
func endedNames(rec *tracetest.SpanRecorder) []string {
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	return names
}

func TestCoalescerHandsOff(t *testing.T) {
	ctx := context.Background()
	remote := trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true,
	}))
	tests := []struct {
		name string
		max  int
		// run makes spans; want are the names handed on right after it,
		// before any delay.
		run  func(tr trace.Tracer)
		want []string
	}{{
		name: "children wait for their local root",
		max:  100,
		run: func(tr trace.Tracer) {
			rctx, root := tr.Start(ctx, "run")
			for i := range 3 {
				_, s := tr.Start(rctx, fmt.Sprint("child ", i))
				s.End()
			}
			root.End()
		},
		want: []string{"child 0", "child 1", "child 2", "run"},
	}, {
		name: "a span under a remote parent is a local root",
		max:  100,
		run: func(tr trace.Tracer) {
			rctx, rpc := tr.Start(remote, "rpc")
			_, s := tr.Start(rctx, "child")
			s.End()
			rpc.End()
		},
		want: []string{"child", "rpc"},
	}, {
		name: "a full burst goes at once",
		max:  2,
		run: func(tr trace.Tracer) {
			rctx, _ := tr.Start(ctx, "run") // never ends here
			for i := range 5 {
				_, s := tr.Start(rctx, fmt.Sprint("child ", i))
				s.End()
			}
		},
		want: []string{"child 0", "child 1", "child 2", "child 3"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, _, rec := coalesced(t, time.Hour, tc.max)
			tc.run(tr)
			if got := endedNames(rec); !slices.Equal(got, tc.want) {
				t.Errorf("handed on %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCoalescerDelay(t *testing.T) {
	tr, _, rec := coalesced(t, 20*time.Millisecond, 100)
	rctx, root := tr.Start(context.Background(), "run")
	defer root.End()
	_, s := tr.Start(rctx, "child")
	s.End()
	if got := endedNames(rec); len(got) != 0 {
		t.Fatalf("handed on %q at once, want it kept for the delay", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(rec.Ended()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the child was never handed on")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := endedNames(rec); !slices.Equal(got, []string{"child"}) {
		t.Errorf("handed on %q after the delay, want [child]", got)
	}
}

func TestCoalescerFlushAndShutdown(t *testing.T) {
	tr, c, rec := coalesced(t, time.Hour, 100)
	rctx, root := tr.Start(context.Background(), "run")
	_, s := tr.Start(rctx, "before flush")
	s.End()
	if err := c.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := endedNames(rec); !slices.Equal(got, []string{"before flush"}) {
		t.Fatalf("after ForceFlush: %q, want [before flush]", got)
	}
	_, s = tr.Start(rctx, "before shutdown")
	s.End()
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	root.End() // after Shutdown: dropped, as the batch processor drops it
	if got := endedNames(rec); !slices.Equal(got, []string{"before flush", "before shutdown"}) {
		t.Errorf("after Shutdown: %q, want [before flush before shutdown]", got)
	}
}

// recordOnly records every span and samples none: the SDK ends them
// through the span processors, which must not export them.
type recordOnly struct{}

func (recordOnly) ShouldSample(sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
}

func (recordOnly) Description() string { return "RecordOnly" }

func TestCoalescerSkipsUnsampled(t *testing.T) {
	tr, _, rec := coalesced(t, time.Hour, 1, sdktrace.WithSampler(recordOnly{}))
	_, s := tr.Start(context.Background(), "run")
	s.End()
	if got := endedNames(rec); len(got) != 0 {
		t.Errorf("handed on %q, want no unsampled span", got)
	}
}
