// Package plugins_test runs the ready plugins as real processes through
// pkg/tool, the way agent-server runs them.
package plugins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

var set *tool.Set

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "plugins")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("go", "build", "-o", dir+"/", "./...")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the plugins:", err)
		return 1
	}
	host := tool.NewHost(tool.Config{})
	defer host.Close()
	set, err = host.Scan(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scan:", err)
		return 1
	}
	return m.Run()
}

type call struct {
	res    tool.Result
	chunks []tool.Chunk
}

func (c call) text() string { return tool.OutputText(c.res.Output) }

func (c call) stream(s agentv1.OutputStream) string {
	var b strings.Builder
	for _, ch := range c.chunks {
		if ch.Stream == s {
			b.WriteString(ch.Data)
		}
	}
	return b.String()
}

func execute(t *testing.T, name, input string) call {
	t.Helper()
	var c call
	c.res = set.Execute(context.Background(), name, json.RawMessage(input), tool.Options{
		OnOutput: func(ch tool.Chunk) { c.chunks = append(c.chunks, ch) },
	})
	return c
}

func TestEveryPluginIsFound(t *testing.T) {
	want := "add,bar_chart,count,finish,list_dir,multiply,read_file,say_hello,shell,write_file"
	if got := strings.Join(set.Names(), ","); got != want {
		t.Fatalf("tools = %s, want %s", got, want)
	}
}

func TestSimplePlugins(t *testing.T) {
	tests := []struct {
		tool, input, want string
		isErr, stop       bool
	}{
		{"say_hello", `{"name":"Ada"}`, "Hello, Ada!", false, false},
		{"add", `{"a":2,"b":3}`, "5", false, false},
		{"multiply", `{"a":2,"b":3.5}`, "7", false, false},
		{"finish", `{"summary":"all done"}`, "all done", false, true},
		{"count", `{"n":0}`, "n must be between 1 and 10000", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			c := execute(t, tt.tool, tt.input)
			if c.res.Error != tt.isErr || c.res.Stop != tt.stop || c.text() != tt.want {
				t.Fatalf("%s = %+v (%q)", tt.tool, c.res, c.text())
			}
		})
	}
}

func TestCountStreams(t *testing.T) {
	c := execute(t, "count", `{"n":3,"delay_ms":1}`)
	if c.res.Error || c.text() != "counted to 3" {
		t.Fatalf("result = %q", c.text())
	}
	if got := c.stream(agentv1.OutputStream_OUTPUT_STREAM_OUTPUT); got != "counted to 1\ncounted to 2\ncounted to 3\n" {
		t.Fatalf("stream = %q", got)
	}
}

func TestShell(t *testing.T) {
	c := execute(t, "shell", `{"command":"echo out; echo err >&2; exit 3"}`)
	var res struct {
		ExitCode int    `json:"exitCode"`
		TimedOut bool   `json:"timedOut"`
		Output   string `json:"output"`
	}
	if err := json.Unmarshal([]byte(c.text()), &res); err != nil || c.res.Error {
		t.Fatalf("result = %q", c.text())
	}
	// stdout and stderr are two pipes: their interleaving in the combined
	// output is not defined, only that both are there.
	if res.ExitCode != 3 || res.TimedOut || (res.Output != "out\nerr\n" && res.Output != "err\nout\n") {
		t.Fatalf("result = %+v", res)
	}
	if c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT) != "out\n" || c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDERR) != "err\n" {
		t.Fatalf("chunks = %v", c.chunks)
	}

	start := time.Now()
	c = execute(t, "shell", `{"command":"sleep 30 & echo $!; wait","timeout":0.3}`)
	if err := json.Unmarshal([]byte(c.text()), &res); err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("timeout result = %q", c.text())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the timeout took %v", d)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT)))
	if err != nil {
		t.Fatalf("stdout = %q", c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT))
	}
	// SIGKILL is delivered at once, but the process may take a moment to
	// die under load: wait for it with a generous deadline.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if !running(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background sleep %d survived the shell timeout", pid)
		}
	}
}

