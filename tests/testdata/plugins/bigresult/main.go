// Command bigresult is a test plugin whose tool returns as many bytes as
// asked: what a tool that reads a huge file whole would do.
package main

import (
	"context"
	"strings"

	"github.com/agentcore/agentcore/sdk/tool"
)

type size struct {
	Bytes int `json:"bytes"`
}

func main() {
	tool.Serve(tool.New("big_result", "Returns as many bytes of text as asked.",
		func(_ context.Context, in size, _ tool.Emit) (any, error) {
			return strings.Repeat("a", in.Bytes/2) + strings.Repeat("z", in.Bytes-in.Bytes/2), nil
		}))
}
