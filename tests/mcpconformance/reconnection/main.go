// Command reconnection is a tool plugin offering test_reconnection, the
// tool the MCP conformance suite's server-sse-polling scenario calls on a
// POST stream it reads for a priming event, the retry field and the
// answer. It answers at once: agentcore's MCP server does not close a
// call's stream mid-call, so the suite's resume-after-disconnect part is
// informational (it says the answer came on the first stream).
package main

import (
	"context"

	"github.com/agentcore/agentcore/sdk/tool"
)

type input struct{}

func main() {
	tool.Serve(tool.New("test_reconnection", "Answers on the call's stream (the MCP conformance suite's SSE polling scenario).",
		func(context.Context, input, tool.Emit) (any, error) {
			return "reconnection test answered", nil
		}, tool.ReadOnly(), tool.Idempotent()))
}
