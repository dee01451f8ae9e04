// Command testplug is a test plugin with one tool per behaviour the host
// must handle: output, crashes, hangs, grandchildren, bad results.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

type empty struct{}

type text struct {
	Text string `json:"text"`
}

type code struct {
	Code int `json:"code"`
}

type span struct {
	MS int `json:"ms"`
}

type size struct {
	N int `json:"n"`
}

type shell struct {
	Shell bool `json:"shell,omitempty"`
}

type nums struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func loop(ctx context.Context, _ empty, emit tool.Emit) (any, error) {
	emit("started")
	for {
	}
}

// A 1x1 PNG.
var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func main() {
	tool.Serve(
		tool.New("echo", "Returns its text.", func(_ context.Context, in text, _ tool.Emit) (any, error) {
			return in.Text, nil
		}),
		tool.New("add", "Adds two numbers.", func(_ context.Context, in nums, _ tool.Emit) (any, error) {
			return in.A + in.B, nil
		}),
		tool.New("pid", "Returns the plugin's process id.", func(context.Context, empty, tool.Emit) (any, error) {
			return os.Getpid(), nil
		}),
		tool.New("loop", "Spins forever.", loop),
		tool.New("loop_timeout", "Spins forever, with a timeout.", loop, tool.Timeout(300*time.Millisecond)),
		tool.New("panic", "Panics.", func(context.Context, empty, tool.Emit) (any, error) {
			panic("boom")
		}),
		tool.New("exit", "Exits the process.", func(_ context.Context, in code, _ tool.Emit) (any, error) {
			fmt.Fprintln(os.Stderr, "exiting with", in.Code)
			os.Exit(in.Code)
			return nil, nil
		}),
		tool.New("segfault", "Faults outside any recover.", func(context.Context, empty, tool.Emit) (any, error) {
			go func() {
				var p *int
				*p = 1
			}()
			select {}
		}),
		tool.New("sigkill", "Dies like an OOM kill.", func(context.Context, empty, tool.Emit) (any, error) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}),
		tool.New("grandchild", "Starts sleep, reports pids, blocks.", func(_ context.Context, in shell, emit tool.Emit) (any, error) {
			var cmd *exec.Cmd
			if in.Shell {
				cmd = exec.Command("bash", "-c", "sleep 1000 & echo $!; wait")
			} else {
				cmd = exec.Command("sleep", "1000")
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				return nil, err
			}
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			sleepPid := cmd.Process.Pid
			if in.Shell {
				var pid int
				if _, err := fmt.Fscan(out, &pid); err != nil {
					return nil, err
				}
				sleepPid = pid
			}
			emit(fmt.Sprintf("pids %d %d\n", os.Getpid(), sleepPid))
			select {}
		}),
		tool.New("stdio", "Writes to stdout and stderr, runs a command, emits.", func(ctx context.Context, _ empty, emit tool.Emit) (any, error) {
			fmt.Println("go-stdout")
			fmt.Fprintln(os.Stderr, "go-stderr")
			emit("emitted")
			if err := tool.Run(ctx, exec.Command("sh", "-c", "echo cmd-stdout; echo cmd-stderr >&2; echo inherited >&1")); err != nil {
				return nil, err
			}
			// A child writing straight to the inherited fd 1.
			c := exec.Command("sh", "-c", "echo raw-fd-1")
			c.Stdout = os.Stdout
			if err := c.Run(); err != nil {
				return nil, err
			}
			fmt.Print(strings.Repeat("x", 100000), "\n")
			fmt.Println("last-line")
			return "done", nil
		}),
		tool.New("span", "Sleeps, reporting when it ran.", func(_ context.Context, in span, _ tool.Emit) (any, error) {
			start := time.Now()
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return map[string]any{"start": start.UnixNano(), "end": time.Now().UnixNano(), "pid": os.Getpid()}, nil
		}),
		tool.New("big", "Returns n characters.", func(_ context.Context, in size, _ tool.Emit) (any, error) {
			return strings.Repeat("a", in.N/2) + strings.Repeat("z", in.N-in.N/2), nil
		}),
		tool.New("image", "Returns text and an image.", func(context.Context, empty, tool.Emit) (any, error) {
			return tool.Content{tool.Text(strings.Repeat("t", 1000)), tool.Image("image/png", png), {Type: "image", Data: png}}, nil
		}),
		tool.New("badpart", "Returns an invalid part.", func(context.Context, empty, tool.Emit) (any, error) {
			return tool.Content{tool.Text("ok"), {Type: "media", Data: png}}, nil
		}),
		tool.New("unserialisable", "Returns a channel.", func(context.Context, empty, tool.Emit) (any, error) {
			return map[string]any{"c": make(chan int)}, nil
		}),
		tool.New("stop", "Stops the loop.", func(context.Context, empty, tool.Emit) (any, error) {
			return tool.Stop("bye"), nil
		}),
		tool.New("fail", "Returns an error.", func(context.Context, empty, tool.Emit) (any, error) {
			return nil, fmt.Errorf("it went wrong")
		}),
		tool.Raw("raw", "Echoes its raw input.", json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer","minimum":1}},"required":["x"]}`),
			func(_ context.Context, input json.RawMessage, _ tool.Emit) (any, error) {
				return input, nil
			}, tool.ReadOnly(), tool.Idempotent()),
	)
}