// running reports whether pid is a live process (a zombie is dead).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return len(b) > 0 && !strings.Contains(string(b), ") Z ")
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "a.txt")
	in, _ := json.Marshal(map[string]string{"path": path, "content": "one\ntwo\nthree\nfour\nfive\n"})
	if c := execute(t, "write_file", string(in)); c.res.Error || !strings.Contains(c.text(), "wrote 24 bytes") {
		t.Fatalf("write_file = %q", c.text())
	}
	in, _ = json.Marshal(map[string]any{"path": path, "offset": 2, "limit": 2})
	if c := execute(t, "read_file", string(in)); c.text() != "two\nthree\n[lines 2-3 of 5; call read_file with offset=4 to read on]" {
		t.Fatalf("read_file page = %q", c.text())
	}
	in, _ = json.Marshal(map[string]any{"path": path})
	if c := execute(t, "read_file", string(in)); c.text() != "one\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("read_file whole = %q", c.text())
	}
	in, _ = json.Marshal(map[string]any{"path": path, "offset": 9})
	if c := execute(t, "read_file", string(in)); !c.res.Error || !strings.Contains(c.text(), "past the end") {
		t.Fatalf("read_file past the end = %q", c.text())
	}
	// Bounds: bytes per line, bytes per call, and a file without end.
	long := filepath.Join(t.TempDir(), "long.txt")
	body := "short\n" + strings.Repeat("x", 5000) + "\n" + strings.Repeat(strings.Repeat("y", 1000)+"\n", 200)
	if err := os.WriteFile(long, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ = json.Marshal(map[string]any{"path": long})
	c := execute(t, "read_file", string(in))
	if got := c.text(); c.res.Error || !strings.HasPrefix(got, "short\n"+strings.Repeat("x", 2000)+"… [line 2 cut: 3001 more bytes]\ny") ||
		len(got) > 70<<10 || !strings.Contains(got, "of 202 (a call returns at most 64 KiB); call read_file with offset=") {
		t.Fatalf("read_file of long lines: %d bytes, %.100q … %q", len(got), got, got[max(len(got)-200, 0):])
	}
	in, _ = json.Marshal(map[string]any{"path": "/dev/zero"})
	start := time.Now()
	c = execute(t, "read_file", string(in))
	if got := c.text(); c.res.Error || len(got) > 3000 || !strings.Contains(got, "[lines 1-1 of more than 1;") || time.Since(start) > 10*time.Second {
		t.Fatalf("read_file /dev/zero: %v, %d bytes: %q", c.res.Error, len(got), got[max(len(got)-200, 0):])
	}
	in, _ = json.Marshal(map[string]any{"path": dir})
	c = execute(t, "list_dir", string(in))
	if c.res.Error || c.text() != `[{"name":"sub","type":"dir"}]` {
		t.Fatalf("list_dir = %q", c.text())
	}
	in, _ = json.Marshal(map[string]any{"path": filepath.Join(dir, "missing")})
	if c := execute(t, "read_file", string(in)); !c.res.Error || !strings.Contains(c.text(), "no such file") {
		t.Fatalf("read_file missing = %q", c.text())
	}
}

func TestChartReturnsAPNG(t *testing.T) {
	c := execute(t, "bar_chart", `{"values":[1,4,-2,3],"width":200,"height":100}`)
	parts := c.res.Output.GetContent().GetParts()
	if c.res.Error || len(parts) != 2 || !strings.Contains(parts[0].GetText(), "the largest is 4 at position 2") {
		t.Fatalf("result = %v", c.res.Output)
	}
	f := parts[1].GetFile()
	img, err := png.Decode(bytes.NewReader(f.GetData()))
	if err != nil || f.GetMediaType() != "image/png" {
		t.Fatalf("image: %v (%s)", err, f.GetMediaType())
	}
	if b := img.Bounds(); b.Dx() != 200 || b.Dy() != 100 {
		t.Fatalf("size = %v", b)
	}
	if c := execute(t, "bar_chart", `{"values":[]}`); !c.res.Error {
		t.Fatal("an empty chart was drawn")
	}
}
