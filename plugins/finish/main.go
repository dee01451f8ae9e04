// Command finish is a tool plugin offering finish, which ends the agent's loop.
package main

import (
	"context"

	"github.com/agentcore/agentcore/sdk/tool"
)

type input struct {
	Summary string `json:"summary" jsonschema:"what was done"`
}

func main() {
	tool.Serve(tool.New("finish", "Call this when the task is complete, with a summary of what was done.",
		func(_ context.Context, in input, _ tool.Emit) (any, error) {
			return tool.Stop(in.Summary), nil
		}))
}
