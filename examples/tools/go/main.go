// Command showcase is a tool plugin in Go showing every feature of sdk/tool.
// The same tools exist in Python (../python) and Node.js (../node); the
// conformance suite (tests/conformance) runs one contract against all three.
//
//	go build -o mytools/ ./examples/tools/go && toolhost call mytools greet '{"name":"Ada"}'
package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

// redDot is a 1x1 red PNG.
var redDot, _ = hex.DecodeString("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082")

type greeting struct {
	Name    string `json:"name" jsonschema:"who to greet"`
	Excited bool   `json:"excited,omitempty" jsonschema:"end with an exclamation mark"`
}

type count struct {
	N int `json:"n" jsonschema:"how far to count"`
}

type shell struct {
	Command string `json:"command" jsonschema:"a sh command line"`
}

type finish struct {
	Summary string `json:"summary"`
}

type fail struct {
	Message string `json:"message"`
}

type crash struct {
	Code int `json:"code"`
}

type sleep struct {
	Seconds float64 `json:"seconds"`
}

type swarm struct {
	N int `json:"n" jsonschema:"how many sleeping processes to start"`
}

type none struct{}

func main() {
	tool.Serve(
		tool.New("greet", "Greets someone by name.",
			func(ctx context.Context, in greeting, emit tool.Emit) (any, error) {
				emit("thinking of a greeting")
				end := "."
				if in.Excited {
					end = "!"
				}
				return "Hello, " + in.Name + end, nil
			}, tool.ReadOnly(), tool.Idempotent(),
			// What one call may use, its whole process tree together; the
			// host caps it by its own maximums.
			tool.WithLimits(tool.Limits{MemoryBytes: 256 << 20, MaxProcesses: 64, CPUTime: 10 * time.Second, MaxOpenFiles: 256})),
		tool.New("count", "Counts to n: each number as live output, on stdout and on stderr.",
			func(ctx context.Context, in count, emit tool.Emit) (any, error) {
				for i := 1; i <= in.N; i++ {
					emit(fmt.Sprintf("emit %d\n", i))
					fmt.Printf("stdout %d\n", i)
					fmt.Fprintf(os.Stderr, "stderr %d\n", i)
				}
				return map[string]int{"counted": in.N}, nil
			}),
		tool.New("shell", "Runs a sh command; its output streams live.",
			func(ctx context.Context, in shell, emit tool.Emit) (any, error) {
				err := tool.Run(ctx, exec.Command("sh", "-c", in.Command))
				return map[string]int{"exitCode": tool.ExitCode(err)}, nil
			}),
		tool.New("finish", "Ends the agent's loop with a summary.",
			func(ctx context.Context, in finish, emit tool.Emit) (any, error) {
				return tool.Stop(in.Summary), nil
			}),
		tool.New("picture", "Returns a caption and a picture.",
			func(ctx context.Context, in none, emit tool.Emit) (any, error) {
				return tool.Content{tool.Text("a red dot"), tool.Image("image/png", redDot)}, nil
			}, tool.ReadOnly()),
		tool.New("fail", "Fails with the given message.",
			func(ctx context.Context, in fail, emit tool.Emit) (any, error) {
				return nil, errors.New(in.Message)
			}),
		tool.New("explode", "Raises an exception.",
			func(ctx context.Context, in none, emit tool.Emit) (any, error) {
				panic("kaboom")
			}),
		tool.New("crash", "Exits the plugin process at once.",
			func(ctx context.Context, in crash, emit tool.Emit) (any, error) {
				os.Exit(in.Code)
				return nil, nil
			}),
		tool.New("spawn", "Starts a process tree that sleeps, reports its pids and waits.",
			func(ctx context.Context, in none, emit tool.Emit) (any, error) {
				// sh starts a grandchild in the background and reports both pids.
				_ = tool.Run(ctx, exec.Command("sh", "-c", `sleep 300 & echo "pids $$ $!"; wait`))
				return "the tree ended", nil
			}),
		tool.New("hog", "Allocates memory without end, 8 MiB at a time, saying how far it got; the host's memory limit kills it.",
			func(ctx context.Context, in none, emit tool.Emit) (any, error) {
				var held [][]byte
				for ctx.Err() == nil {
					b := make([]byte, 8<<20)
					for i := 0; i < len(b); i += 4096 {
						b[i] = 1 // touch every page: memory counts once it is used
					}
					held = append(held, b)
					emit(fmt.Sprintf("%d MiB\n", 8*len(held)))
				}
				return nil, ctx.Err()
			}),
		tool.New("swarm", "Starts n sleeping processes and waits for them; past 32 processes the host kills the call.",
			func(ctx context.Context, in swarm, emit tool.Emit) (any, error) {
				err := tool.Run(ctx, exec.Command("sh", "-c", `i=0; while [ $i -lt "$1" ]; do sleep 30 & i=$((i+1)); done; wait`, "sh", strconv.Itoa(in.N)))
				return map[string]int{"exitCode": tool.ExitCode(err)}, nil
			}, tool.WithLimits(tool.Limits{MaxProcesses: 32})),
		tool.New("spin", "Spins on the CPU; past 250ms of CPU time the host kills it.",
			func(ctx context.Context, in none, emit tool.Emit) (any, error) {
				for ctx.Err() == nil {
				}
				return nil, ctx.Err()
			}, tool.WithLimits(tool.Limits{CPUTime: 250 * time.Millisecond})),
		tool.New("traced", "Returns the call's trace context and runs a command that prints the TRACEPARENT and TRACESTATE it got.",
			func(ctx context.Context, in none, emit tool.Emit) (any, error) {
				// ctx holds the host's span of the call: spans started from it
				// with an OpenTelemetry SDK join the host's trace.
				tc := tool.TraceContext(ctx)
				err := tool.Run(ctx, exec.Command("sh", "-c", `echo "$TRACEPARENT|$TRACESTATE"`))
				return map[string]string{"traceparent": tc["traceparent"], "tracestate": tc["tracestate"]}, err
			}, tool.ReadOnly()),
		tool.New("keyed", "Returns the call's id, idempotency key and attempt.",
			func(ctx context.Context, in none, emit tool.Emit) (any, error) {
				c := tool.CallInfo(ctx)
				return map[string]any{"call_id": c.ID, "idempotency_key": c.IdempotencyKey, "attempt": c.Attempt}, nil
			}, tool.ReadOnly()),
		tool.New("slow", "Sleeps; the host kills it after 1s.",
			func(ctx context.Context, in sleep, emit tool.Emit) (any, error) {
				time.Sleep(time.Duration(in.Seconds * float64(time.Second)))
				return "woke up", nil
			}, tool.Timeout(time.Second)),
	)
}
