package sse_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/pkg/llm/sse"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type ev struct{ Type, Data, ID string }

// readAll reads every event of src and the error that ended the stream.
func readAll(t testing.TB, src io.Reader) ([]ev, error) {
	t.Helper()
	r := sse.NewReader(context.Background(), src)
	defer r.Close()
	var out []ev
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev{e.Type, string(e.Data), e.ID})
	}
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"empty", "", nil},
		{"one event", "data: hello\n\n", []ev{{"", "hello", ""}}},
		{"typed", "event: add\ndata: 1\n\n", []ev{{"add", "1", ""}}},
		{"multi-line data", "data: a\ndata: b\ndata:\n\n", []ev{{"", "a\nb\n", ""}}},
		{"no space after colon", "data:x\n\n", []ev{{"", "x", ""}}},
		{"only one space stripped", "data:  x\n\n", []ev{{"", " x", ""}}},
		{"bare field name", "data\n\n", []ev{{"", "", ""}}},
		{"comment ignored", ": keep-alive\n\ndata: a\n: mid\n\n", []ev{{"", "a", ""}}},
		{"CRLF", "event: e\r\ndata: a\r\n\r\ndata: b\r\n\r\n", []ev{{"e", "a", ""}, {"", "b", ""}}},
		{"CR", "data: a\rdata: b\r\rdata: c\r\r", []ev{{"", "a\nb", ""}, {"", "c", ""}}},
		{"mixed endings", "data: a\r\ndata: b\n\r\n", []ev{{"", "a\nb", ""}}},
		{"event without data is dropped", "event: ping\n\ndata: x\n\n", []ev{{"", "x", ""}}},
		{"id persists", "id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []ev{{"", "a", "7"}, {"", "b", "7"}, {"", "c", ""}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []ev{{"", "a", "1"}, {"", "b", "1"}}},
		{"unknown field ignored", "foo: bar\ndata: a\n\n", []ev{{"", "a", ""}}},
		{"byte order mark skipped", "\xEF\xBB\xBFdata: a\n\n", []ev{{"", "a", ""}}},
		{"end without blank line dispatches", "data: a\n\ndata: [DONE]\n", []ev{{"", "a", ""}, {"", "[DONE]", ""}}},
		{"end inside a line dispatches", "data: [DONE]", []ev{{"", "[DONE]", ""}}},
		{"very long line", "data: " + long + "\n\n", []ev{{"", long, ""}}},
		{"type resets after event", "event: a\ndata: 1\n\ndata: 2\n\n", []ev{{"a", "1", ""}, {"", "2", ""}}},
		{"colon in value", "data: {\"a\":1}\n\n", []ev{{"", `{"a":1}`, ""}}},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"data+EOF", iotest.DataErrReader},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				got, err := readAll(t, rd.wrap(strings.NewReader(tt.in)))
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				if !equal(got, tt.want) {
					t.Fatalf("events\n got %q\nwant %q", got, tt.want)
				}
			})
		}
	}
}

func equal(a, b []ev) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRetry(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"retry: 1500\ndata: a\n\n", 1500 * time.Millisecond},
		{"retry: 15x\ndata: a\n\n", 0},
		{"retry: -5\ndata: a\n\n", 0},
	}
	for _, tt := range tests {
		r := sse.NewReader(context.Background(), strings.NewReader(tt.in))
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if got := r.Retry(); got != tt.want {
			t.Errorf("%q: Retry() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestEventTooLarge(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"one long line", "data: " + strings.Repeat("x", 5000) + "\n\n"},
		{"many data lines", strings.Repeat("data: "+strings.Repeat("y", 100)+"\n", 60) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sse.NewReader(context.Background(), strings.NewReader(tt.in))
			r.MaxEventSize = 4096
			_, err := r.Next()
			if !errors.Is(err, sse.ErrEventTooLarge) {
				t.Fatalf("err = %v, want ErrEventTooLarge", err)
			}
			if _, err2 := r.Next(); !errors.Is(err2, sse.ErrEventTooLarge) {
				t.Fatalf("second Next err = %v, want the same error", err2)
			}
		})
	}
}

func TestReadErrorAfterData(t *testing.T) {
	boom := errors.New("boom")
	src := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAll(t, src)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if want := []ev{{"", "a", ""}}; !equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestNoProgress(t *testing.T) {
	_, err := readAll(t, zeroReader{})
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// TestStalledStreamCancelled shows that a Read blocked on a stalled body ends
// when the context is cancelled, for a body that arrives in pieces and then
// stops, and for one cut in the middle of an event.
func TestStalledStreamCancelled(t *testing.T) {
	tests := []struct {
		name  string
		sent  string
		wantN int
	}{
		{"stall between events", "data: a\n\n", 1},
		{"stall inside an event", "data: a\n\ndata: b\n", 1},
		{"stall before anything", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			go func() { _, _ = pw.Write([]byte(tt.sent)) }()
			ctx, cancel := context.WithCancel(context.Background())
			r := sse.NewReader(ctx, pr)
			defer r.Close()
			n := 0
			for ; n < tt.wantN; n++ {
				if _, err := r.Next(); err != nil {
					t.Fatalf("event %d: %v", n, err)
				}
			}
			done := make(chan error, 1)
			go func() {
				_, err := r.Next()
				done <- err
			}()
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Next did not return after cancel")
			}
		})
	}
}

