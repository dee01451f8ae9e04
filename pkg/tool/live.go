package tool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// LiveOutput bounds and coalesces the live output of one call on its way
// to Options.OnOutput. The zero value passes every chunk on as it comes.
type LiveOutput struct {
	// MaxBytes, when positive, is how many bytes of the call's live output
	// reach OnOutput; the rest is counted and dropped, and OnCapped says
	// how much. The call's result is not affected.
	MaxBytes int64
	// Stop, with MaxBytes, stops the call once its output goes over
	// MaxBytes (its result says why) instead of letting it run on unseen.
	Stop bool
	// Interval, when positive, coalesces chunks that come faster than this:
	// after a chunk is passed on, the next waits until Interval has passed,
	// taking with it the chunks of its stream that came meanwhile (up to
	// MaxChunkBytes). A call that writes now and then sees each chunk at
	// once; a flood becomes one chunk per Interval or per MaxChunkBytes.
	Interval time.Duration
	// OnCapped, if set, is told once, after the call's last chunk and
	// before Execute returns, what MaxBytes kept out; never when nothing was.
	OnCapped func(Capped)
}

// Capped says what the live output cap of a call kept out.
type Capped struct {
	// MaxBytes is the cap; KeptBytes what was passed on (at most MaxBytes).
	MaxBytes, KeptBytes int64
	// DroppedBytes and DroppedChunks count the output not passed on: the
	// chunks that lost all or part of their data.
	DroppedBytes, DroppedChunks int64
	// Stopped says the call was stopped at the cap (LiveOutput.Stop).
	Stopped bool
}

// DefaultLiveInterval is the coalescing interval of live output a service
// uses: fifty chunks a second are more than a person reads, and a flood
// costs at most that many events a second per call.
const DefaultLiveInterval = 20 * time.Millisecond

// ErrLiveOutputCap is the cause of a call stopped because its live output
// went over LiveOutput.MaxBytes with LiveOutput.Stop set.
var ErrLiveOutputCap = errors.New("its live output went over the cap")

// liveOutput is one call's LiveOutput at work between the tool and
// OnOutput. Chunks are passed on under mu, so that one that waits for its
// consumer (a slow client) holds back the tool's next ones: the tool's
// stream, not a buffer here, takes up the difference.
type liveOutput struct {
	cfg  LiveOutput
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

// startLive wraps opts.OnOutput with opts.Live, when it asks for anything,
// and returns the call's context (stopped at the cap with Stop) and the
// function that ends it: it passes on what is held, then calls OnCapped.
func startLive(ctx context.Context, opts *Options) (context.Context, func()) {
	cfg := opts.Live
	if opts.OnOutput == nil || cfg.MaxBytes <= 0 && cfg.Interval <= 0 {
		return ctx, func() {}
	}
	l := &liveOutput{cfg: cfg, on: opts.OnOutput}
	l.capped.MaxBytes = max(cfg.MaxBytes, 0)
	var cancel context.CancelCauseFunc = func(error) {}
	if cfg.Stop && cfg.MaxBytes > 0 {
		ctx, cancel = context.WithCancelCause(ctx)
		l.stop = cancel
	}
	opts.OnOutput = l.write
	return ctx, func() {
		l.close()
		cancel(nil)
	}
}

// write takes one chunk of the call.
func (l *liveOutput) write(ch Chunk) {
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
				l.stop(fmt.Errorf("%w of %d bytes", ErrLiveOutputCap, limit))
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
func (l *liveOutput) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if !l.closed {
		l.passLocked()
	}
}

// passLocked passes the held chunk on. The caller holds mu.
func (l *liveOutput) passLocked() {
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
func (l *liveOutput) close() {
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
