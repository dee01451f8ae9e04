// Command limited is a test plugin whose tools ask for limits of their own
// (sdk/tool's WithLimits), far above what a server allows: its maximums
// must cap them.
package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

type empty struct{}

// hog allocates and fills memory without end, saying how far it got.
func hog(_ context.Context, _ empty, emit tool.Emit) (any, error) {
	var keep [][]byte
	for {
		keep = append(keep, bytes.Repeat([]byte{'x'}, 8<<20))
		emit(fmt.Sprintf("%d MiB\n", 8*len(keep)))
	}
}

func spin(_ context.Context, _ empty, emit tool.Emit) (any, error) {
	emit("spinning\n")
	for {
	}
}

func main() {
	tool.Serve(
		tool.New("greedy_hog", "Asks for 64 GiB of memory; allocates without end.", hog,
			tool.WithLimits(tool.Limits{MemoryBytes: 64 << 30})),
		tool.New("greedy_spin", "Asks for an hour of CPU time; spins.", spin,
			tool.WithLimits(tool.Limits{CPUTime: time.Hour})),
	)
}
