// Command hello is a tool plugin offering say_hello.
package main

import (
	"context"

	"github.com/agentcore/agentcore/sdk/tool"
)

type input struct {
	Name string `json:"name" jsonschema:"the name of the person to greet"`
}

func main() {
	tool.Serve(tool.New("say_hello", "Greets the given person by name.",
		func(_ context.Context, in input, _ tool.Emit) (any, error) {
			return "Hello, " + in.Name + "!", nil
		}, tool.ReadOnly(), tool.Idempotent()))
}
