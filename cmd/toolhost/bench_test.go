package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/mcptest"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
)

// BenchmarkMCPCall measures one call of an MCP server's tool over stdio
// through toolhost, as agent-server makes it (a warm toolhost process, idle
// in its pool), with a connection and a server process per call and with
// "reuse", against the same call (echo) on a plain plugin. Each reports the
// median of its calls as median-µs.
//
//	go test -run '^$' -bench MCPCall ./cmd/toolhost
func BenchmarkMCPCall(b *testing.B) {
	for _, c := range []struct {
		name string
		path func(b *testing.B) string
	}{
		{"mcp-per-call", func(b *testing.B) string { return writeDef(b, "stdio", mcptest.VariantFull, "").path }},
		{"mcp-reuse", func(b *testing.B) string { return writeDef(b, "stdio", mcptest.VariantFull, `"reuse": true`).path }},
		{"plugin", func(*testing.B) string { return testplug }},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := tool.NewHost(tool.Config{SocketDir: b.TempDir(), Kinds: []tool.Kind{mcp.Kind(toolhost)}})
			defer h.Close()
			set, err := h.Scan(b.Context(), c.path(b))
			if err != nil {
				b.Fatal(err)
			}
			input := json.RawMessage(`{"text":"x"}`)
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res := set.Execute(b.Context(), "echo", input, tool.Options{})
				took = append(took, time.Since(start))
				if res.Error {
					b.Fatal(tool.OutputText(res.Output))
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "median-µs")
		})
	}
}

// BenchmarkCancelToResult measures, through the toolhost binary (pkg/tool
// used as a library by a host that is not agent-server), the time from
// Ctrl-C on a running call to its result on stdout, the process tree known
// dead: tool=loop spins in the plugin alone, tool=shell has started bash
// and sleep (a grandchild, whose zombie needs a reaper once the plugin is
// killed). Each iteration also times, just before, the floor: SIGKILL and
// reap of an idle plugin (the test plugin after its handshake), reported as
// floor-median-µs.
//
//	go test -run '^$' -bench CancelToResult -benchtime 100x ./cmd/toolhost
func BenchmarkCancelToResult(b *testing.B) {
	for _, c := range []struct{ name, tool, input string }{
		{"tool=loop", "loop", `{}`},
		{"tool=shell", "grandchild", `{"shell":true}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took, floor []time.Duration
			for b.Loop() {
				floor = append(floor, killIdlePlugin(b))
				took = append(took, cancelCall(b, c.tool, c.input))
			}
			reportMedian(b, took, "median-µs")
			reportMedian(b, floor, "floor-median-µs")
		})
	}
}

// cancelCall starts `toolhost call` of tool, waits for its first output
// line, sends SIGINT and returns how long the result took to reach stdout.
func cancelCall(b *testing.B, tool, input string) time.Duration {
	cmd := exec.Command(toolhost, "call", testplug, tool, input)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	// The first output: a line (shell's pids), or loop's "started" (no newline).
	var first []byte
	for r := bufio.NewReader(stderr); !bytes.HasSuffix(first, []byte("\n")) && !bytes.HasSuffix(first, []byte("started")); {
		c, err := r.ReadByte()
		if err != nil {
			_ = cmd.Process.Kill()
			b.Fatal(err)
		}
		first = append(first, c)
	}
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		b.Fatal(err)
	}
	if _, err := stdout.Read(make([]byte, 1)); err != nil {
		b.Fatal(err)
	}
	d := time.Since(t0)
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	_, _ = io.Copy(io.Discard, stdout)
	return d
}

// killIdlePlugin starts the test plugin as a host would, waits for its
// handshake, and returns how long its SIGKILL and reap took.
func killIdlePlugin(b *testing.B) time.Duration {
	cmd := exec.Command(filepath.Join(testplug, "testplug"))
	cmd.Env = append(os.Environ(), "AGENTCORE_TOOL_PLUGIN=tool-plugin-v1", "PLUGIN_UNIX_SOCKET_DIR="+b.TempDir(),
		"GOMAXPROCS="+strconv.Itoa(tool.DefaultPluginProcs))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatal(err)
	}
	t0 := time.Now()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return time.Since(t0)
}

func reportMedian(b *testing.B, ts []time.Duration, unit string) {
	slices.Sort(ts)
	b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds())/1e3, unit)
}
