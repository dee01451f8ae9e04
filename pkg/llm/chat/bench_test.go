package chat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// benchStream is a chat stream shaped like OpenAI's (the openai-text
// fixture's chunks): n text deltas, a finish chunk, usage and [DONE].
func benchStream(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0","object":"chat.completion.chunk","created":1770933892,"model":"gpt-4.1-nano-2025-04-14","service_tier":"default","system_fingerprint":"fp_de604bd877","choices":[{"index":0,"delta":{"content":" word%d"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"yoKFv"}`+"\n\n", i%10)
	}
	b.WriteString(`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":16,"completion_tokens":300,"total_tokens":316}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkStream measures SSE parsing plus delta dispatch for a chat stream:
// "decode" is the adapter's stream reader handing deltas to a callback,
// "pipe" is the whole Stream path (provider.ReadStream, eino's stream pipe
// and a consumer calling Recv). It reports throughput over the stream's bytes
// and allocations per delta.
func BenchmarkStream(b *testing.B) {
	const deltas = 2000
	in := benchStream(deltas)
	b.Run("decode", func(b *testing.B) {
		benchDeltas(b, in, deltas, func() int {
			n := 0
			r := sse.NewReader(context.Background(), bytes.NewReader(in))
			if err := readStream(context.Background(), r, func(*schema.Message) bool { n++; return true }); err != nil {
				b.Fatal(err)
			}
			return n
		})
	})
	b.Run("pipe", func(b *testing.B) {
		benchDeltas(b, in, deltas, func() int {
			resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(in))}
			sr, err := provider.ReadStream(context.Background(), resp, decodeWhole, func(r *sse.Reader, emit func(*schema.Message) bool) error {
				return readStream(context.Background(), r, emit)
			})
			if err != nil {
				b.Fatal(err)
			}
			defer sr.Close()
			n := 0
			for {
				_, err := sr.Recv()
				if errors.Is(err, io.EOF) {
					return n
				}
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
		})
	})
}

func benchDeltas(b *testing.B, in []byte, deltas int, run func() int) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for b.Loop() {
		if n := run(); n != deltas+2 { // the model's name, the deltas and the final chunk
			b.Fatalf("got %d chunks, want %d", n, deltas+2)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(b.N*deltas), "allocs/delta")
}
