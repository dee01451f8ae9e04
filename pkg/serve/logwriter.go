package serve

import (
	"io"
	"sync"
	"time"
)

// maxPendingLog is how many bytes of log lines may wait for the writer's
// goroutine; past it a line's caller writes them itself (no line is ever
// dropped, and a flood of lines is slowed to the output's pace).
const maxPendingLog = 256 << 10

// logLinger is how long the writer's goroutine, woken by a line, waits for
// more before it writes: the lines of one call (a send writes three) go in
// one write, and a line is never later than this.
const logLinger = time.Millisecond

// logWriter passes whole log lines (hclog writes one entry per Write) to w
// from a goroutine of its own, several at once when they come faster than
// w takes them: the caller of a log line does not wait for a write to
// stderr, and under load one write carries many lines instead of each
// line costing one system call under hclog's lock; a line that comes while
// the goroutine lingers (logLinger) does not wake it. Lines keep their order.
// Close writes what is left and ends the goroutine; lines written after
// Close go to w at once.
type logWriter struct {
	w    io.Writer
	wake chan struct{} // capacity 1: lines are pending
	done chan struct{} // closed when the goroutine has ended

	wmu sync.Mutex // held while writing to w: keeps the lines in order

	mu        sync.Mutex
	pending   []byte
	spare     []byte // the buffer last written, reused
	closed    bool
	lingering bool // the goroutine waits for more lines: a line need not wake it
}

func newLogWriter(w io.Writer) *logWriter {
	l := &logWriter{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go l.run()
	return l
}

// Write queues a copy of p; it never fails (a write error of w is lost, as
// hclog loses it).
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.wmu.Lock()
		defer l.wmu.Unlock()
		_, _ = l.w.Write(p)
		return len(p), nil
	}
	l.pending = append(l.pending, p...)
	full := len(l.pending) >= maxPendingLog
	if !full && !l.lingering {
		select {
		case l.wake <- struct{}{}:
		default: // the goroutine has been told already
		}
	}
	l.mu.Unlock()
	if full {
		l.flush()
	}
	return len(p), nil
}

// flush writes the pending lines.
func (l *logWriter) flush() {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	b := l.pending
	l.pending, l.spare = l.spare[:0], nil
	l.mu.Unlock()
	if len(b) > 0 {
		_, _ = l.w.Write(b)
	}
	if cap(b) <= maxPendingLog { // a buffer grown by a flood is let go
		l.mu.Lock()
		l.spare = b[:0]
		l.mu.Unlock()
	}
}

func (l *logWriter) run() {
	defer close(l.done)
	for range l.wake {
		l.linger()
		l.flush()
	}
	l.flush()
}

// linger waits logLinger for more lines, less when the writer closes (a
// full buffer is written by the line's caller meanwhile).
func (l *logWriter) linger() {
	l.mu.Lock()
	if l.closed || len(l.pending) == 0 {
		l.mu.Unlock()
		return
	}
	l.lingering = true
	l.mu.Unlock()
	t := time.NewTimer(logLinger)
	select {
	case <-t.C:
	case <-l.wake: // closed, or a line that came before lingering was set
	}
	t.Stop()
	l.mu.Lock()
	l.lingering = false
	l.mu.Unlock()
}

// Close writes the pending lines and ends the goroutine. It is idempotent.
func (l *logWriter) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return
	}
	l.closed = true
	close(l.wake) // under mu: no Write sends on it after this
	l.mu.Unlock()
	<-l.done
}
