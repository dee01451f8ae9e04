package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/mcptest"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
)

// BenchmarkMCPCall measures one call of an MCP server's tool over stdio
// through toolhost, as agent-server makes it (a warm toolhost process, idle
// in its pool), with a connection and a server process per call and with
// "reuse", against the same call (echo) on a plain plugin. Each reports the
// median of its calls as median-µs.
//
//	go test -run '^$' -bench MCPCall ./cmd/toolhost
func BenchmarkMCPCall(b *testing.B) {
	for _, c := range []struct {
		name string
		path func(b *testing.B) string
	}{
		{"mcp-per-call", func(b *testing.B) string { return writeDef(b, "stdio", mcptest.VariantFull, "").path }},
		{"mcp-reuse", func(b *testing.B) string { return writeDef(b, "stdio", mcptest.VariantFull, `"reuse": true`).path }},
		{"plugin", func(*testing.B) string { return testplug }},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := tool.NewHost(tool.Config{SocketDir: b.TempDir(), Kinds: []tool.Kind{mcp.Kind(toolhost)}})
			defer h.Close()
			set, err := h.Scan(b.Context(), c.path(b))
			if err != nil {
				b.Fatal(err)
			}
			input := json.RawMessage(`{"text":"x"}`)
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res := set.Execute(b.Context(), "echo", input, tool.Options{})
				took = append(took, time.Since(start))
				if res.Error {
					b.Fatal(tool.OutputText(res.Output))
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "median-µs")
		})
	}
}
