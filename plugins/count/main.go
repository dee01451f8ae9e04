// Command count is a tool plugin offering count, which streams its progress.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

type input struct {
	N       int `json:"n" jsonschema:"how far to count, 1 to 10000"`
	DelayMS int `json:"delay_ms,omitempty" jsonschema:"pause between numbers in milliseconds (default 100)"`
}

func count(ctx context.Context, in input, emit tool.Emit) (any, error) {
	if in.N < 1 || in.N > 10000 {
		return nil, errors.New("n must be between 1 and 10000")
	}
	delay := 100 * time.Millisecond
	if in.DelayMS > 0 {
		delay = time.Duration(in.DelayMS) * time.Millisecond
	}
	for i := 1; i <= in.N; i++ {
		emit(fmt.Sprintf("counted to %d\n", i))
		if i == in.N {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	return fmt.Sprintf("counted to %d", in.N), nil
}

func main() {
	tool.Serve(tool.New("count", `Counts from 1 to n, streaming "counted to i" as it goes.`, count,
		tool.ReadOnly(), tool.Idempotent()))
}
