//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 (SEP-2577), but servers of the versions before still sample: the tests' server does too.

package mcptest

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// askModel samples the client's model during the call, as askUser asks.
func askModel(_ context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
	r, ok := req.Params.InputResponses["model"].(*sdk.CreateMessageWithToolsResult)
	if !ok {
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"model": &sdk.CreateMessageParams{MaxTokens: 50, SystemPrompt: "Be brief.",
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: in.Text}}}}}}, nil, nil
	}
	var text string
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			text += t.Text
		}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s said: %s", r.Model, text)}}}, nil, nil
}
