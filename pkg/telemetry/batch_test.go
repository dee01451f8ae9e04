package telemetry

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// recordingExporter keeps the batches it is given and says when one came.
type recordingExporter struct {
	mu       sync.Mutex
	batches  [][]string // span names
	got      chan int   // the size of each batch, as it comes
	fail     error
	shutdown bool
}

func newRecordingExporter() *recordingExporter { return &recordingExporter{got: make(chan int, 100)} }

func (e *recordingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name()
	}
	e.mu.Lock()
	e.batches = append(e.batches, names)
	err := e.fail
	e.mu.Unlock()
	e.got <- len(spans)
	return err
}

func (e *recordingExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.shutdown = true
	return nil
}

func (e *recordingExporter) names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, b := range e.batches {
		out = append(out, b...)
	}
	return out
}

// spanMaker ends spans named s0, s1, … through a batcher.
type spanMaker struct {
	tp *sdktrace.TracerProvider
	n  int
}

func newSpanMaker(b *batcher, sampler sdktrace.Sampler) *spanMaker {
	return &spanMaker{tp: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithSampler(sampler))}
}

func (m *spanMaker) end(n int) {
	for range n {
		_, s := m.tp.Tracer("test").Start(context.Background(), "s"+string(rune('0'+m.n%10)))
		s.End()
		m.n++
	}
}

func waitBatch(t *testing.T, e *recordingExporter, want int) {
	t.Helper()
	select {
	case n := <-e.got:
		if n != want {
			t.Fatalf("a batch of %d spans, want %d", n, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no batch of %d spans", want)
	}
}

func noBatch(t *testing.T, e *recordingExporter, d time.Duration) {
	t.Helper()
	select {
	case n := <-e.got:
		t.Fatalf("a batch of %d spans came early", n)
	case <-time.After(d):
	}
}

// TestBatcher pins when the batcher exports: a full batch at once, the
// rest after the schedule delay, on ForceFlush and at Shutdown, never an
// unsampled span, nothing past a full queue or after Shutdown.
func TestBatcher(t *testing.T) {
	t.Run("a full batch at once", func(t *testing.T) {
		e := newRecordingExporter()
		b := newBatcher(e, batchConfig{delay: time.Hour, queue: 10, batch: 4}, hclog.NewNullLogger())
		m := newSpanMaker(b, sdktrace.AlwaysSample())
		m.end(9)
		waitBatch(t, e, 4)
		waitBatch(t, e, 4)
		noBatch(t, e, 100*time.Millisecond) // the ninth waits for the delay
		if err := m.tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitBatch(t, e, 1)
		if got := len(e.names()); got != 9 || !e.shutdown {
			t.Errorf("%d spans exported, exporter shut down %v", got, e.shutdown)
		}
	})
	t.Run("the rest after the delay", func(t *testing.T) {
		e := newRecordingExporter()
		b := newBatcher(e, batchConfig{delay: 50 * time.Millisecond, queue: 10, batch: 4}, hclog.NewNullLogger())
		m := newSpanMaker(b, sdktrace.AlwaysSample())
		m.end(1)
		waitBatch(t, e, 1)
		m.end(2)
		waitBatch(t, e, 2)
		if err := m.tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("flush and shutdown export everything", func(t *testing.T) {
		e := newRecordingExporter()
		b := newBatcher(e, batchConfig{delay: time.Hour, queue: 10, batch: 4}, hclog.NewNullLogger())
		m := newSpanMaker(b, sdktrace.AlwaysSample())
		m.end(3)
		noBatch(t, e, 50*time.Millisecond)
		if err := m.tp.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitBatch(t, e, 3)
		m.end(2)
		if err := m.tp.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitBatch(t, e, 2)
		m.end(1) // after Shutdown: dropped
		if err := b.ForceFlush(context.Background()); err != nil {
			t.Errorf("ForceFlush after Shutdown: %v", err)
		}
		if err := b.Shutdown(context.Background()); err != nil {
			t.Errorf("a second Shutdown: %v", err)
		}
		if got := strings.Join(e.names(), " "); got != "s0 s1 s2 s3 s4" {
			t.Errorf("exported %s", got)
		}
	})
	t.Run("unsampled spans and a full queue", func(t *testing.T) {
		e := newRecordingExporter()
		var logs bytes.Buffer
		log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
		// A batch larger than the queue: nothing is exported before Shutdown.
		b := newBatcher(e, batchConfig{delay: time.Hour, queue: 3, batch: 10}, log)
		newSpanMaker(b, sdktrace.NeverSample()).end(5)
		newSpanMaker(b, sdktrace.AlwaysSample()).end(5)
		b.mu.Lock()
		queued, dropped := len(b.queue), b.dropped
		b.mu.Unlock()
		if queued != 3 || dropped != 2 {
			t.Fatalf("%d queued, %d dropped: want 3 and 2", queued, dropped)
		}
		if err := b.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitBatch(t, e, 3)
		if !strings.Contains(logs.String(), "spans dropped") || !strings.Contains(logs.String(), "dropped=2") {
			t.Errorf("logs: %s", logs.String())
		}
	})
	t.Run("export errors", func(t *testing.T) {
		e := newRecordingExporter()
		e.fail = errors.New("collector down")
		b := newBatcher(e, batchConfig{delay: time.Hour, queue: 10, batch: 4}, hclog.NewNullLogger())
		m := newSpanMaker(b, sdktrace.AlwaysSample())
		m.end(2)
		if err := b.ForceFlush(context.Background()); err == nil || !strings.Contains(err.Error(), "collector down") {
			t.Errorf("ForceFlush = %v, want the export's error", err)
		}
		if err := b.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBatchConfigFrom pins the OTEL_BSP_* variables the batcher reads.
func TestBatchConfigFrom(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want batchConfig
		warn bool
	}{
		{"defaults", nil, batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, queue: 2048, batch: 512}, false},
		{"set", map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_BSP_EXPORT_TIMEOUT": "0", "OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "10"},
			batchConfig{delay: 50 * time.Millisecond, queue: 100, batch: 10}, false},
		{"a batch larger than the queue", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100"},
			batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, queue: 100, batch: 100}, false},
		{"bad values are ignored", map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "5s", "OTEL_BSP_MAX_QUEUE_SIZE": "0", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "-1"},
			batchConfig{delay: 5 * time.Second, timeout: 30 * time.Second, queue: 2048, batch: 512}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			got := batchConfigFrom(func(k string) string { return c.env[k] }, hclog.New(&hclog.LoggerOptions{Output: &logs}))
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if warned := strings.Contains(logs.String(), "ignoring a bad OpenTelemetry setting"); warned != c.warn {
				t.Errorf("warned %v, want %v: %s", warned, c.warn, logs.String())
			}
		})
	}
}
