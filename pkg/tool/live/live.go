// Package live bounds and coalesces the live output of a tool call on its
// way to a client: a byte cap per call, the rest counted and reported once,
// and chunks that come faster than an interval merged.
package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Chunk is a piece of a call's live output.
type Chunk struct {
	// Stream is output (emitted by the tool), stdout or stderr.
	Stream agentv1.OutputStream
	// Data is valid UTF-8.
	Data string
}

// MaxChunkBytes bounds the data of one Chunk: longer output is passed on
// in pieces, so that no event carrying it nears a message size limit.
const MaxChunkBytes = 64 << 10

// Options bound and coalesce the live output of one call on its way to its
// consumer. The zero value passes every chunk on as it comes.
type Options struct {
	// MaxBytes, when positive, is how many bytes of the call's live output
	// reach the consumer; the rest is counted and dropped, and OnCapped says
	// how much. The call's result is not affected.
	MaxBytes int64
	// Stop, with MaxBytes, stops the call once its output goes over
	// MaxBytes (Start's context is cancelled with ErrCap) instead of letting it run on unseen.
	Stop bool
	// Interval, when positive, coalesces chunks that come faster than this:
	// after a chunk is passed on, the next waits until Interval has passed,
	// taking with it the chunks of its stream that came meanwhile (up to
	// MaxChunkBytes). A call that writes now and then sees each chunk at
	// once; a flood becomes one chunk per Interval or per MaxChunkBytes.
	Interval time.Duration
	// OnCapped, if set, is told once, after the call's last chunk and
	// before the call ends, what MaxBytes kept out; never when nothing was.
	OnCapped func(Capped)
}

// Capped says what the live output cap of a call kept out.
type Capped struct {
	// MaxBytes is the cap; KeptBytes what was passed on (at most MaxBytes).
	MaxBytes, KeptBytes int64
	// DroppedBytes and DroppedChunks count the output not passed on: the
	// chunks that lost all or part of their data.
	DroppedBytes, DroppedChunks int64
	// Stopped says the call was stopped at the cap (Options.Stop).
	Stopped bool
}

// DefaultInterval is the coalescing interval of live output a service
// uses: fifty chunks a second are more than a person reads, and a flood
// costs at most that many events a second per call.
const DefaultInterval = 20 * time.Millisecond

// ErrCap is the cause of a call stopped because its live output went
// over Options.MaxBytes with Options.Stop set.
var ErrCap = errors.New("its live output went over the cap")

// output is one call's Options at work between the tool and its
// consumer. Chunks are passed on under mu, so that one that waits for its
// consumer (a slow client) holds back the tool's next ones: the tool's
// stream, not a buffer here, takes up the difference.
type output struct {
	cfg  Options
	on   func(Chunk)
	stop context.CancelCauseFunc // the call's, for cfg.Stop

	mu     sync.Mutex
	held   []byte // chunks of stream not yet passed on (Interval)
	stream agentv1.OutputStream
	last   time.Time   // when a chunk was last passed on
	timer  *time.Timer // passes held on when Interval has passed; nil when none is due
	capped Capped
	closed bool
}

// Start wraps on, a call's consumer of live output, with cfg when it asks
// for anything. It returns the call's context (cancelled at the cap with
// Stop), the function the call's chunks go to, and the function that ends
// the call's output: it passes on what is held, then calls OnCapped.
func Start(ctx context.Context, cfg Options, on func(Chunk)) (context.Context, func(Chunk), func()) {
	if on == nil || cfg.MaxBytes <= 0 && cfg.Interval <= 0 {
		return ctx, on, func() {}
	}
	l := &output{cfg: cfg, on: on}
	l.capped.MaxBytes = max(cfg.MaxBytes, 0)
	var cancel context.CancelCauseFunc = func(error) {}
	if cfg.Stop && cfg.MaxBytes > 0 {
		ctx, cancel = context.WithCancelCause(ctx)
		l.stop = cancel
	}
	return ctx, l.write, func() {
		l.close()
		cancel(nil)
	}
}

// write takes one chunk of the call.
func (l *output) write(ch Chunk) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || ch.Data == "" {
		return
	}
	data := ch.Data
	if limit := l.cfg.MaxBytes; limit > 0 {
		room := limit - l.capped.KeptBytes
		if int64(len(data)) > room {
			kept := prefixUTF8(data, int(max(room, 0)))
			l.capped.DroppedBytes += int64(len(data) - len(kept))
			l.capped.DroppedChunks++
			data = kept
			if l.stop != nil && !l.capped.Stopped {
				l.capped.Stopped = true
				l.stop(fmt.Errorf("%w of %d bytes", ErrCap, limit))
			}
		}
		l.capped.KeptBytes += int64(len(data))
	}
	if data == "" {
		return
	}
	if l.cfg.Interval <= 0 {
		l.on(Chunk{Stream: ch.Stream, Data: data})
		return
	}
	if len(l.held) > 0 && (ch.Stream != l.stream || len(l.held)+len(data) > MaxChunkBytes) {
		l.passLocked()
	}
	l.held, l.stream = append(l.held, data...), ch.Stream
	if wait := l.cfg.Interval - time.Since(l.last); wait <= 0 || len(l.held) >= MaxChunkBytes {
		l.passLocked()
	} else if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.tick)
	}
}

// tick passes on what was held for the interval.
func (l *output) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if !l.closed {
		l.passLocked()
	}
}

// passLocked passes the held chunk on. The caller holds mu.
func (l *output) passLocked() {
	if len(l.held) == 0 {
		return
	}
	data := string(l.held)
	l.held = l.held[:0]
	if cap(l.held) > MaxChunkBytes {
		l.held = nil
	}
	l.last = time.Now()
	l.on(Chunk{Stream: l.stream, Data: data})
}

// close passes on what is held and reports what the cap kept out: the
// call is over, and later chunks (an in-process tool's stray goroutine)
// are dropped.
func (l *output) close() {
	l.mu.Lock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.passLocked()
	c := l.capped
	l.mu.Unlock()
	if c.DroppedBytes > 0 && l.cfg.OnCapped != nil {
		l.cfg.OnCapped(c)
	}
}

// prefixUTF8 returns the longest prefix of s of at most n bytes that does
// not end inside a UTF-8 sequence.
func prefixUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
