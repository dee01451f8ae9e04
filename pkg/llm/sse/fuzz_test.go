package sse_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// reference parses a whole stream the simple way: split into lines first,
// then apply the fields. Reader must agree with it for any input and any way
// the input is cut into reads.
func reference(in []byte) []ev {
	s := strings.TrimPrefix(string(in), "\xEF\xBB\xBF")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the text ended with a line end
	}
	var (
		out     []ev
		data    []string
		hasData bool
		typ, id string
	)
	flush := func() {
		if hasData {
			out = append(out, ev{typ, strings.Join(data, "\n"), id})
		}
		data, hasData, typ = nil, false, ""
	}
	for _, l := range lines {
		if l == "" {
			flush()
			continue
		}
		if l[0] == ':' {
			continue
		}
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "data":
			data, hasData = append(data, value), true
		case "event":
			typ = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	flush()
	return out
}

// chunked cuts in into reads whose sizes follow sizes (cycled).
type chunked struct {
	in    []byte
	sizes []byte
	i     int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%17 + 1
		c.i++
	}
	n = min(n, len(p), len(c.in))
	copy(p, c.in[:n])
	c.in = c.in[n:]
	return n, nil
}

// FuzzReader checks that Reader never panics, always ends, and agrees with
// the reference parser however the input is split into reads.
func FuzzReader(f *testing.F) {
	seeds := []string{
		"data: hello\n\n",
		"event: response.output_text.delta\ndata: {\"delta\":\"x\"}\n\n",
		"data: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		": comment\n\ndata\n\n",
		"id: 1\nretry: 100\ndata: x\n\n",
		"\xEF\xBB\xBFdata: bom\n\n",
		"data: [DONE]",
		"data: a\r",
		"\r\n\r\n\n\r",
		"id: a\x00b\ndata: z\n\n",
		"data:" + strings.Repeat("y", 300) + "\n\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), []byte{0})
		f.Add([]byte(s), []byte{3, 250, 7})
	}
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		want := reference(in)
		for _, src := range []io.Reader{
			bytes.NewReader(in),
			&chunked{in: in, sizes: sizes},
			iotest.DataErrReader(&chunked{in: in, sizes: sizes}),
		} {
			done := make(chan struct{})
			var got []ev
			var err error
			go func() {
				defer close(done)
				got, err = readAll(t, src)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("reader did not finish on %q", in)
			}
			if err != io.EOF {
				t.Fatalf("err = %v on %q", err, in)
			}
			if !equal(got, want) {
				t.Fatalf("on %q\n got %q\nwant %q", in, got, want)
			}
		}
	})
}

// FuzzReaderCancel checks that a reader of a body that stops sending returns
// once its context is cancelled, whatever was sent before.
func FuzzReaderCancel(f *testing.F) {
	f.Add([]byte("data: a\n\ndata: b"))
	f.Add([]byte("event: x\r"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, in []byte) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = pw.Write(in) // ends when the reader closes the pipe
		}()
		ctx, cancel := context.WithCancel(context.Background())
		r := sse.NewReader(ctx, pr)
		defer r.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				if _, err := r.Next(); err != nil {
					return
				}
			}
		}()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("reader did not return after cancel on %q", in)
		}
	})
}
