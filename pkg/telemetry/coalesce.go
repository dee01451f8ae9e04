package telemetry

import (
	"context"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Hand-off bounds of a coalescer: ended spans wait at most coalesceDelay,
// and at most coalesceMax of them, before going to the batch processor.
// Both are far below the batch processor's own (OTEL_BSP_SCHEDULE_DELAY,
// 5 s, and OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512), so export is no later.
const (
	coalesceDelay = 100 * time.Millisecond
	coalesceMax   = 128
)

// coalescer hands ended spans to the SDK's batch span processor in bursts
// instead of one by one. The batch processor takes each span on a channel
// its goroutine waits on, so every span end wakes that goroutine (and, with
// a core idle, a thread spinning up for it): on two vCPUs that costs about
// as much as making the span. A coalescer keeps the spans that end and
// passes them on together when a local root span ends (the RPC's or the
// run's, whichever is outermost here), when coalesceMax are waiting, or
// coalesceDelay after the first one: one wake-up per burst. Queueing,
// batching, dropping when full and exporting stay the SDK's.
type coalescer struct {
	next  sdktrace.SpanProcessor
	delay time.Duration // coalesceDelay, but in tests
	max   int           // coalesceMax, but in tests

	mu      sync.Mutex
	pending []sdktrace.ReadOnlySpan
	timer   *time.Timer // armed while pending is not empty
	stopped bool
}

// newCoalescer returns a coalescer in front of next.
func newCoalescer(next sdktrace.SpanProcessor) *coalescer {
	c := &coalescer{next: next, delay: coalesceDelay, max: coalesceMax}
	c.timer = time.AfterFunc(time.Hour, c.flush)
	c.timer.Stop()
	return c
}

// OnStart passes the start on: the batch processor does nothing with it.
func (c *coalescer) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { c.next.OnStart(ctx, s) }

// OnEnd keeps s for the next burst, and sends the burst when s is a local
// root or the burst is full.
func (c *coalescer) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // the batch processor would drop it too
	}
	root := !s.Parent().IsValid() || s.Parent().IsRemote()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.pending = append(c.pending, s)
	if !root && len(c.pending) < c.max {
		if len(c.pending) == 1 {
			c.timer.Reset(c.delay)
		}
		c.mu.Unlock()
		return
	}
	burst := c.take()
	c.mu.Unlock()
	c.send(burst)
}

// take empties pending and returns what it held; c.mu is held.
func (c *coalescer) take() []sdktrace.ReadOnlySpan {
	if len(c.pending) == 0 {
		return nil // the timer is not armed either
	}
	burst := c.pending
	c.pending = make([]sdktrace.ReadOnlySpan, 0, cap(burst))
	c.timer.Stop()
	return burst
}

// send hands a burst to the batch processor.
func (c *coalescer) send(burst []sdktrace.ReadOnlySpan) {
	for _, s := range burst {
		c.next.OnEnd(s)
	}
}

// flush sends what is pending now.
func (c *coalescer) flush() {
	c.mu.Lock()
	burst := c.take()
	c.mu.Unlock()
	c.send(burst)
}

// ForceFlush sends what is pending, then flushes the batch processor.
func (c *coalescer) ForceFlush(ctx context.Context) error {
	c.flush()
	return c.next.ForceFlush(ctx)
}

// Shutdown sends what is pending, takes no more spans and shuts the batch
// processor down.
func (c *coalescer) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	burst := c.take()
	c.stopped = true
	c.mu.Unlock()
	c.send(burst)
	return c.next.Shutdown(ctx)
}
