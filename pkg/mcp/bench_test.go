package mcp

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkCallStdio measures one MCP tool call over stdio, as toolhost makes
// it once it has discovered: with a connection (and server process) per call,
// and with the connection kept between calls. It reports the median.
//
//	go test -run '^$' -bench CallStdio ./pkg/mcp
func BenchmarkCallStdio(b *testing.B) {
	for _, mode := range []struct {
		name  string
		extra string
	}{
		{"per-call", ""},
		{"reuse", `"reuse": true`},
	} {
		b.Run(mode.name, func(b *testing.B) {
			s := newTestBridge(b, stdioDefinition(b, variantFull, mode.extra))
			if _, err := s.Discover(b.Context()); err != nil {
				b.Fatal(err)
			}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := s.Call(b.Context(), "echo", `{"text":"x"}`, nil)
				took = append(took, time.Since(start))
				if err != nil || res.Error != "" {
					b.Fatalf("%v %v", summary(res), err)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
		})
	}
}
