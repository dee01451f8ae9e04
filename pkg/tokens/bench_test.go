package tokens

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// BenchmarkNewEncoder measures building an encoder from the embedded ranks.
func BenchmarkNewEncoder(b *testing.B) {
	for _, e := range []Encoding{O200kBase, Cl100kBase} {
		b.Run(string(e), func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				if _, err := NewEncoder(e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/encoder")
		})
	}
}

// BenchmarkCount measures counting fresh text: tokens per second.
func BenchmarkCount(b *testing.B) {
	enc := encoder(b, O200kBase)
	text := strings.Repeat("The agent reads a.json, finds port 8080 and 帮我读一下配置. ", 200)
	n := enc.Count(text)
	b.SetBytes(int64(len(text)))
	start := time.Now()
	for b.Loop() {
		enc.Count(text)
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "tokens/s")
}

// BenchmarkCounterCached measures the count of a 1,000-message history
// whose counts are cached, as in every step after the first.
func BenchmarkCounterCached(b *testing.B) {
	c := NewCounter(encoder(b, O200kBase))
	h := make([]*agentv1.Message, 1000)
	for i := range h {
		h[i] = history.User(fmt.Sprintf("message %d with some words in it", i))
	}
	c.Messages(h, false)
	start := time.Now()
	for b.Loop() {
		c.Messages(h, false)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*len(h)), "ns/message")
}
