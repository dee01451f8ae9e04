// Command shell is a tool plugin offering shell: run a bash command, its
// stdout and stderr streamed live.
package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sync"
	"time"

	"github.com/agentcore/agentcore/sdk/tool"
)

// maxOutput is how much combined output the result keeps (its tail).
const maxOutput = 64 << 10

type input struct {
	Command string  `json:"command" jsonschema:"the bash command line to run"`
	Timeout float64 `json:"timeout,omitempty" jsonschema:"seconds after which the command and its children are killed; no limit when absent"`
}

type result struct {
	ExitCode int    `json:"exitCode"`
	TimedOut bool   `json:"timedOut,omitempty"`
	Output   string `json:"output"`
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - maxOutput; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func run(ctx context.Context, in input, _ tool.Emit) (any, error) {
	if in.Command == "" {
		return nil, errors.New("command is empty")
	}
	if in.Timeout < 0 {
		return nil, errors.New("timeout must not be negative")
	}
	runCtx, cancel := context.WithCancel(ctx)
	if in.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, time.Duration(in.Timeout*float64(time.Second)))
	}
	defer cancel()
	var out tail
	cmd := exec.Command("bash", "-c", in.Command)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := tool.Run(runCtx, cmd)
	res := result{ExitCode: tool.ExitCode(err), Output: out.buf.String()}
	if ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
		return res, nil
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return nil, err
	}
	return res, nil
}

func main() {
	tool.Serve(tool.New("shell", "Runs a bash command. Its stdout and stderr stream live; the result has the exit code "+
		"and the combined output (its last 64 KiB).", run))
}