func TestCancelledBeforeRead(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A plain reader (not a Closer) is not read at all once ctx is done.
	r := sse.NewReader(ctx, strings.NewReader("data: a\n\n"))
	if _, err := r.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCloseClosesSource(t *testing.T) {
	pr, pw := io.Pipe()
	r := sse.NewReader(context.Background(), pr)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := pw.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("write after Close: %v, want io.ErrClosedPipe", err)
	}
}

func TestDataValidUntilNext(t *testing.T) {
	r := sse.NewReader(context.Background(), strings.NewReader("data: first\n\ndata: second\n\n"))
	e1, _ := r.Next()
	first := bytes.Clone(e1.Data)
	e2, _ := r.Next()
	if string(first) != "first" || string(e2.Data) != "second" {
		t.Fatalf("got %q then %q", first, e2.Data)
	}
}

// TestBuffersReusedAfterClose reads streams one after another, as model
// requests do: a closed Reader's read buffer goes to the next, while the
// last event it returned stays intact, and a Reader used after Close fails
// rather than reading through a buffer it gave away.
func TestBuffersReusedAfterClose(t *testing.T) {
	var kept []sse.Event
	for i := range 20 {
		body := strings.Repeat("x", i*1000)
		r := sse.NewReader(context.Background(), io.NopCloser(strings.NewReader("data: "+body+"\n\n")))
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if _, err := r.Next(); err == nil {
			t.Fatal("Next after Close and the end of the stream succeeded")
		}
		kept = append(kept, e)
	}
	for i, e := range kept {
		if string(e.Data) != strings.Repeat("x", i*1000) {
			t.Fatalf("event %d changed after its Reader was closed: %d bytes", i, len(e.Data))
		}
	}
}

// endSource is a pipe's reading end that records whether a read reached
// the end of the stream before it was closed.
type endSource struct {
	*io.PipeReader
	mu     sync.Mutex
	sawEOF bool
}

func (s *endSource) Read(p []byte) (int, error) {
	n, err := s.PipeReader.Read(p)
	if err == io.EOF {
		s.mu.Lock()
		s.sawEOF = true
		s.mu.Unlock()
	}
	return n, err
}

func (s *endSource) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sawEOF
}

// TestFinish checks the read of what follows a stream's end: the rest is
// read to its end when it comes within the bounds (an HTTP body then keeps
// its connection), and a source that stays open or goes on past the byte
// bound is closed after a bounded wait, never waited on.
func TestFinish(t *testing.T) {
	tests := []struct {
		name string
		// rest writes what follows the terminal event on w; it may block
		// until the reader closes.
		rest      func(w *io.PipeWriter)
		wantEnded bool
	}{
		{"rest at once", func(w *io.PipeWriter) { _, _ = w.Write([]byte("\n\n")); w.Close() }, true},
		{"rest a moment later", func(w *io.PipeWriter) {
			time.Sleep(5 * time.Millisecond)
			_, _ = w.Write([]byte(": bye\n\n"))
			w.Close()
		}, true},
		{"nothing more", func(w *io.PipeWriter) { w.Close() }, true},
		{"held open", func(*io.PipeWriter) {}, false},
		{"goes on past the bound", func(w *io.PipeWriter) {
			for {
				if _, err := w.Write(make([]byte, 512)); err != nil {
					return
				}
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			src := &endSource{PipeReader: pr}
			var wg sync.WaitGroup
			defer wg.Wait()
			wg.Go(func() {
				if _, err := pw.Write([]byte("data: [DONE]\n\n")); err != nil {
					return
				}
				tt.rest(pw)
			})
			r := sse.NewReader(context.Background(), src)
			r.DrainBytes, r.DrainTime = 4096, time.Second
			if tt.name == "held open" {
				r.DrainTime = 20 * time.Millisecond
			}
			if e, err := r.Next(); err != nil || string(e.Data) != "[DONE]" {
				t.Fatalf("Next = %q, %v", e.Data, err)
			}
			start := time.Now()
			if err := r.Finish(); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 900*time.Millisecond {
				t.Errorf("Finish took %v", d)
			}
			if got := src.ended(); got != tt.wantEnded {
				t.Errorf("source read to its end = %v, want %v", got, tt.wantEnded)
			}
			if _, err := pw.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("write after Finish: %v, want io.ErrClosedPipe (the source closed)", err)
			}
		})
	}
}

// TestFinishAfterError checks that Finish reads nothing more from a stream
// that failed: it closes the source as Close does.
func TestFinishAfterError(t *testing.T) {
	pr, pw := io.Pipe()
	src := &endSource{PipeReader: pr}
	go func() { _, _ = pw.Write([]byte("data: " + strings.Repeat("x", 200) + "\n\n")) }()
	r := sse.NewReader(context.Background(), src)
	r.MaxEventSize = 100
	if _, err := r.Next(); !errors.Is(err, sse.ErrEventTooLarge) {
		t.Fatalf("Next: %v, want ErrEventTooLarge", err)
	}
	start := time.Now()
	if err := r.Finish(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > sse.DefaultDrainTime/2 {
		t.Errorf("Finish waited %v after an error", d)
	}
	if _, err := pw.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write after Finish: %v, want io.ErrClosedPipe", err)
	}
}
