package sse_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// benchStream builds a stream shaped like a Responses API text stream: n
// typed events with a JSON data line each.
func benchStream(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":%d,\"item_id\":\"msg_0a63f40a2632b74300699f8819a5e08196ac270722d369af5a\",\"output_index\":0,\"content_index\":0,\"delta\":\" token\"}\n\n", i)
	}
	return b.Bytes()
}

// BenchmarkReader measures SSE parsing alone: bytes per second and
// allocations per event.
func BenchmarkReader(b *testing.B) {
	const events = 10_000
	in := benchStream(events)
	b.SetBytes(int64(len(in)))
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for b.Loop() {
		r := sse.NewReader(context.Background(), bytes.NewReader(in))
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != events {
			b.Fatalf("read %d events, want %d", n, events)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*events), "allocs/event")
}

// BenchmarkReaderPerRequest reads a short stream per Reader, as each model
// request does: the read buffer comes from the previous Reader.
func BenchmarkReaderPerRequest(b *testing.B) {
	in := benchStream(20)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := sse.NewReader(context.Background(), io.NopCloser(bytes.NewReader(in)))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		r.Close()
	}
}
