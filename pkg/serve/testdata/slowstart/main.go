// Command slowstart is a test plugin that waits before its handshake, so
// that a test sees the server before its tools are loaded.
package main

import (
	"context"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

type input struct{}

func main() {
	time.Sleep(1500 * time.Millisecond)
	tool.Serve(tool.New("slow_hello", "Says hello, eventually.",
		func(context.Context, input, tool.Emit) (any, error) { return "hello", nil }))
}
