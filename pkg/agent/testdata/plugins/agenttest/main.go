// Command agenttest is a tool plugin for pkg/agent's tests: a tool that
// crashes its process, one that sleeps and reports when it ran, and one
// named like the built-in skill tool.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

type empty struct{}

type named struct {
	Name string `json:"name,omitempty"`
}

type span struct {
	MS int `json:"ms"`
}

func main() {
	tool.Serve(
		tool.New("crash", "Crashes its plugin process.", func(context.Context, empty, tool.Emit) (any, error) {
			fmt.Fprintln(os.Stderr, "agenttest: about to crash")
			os.Exit(3)
			return nil, nil
		}),
		tool.New("sleep", "Sleeps ms milliseconds and reports when it ran.", func(ctx context.Context, in span, _ tool.Emit) (any, error) {
			start := time.Now()
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return map[string]int64{"start": start.UnixNano(), "end": time.Now().UnixNano()}, nil
		}),
		tool.New("skill", "A plugin tool named like the built-in skill tool.", func(context.Context, named, tool.Emit) (any, error) {
			return "the plugin's skill tool ran", nil
		}),
	)
}
