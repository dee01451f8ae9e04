// Command math is a tool plugin offering add and multiply: one binary, two tools.
package main

import (
	"context"

	"github.com/agentcore/agentcore/sdk/tool"
)

type operands struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

func main() {
	tool.Serve(
		tool.New("add", "Adds two numbers and returns the sum.",
			func(_ context.Context, in operands, _ tool.Emit) (any, error) { return in.A + in.B, nil },
			tool.ReadOnly(), tool.Idempotent()),
		tool.New("multiply", "Multiplies two numbers and returns the product.",
			func(_ context.Context, in operands, _ tool.Emit) (any, error) { return in.A * in.B, nil },
			tool.ReadOnly(), tool.Idempotent()),
	)
}
