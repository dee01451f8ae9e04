// Package sse reads a server-sent event stream (text/event-stream) as the
// model providers send it.
//
// It follows the WHATWG event stream format: lines end with CRLF, LF or a
// lone CR (also when the CR and LF arrive in different reads); a leading
// byte order mark is skipped; a line starting with ':' is a comment; a field
// is "name: value" with one optional space after the colon, or a bare name
// with an empty value; "data" lines of one event are joined with "\n"; an
// "id" holding a NUL is ignored; "retry" is taken only when it is all digits;
// unknown fields are ignored; a blank line ends an event, and an event with
// no data line is not dispatched.
//
// One deliberate difference from the browser algorithm: when the body ends
// after an event's last data line but before the blank line that would end
// it, the event is still dispatched. Servers that close the connection right
// after their final "data: [DONE]" are common, and whether a stream is
// complete is for the protocol to judge from its own terminal event, not for
// the framing.
//
// A Reader never hangs on a stalled body once its context is done: when the
// body is an io.Closer the Reader closes it, which ends a blocked Read (an
// HTTP response body, a pipe, a network connection).
package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// DefaultMaxEventSize bounds one event's data and one line when
// Reader.MaxEventSize is zero.
const DefaultMaxEventSize = 32 << 20

// ErrEventTooLarge is returned when an event's data or a single line exceeds
// the Reader's MaxEventSize.
var ErrEventTooLarge = errors.New("sse: event too large")

// DefaultDrainBytes and DefaultDrainTime bound what Finish reads after a
// stream's end when Reader.DrainBytes or DrainTime is zero: an HTTP/1.1
// chunked body has a few bytes left (its last chunk), which usually arrive
// with the terminal event or just behind it.
const (
	DefaultDrainBytes = 64 << 10
	DefaultDrainTime  = 50 * time.Millisecond
)

const (
	initialBufSize = 32 << 10
	// maxEmptyReads is how many (0, nil) reads in a row mean a broken source.
	maxEmptyReads = 100
)

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the "event" field; empty when the event had none (the format's
	// default type "message").
	Type string
	// Data is the event's data lines joined with "\n". It is only valid
	// until the next call to Next.
	Data []byte
	// ID is the last event ID seen on the stream so far.
	ID string
}

// bufs holds read buffers of initialBufSize between Readers: a model
// request reads one stream, and most streams never need a larger buffer.
var bufs = sync.Pool{New: func() any { return new([initialBufSize]byte) }}

// Reader reads events from a stream. It is not safe for concurrent use.
type Reader struct {
	// MaxEventSize bounds one event's data and one line in bytes; zero means
	// DefaultMaxEventSize. Set it before the first call to Next.
	MaxEventSize int
	// DrainBytes and DrainTime bound Finish's read of what follows the
	// stream's end; zero means DefaultDrainBytes and DefaultDrainTime.
	DrainBytes int64
	DrainTime  time.Duration

	ctx  context.Context
	src  io.Reader
	stop func() bool

	buf     []byte
	pooled  *[initialBufSize]byte // buf's array when it came from bufs
	start   int                   // first unread byte in buf
	end     int                   // end of valid bytes in buf
	scanned int                   // bytes after start already known to hold no line end
	skipLF  bool                  // the previous line ended with CR: a leading LF belongs to it
	started bool                  // the byte order mark check is done
	readErr error
	// emptyReads counts reads in a row that returned nothing and no error.
	emptyReads int

	data    []byte
	hasData bool
	typ     []byte
	lastTyp string
	id      string
	retry   time.Duration
	err     error

	closeOnce sync.Once
	closeErr  error
}

// NewReader returns a Reader of src. When ctx is done, a blocked or later
// Next returns the context's error; if src is an io.Closer it is closed at
// that moment so that a Read stalled on the network returns at once.
func NewReader(ctx context.Context, src io.Reader) *Reader {
	r := &Reader{ctx: ctx, src: src}
	if c, ok := src.(io.Closer); ok {
		r.stop = context.AfterFunc(ctx, func() { _ = c.Close() })
	}
	return r
}

// Retry returns the last reconnection time the stream asked for, 0 if none.
func (r *Reader) Retry() time.Duration { return r.retry }

// Close stops watching the context and closes the source when it is an
// io.Closer. It is safe to call more than once. Event.Data stays valid.
func (r *Reader) Close() error {
	r.closeOnce.Do(func() {
		if r.stop != nil {
			r.stop()
		}
		if c, ok := r.src.(io.Closer); ok {
			r.closeErr = c.Close()
		}
		if r.pooled != nil {
			bufs.Put(r.pooled)
			r.pooled, r.buf, r.start, r.end, r.scanned = nil, nil, 0, 0, 0
		}
	})
	return r.closeErr
}

// Finish is Close for a stream whose protocol has seen its terminal event
// ([DONE], message_stop, response.completed): when the source is an
// io.Closer that has not ended yet, what it still holds is first read and
// dropped, at most DrainBytes and for at most DrainTime (the source is
// closed when that time is up, which ends a blocked read), so that an HTTP
// response body reaches its end and net/http keeps the connection for the
// next request instead of closing it. A source that goes on beyond either
// bound (a gateway that holds the stream open) is closed as Close does. Do
// not call Finish after an error or when the consumer stopped early: Close
// then, which drops the connection at once.
func (r *Reader) Finish() error {
	if c, ok := r.src.(io.Closer); ok && r.err == nil && r.readErr == nil && r.ctx.Err() == nil {
		r.drain(c)
	}
	return r.Close()
}

