package tool

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// commandWaitDelay bounds how long Run waits, once the command has exited,
// for descendants that still hold its stdout or stderr open.
const commandWaitDelay = 500 * time.Millisecond

// Run runs cmd to completion inside a tool call. Its stdout and stderr stream
// live as the call's output, tagged stdout and stderr, and all of it has been
// sent when Run returns, so it arrives before the call's result. Writers
// already set in cmd.Stdout or cmd.Stderr receive a copy. Standard input is
// /dev/null unless cmd.Stdin is set.
//
// The command stays in the plugin's process group, so the host's kill (a
// timeout, a cancelled call, the host dying) takes it and its children along.
// When ctx is done Run kills the command and all its descendants at once.
// When ctx carries a trace context (the host traces the call, see
// [TraceContext]), the command gets it as TRACEPARENT and TRACESTATE in its
// environment, the OpenTelemetry convention for processes, so a traced
// command joins the trace.
// The error is what exec.Cmd.Wait returns (an *exec.ExitError carries the
// exit code), or ctx's error when the command was killed for it.
func Run(ctx context.Context, cmd *exec.Cmd) error {
	c := callFrom(ctx)
	cmd.Stdout = teeTo(cmd.Stdout, c, pluginv1.OutputStream_OUTPUT_STREAM_STDOUT, os.Stdout)
	cmd.Stderr = teeTo(cmd.Stderr, c, pluginv1.OutputStream_OUTPUT_STREAM_STDERR, os.Stderr)
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = commandWaitDelay
	}
	setTraceEnv(ctx, cmd)
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	stop := context.AfterFunc(ctx, func() { killTree(pid) })
	err := cmd.Wait()
	if !stop() {
		return fmt.Errorf("command %s killed: %w", cmd.Path, context.Cause(ctx))
	}
	return err
}

// ExitCode returns the exit code in err from [Run]: 0 for nil, the code for
// an *exec.ExitError, -1 otherwise.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

func teeTo(w io.Writer, c *call, stream pluginv1.OutputStream, fallback io.Writer) io.Writer {
	var out io.Writer = fallback
	if c != nil {
		out = streamWriter{call: c, stream: stream}
	}
	if w == nil {
		return out
	}
	return io.MultiWriter(out, w)
}

// streamWriter sends what is written as chunks of one stream.
type streamWriter struct {
	call   *call
	stream pluginv1.OutputStream
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.call.sendAfterStdio(w.stream, p)
	return len(p), nil
}