// drain reads the rest of the source within the bounds of Finish.
func (r *Reader) drain(c io.Closer) {
	limit, wait := r.DrainBytes, r.DrainTime
	if limit <= 0 {
		limit = DefaultDrainBytes
	}
	if wait <= 0 {
		wait = DefaultDrainTime
	}
	t := time.AfterFunc(wait, func() { _ = c.Close() })
	defer t.Stop()
	// limit+1: a rest of exactly limit bytes is still read to its end.
	_, _ = io.CopyN(io.Discard, r.src, limit+1)
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// after any error it keeps returning that error.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.hasData {
				// The body ended inside an event: dispatch it (see package doc).
				ev := r.dispatch()
				r.err = io.EOF
				return ev, nil
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if !r.hasData {
				r.typ = r.typ[:0]
				continue
			}
			return r.dispatch(), nil
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// dispatch returns the pending event and starts a new one.
func (r *Reader) dispatch() Event {
	ev := Event{Data: r.data, ID: r.id}
	if len(r.typ) > 0 {
		// Reuse the previous type's string: streams repeat a few types.
		if string(r.typ) != r.lastTyp {
			r.lastTyp = string(r.typ)
		}
		ev.Type = r.lastTyp
	}
	r.data = r.data[:0]
	r.hasData = false
	r.typ = r.typ[:0]
	return ev
}

// field applies one non-blank line to the pending event.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value)+1 > r.maxSize() {
			return ErrEventTooLarge
		}
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 && string(value) != r.id {
			r.id = string(value)
		}
	case "retry":
		if ms, ok := digits(value); ok {
			r.retry = time.Duration(ms) * time.Millisecond
		}
	}
	return nil
}

// digits parses an all-ASCII-digit value.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func (r *Reader) maxSize() int {
	if r.MaxEventSize > 0 {
		return r.MaxEventSize
	}
	return DefaultMaxEventSize
}

// readLine returns the next line without its terminator. The slice is valid
// until the next call. A final line without a terminator is returned as a
// line; after it readLine returns io.EOF or the read error.
func (r *Reader) readLine() ([]byte, error) {
	for {
		if r.skipLF && r.start < r.end {
			if r.buf[r.start] == '\n' {
				r.start++
			}
			r.skipLF = false
		}
		if !r.started {
			if r.end-r.start < len(bom) && r.readErr == nil {
				if err := r.fill(); err != nil {
					return nil, err
				}
				continue
			}
			if bytes.HasPrefix(r.buf[r.start:r.end], bom) {
				r.start += len(bom)
			}
			r.started = true
		}
		chunk := r.buf[r.start:r.end]
		if i := indexLineEnd(chunk, r.scanned); i >= 0 {
			if chunk[i] == '\r' {
				r.skipLF = true
			}
			r.start += i + 1
			r.scanned = 0
			return chunk[:i], nil
		}
		r.scanned = len(chunk)
		if r.readErr != nil {
			if len(chunk) > 0 {
				r.start, r.scanned = r.end, 0
				return chunk, nil
			}
			return nil, r.readErr
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// indexLineEnd returns the index of the first CR or LF in b at or after
// from, or -1.
func indexLineEnd(b []byte, from int) int {
	rest := b[from:]
	i := bytes.IndexByte(rest, '\n')
	if i < 0 {
		i = len(rest)
	}
	if j := bytes.IndexByte(rest[:i], '\r'); j >= 0 {
		return from + j
	}
	if i == len(rest) {
		return -1
	}
	return from + i
}

// fill reads more bytes into the buffer, compacting or growing it first.
// A read error (io.EOF included) is kept in readErr for readLine to report
// after the buffered bytes.
func (r *Reader) fill() error {
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("sse: %w", err)
	}
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		limit := r.maxSize() + 64 // a field name and its colon fit beside the largest value
		if len(r.buf) >= limit {
			return ErrEventTooLarge
		}
		if r.buf == nil && r.pooled == nil && limit >= initialBufSize {
			r.pooled = bufs.Get().(*[initialBufSize]byte)
			r.buf = r.pooled[:]
		} else {
			size := max(initialBufSize, 2*len(r.buf))
			nb := make([]byte, min(size, limit))
			copy(nb, r.buf[:r.end])
			r.buf = nb
		}
	}
	n, err := r.src.Read(r.buf[r.end:])
	r.end += n
	if n == 0 && err == nil {
		r.emptyReads++
		if r.emptyReads >= maxEmptyReads {
			err = io.ErrNoProgress
		}
	} else {
		r.emptyReads = 0
	}
	if err != nil {
		if ctxErr := r.ctx.Err(); ctxErr != nil {
			return fmt.Errorf("sse: %w", ctxErr)
		}
		if err != io.EOF {
			err = fmt.Errorf("sse: read: %w", err)
		}
		r.readErr = err
	}
	return nil
}
