package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/mcptest"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// transports are the three ways to reach an MCP server.
var transports = []string{"stdio", "http", "sse"}

// mcpDef is a definition file of a test MCP server.
type mcpDef struct {
	path string
	// http is the in-process server of an http or sse definition.
	http *mcptest.HTTPServer
}

// writeDef declares the test server of the variant over transport in a
// definition file; extra holds more top-level JSON fields. An http or sse
// server runs in this process for the test's duration; a stdio server is the
// mcpserver binary.
func writeDef(t testing.TB, transport, variant, extra string) mcpDef {
	t.Helper()
	var d mcpDef
	var tr string
	if transport == "stdio" {
		tr = fmt.Sprintf(`{"type": "stdio", "command": %q, "args": [%q]}`, mcpserver, variant)
	} else {
		d.http = mcptest.StartHTTP(transport, variant, nil)
		t.Cleanup(d.http.Close)
		tr = fmt.Sprintf(`{"type": %q, "url": %q}`, transport, d.http.URL)
	}
	if extra != "" {
		extra = ", " + extra
	}
	d.path = writeFile(t, t.TempDir(), "server.mcp.json", fmt.Sprintf(`{"transport": %s%s}`, tr, extra))
	return d
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// listJSON runs `toolhost list --json paths...` and returns the tools by name.
func listJSON(t *testing.T, paths ...string) map[string]listItem {
	t.Helper()
	o := runToolhost(t, append([]string{"list", "--json"}, paths...)...)
	var items []listItem
	if err := json.Unmarshal([]byte(o.stdout), &items); err != nil || o.code != 0 {
		t.Fatalf("list = %d %v\n%s%s", o.code, err, o.stdout, o.stderr)
	}
	byName := map[string]listItem{}
	for _, it := range items {
		byName[it.Name] = it
	}
	return byName
}

// runCombined runs toolhost with stdout and stderr in one pipe, so that the
// order of output chunks and result shows.
func runCombined(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(toolhost, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

func TestMCPListAndCall(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			def := writeDef(t, transport, mcptest.VariantFull, `"prefix": "t_", "callTimeout": "90s"`)
			tools := listJSON(t, def.path)
			for _, name := range []string{"t_echo", "t_fail", "t_greet", "t_picture", "t_read_resource"} {
				it, ok := tools[name]
				if !ok || it.Source != "mcp:"+def.path || it.Timeout == nil || *it.Timeout != "90s" {
					t.Errorf("%s: %+v (found: %v)", name, it, ok)
				}
			}
			if desc := tools["t_read_resource"].Description; !strings.Contains(desc, "test://readme") {
				t.Errorf("read_resource does not list the resources: %q", desc)
			}

			tests := []struct {
				name, tool, input string
				code              int
				out               string // the combined output, exactly
			}{
				{"tool", "t_echo", `{"text":"hi"}`, 0, `{"output":{"type":"text","value":"echo: hi"}}` + "\n"},
				{"prompt", "t_greet", `{"name":"Ada","style":"warm"}`, 0,
					`{"output":{"type":"text","value":"user: Say hello to Ada.\n\nassistant: Hello, Ada! (warm)"}}` + "\n"},
				{"resource", "t_read_resource", `{"uri":"test://items/7"}`, 0, `{"output":{"type":"text","value":"item 7"}}` + "\n"},
				{"isError", "t_fail", `{}`, 1, `{"output":{"type":"text","value":"it broke"},"error":true}` + "\n"},
				{"progress before the result", "t_progress", `{"steps":3}`, 0,
					"[output] 1/3 step 1\n[output] 2/3 step 2\n[output] 3/3 step 3\n" + `{"output":{"type":"text","value":"done"}}` + "\n"},
				{"structured", "t_sum", `{"a":2,"b":3}`, 0, `{"output":{"type":"json","value":{"sum":5}}}` + "\n"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					code, out := runCombined(t, "call", def.path, tt.tool, tt.input)
					if code != tt.code || out != tt.out {
						t.Errorf("exit %d, output:\n%s\nwant exit %d, output:\n%s", code, out, tt.code, tt.out)
					}
				})
			}
			t.Run("media", func(t *testing.T) {
				o := runToolhost(t, "call", def.path, "t_media", `{}`)
				for _, want := range []string{`{"type":"text","text":"here"}`, `"mediaType":"image/png"`, `"mediaType":"audio/wav"`, "embedded text"} {
					if o.code != 0 || !strings.Contains(o.stdout, want) {
						t.Errorf("exit %d, stdout lacks %s:\n%s%s", o.code, want, o.stdout, o.stderr)
					}
				}
			})
		})
	}
	t.Run("stdio server's stderr", func(t *testing.T) {
		def := writeDef(t, "stdio", mcptest.VariantFull, "")
		code, out := runCombined(t, "call", def.path, "stderr", `{}`)
		if want := "[stderr] a line on stderr: ünïcödé\n" + `{"output":{"type":"text","value":"written"}}` + "\n"; code != 0 || out != want {
			t.Errorf("exit %d, output:\n%s\nwant:\n%s", code, out, want)
		}
	})
}

func TestMCPInADirectoryAndNameClashes(t *testing.T) {
	def := writeDef(t, "stdio", mcptest.VariantToolsOnly, "")
	// A directory holding a plugin and a definition: both are found.
	dir := filepath.Dir(def.path)
	if err := os.Symlink(filepath.Join(ready, "hello"), filepath.Join(dir, "hello")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "README.md", "not a tool")
	tools := listJSON(t, dir)
	if tools["echo"].Source != "mcp:"+def.path || tools["say_hello"].Source != filepath.Join(dir, "hello") {
		t.Errorf("a directory with a definition and a plugin: %+v", tools)
	}

	// testplug offers echo too: the later tool set wins, as for plugins.
	if src := listJSON(t, testplug, def.path)["echo"].Source; src != "mcp:"+def.path {
		t.Errorf("plugin then MCP: echo from %s", src)
	}
	if src := listJSON(t, def.path, testplug)["echo"].Source; !strings.HasSuffix(src, "testplug") {
		t.Errorf("MCP then plugin: echo from %s", src)
	}
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{testplug, dir}, `{"output":{"type":"text","value":"echo: x"}}`},
		{[]string{dir, testplug}, `{"output":{"type":"text","value":"x"}}`},
	} {
		o := runToolhost(t, append(append([]string{"call"}, c.paths...), "echo", `{"text":"x"}`)...)
		if o.code != 0 || strings.TrimSpace(o.stdout) != c.want {
			t.Errorf("call %v echo = %d %s%s, want %s", c.paths, o.code, o.stdout, o.stderr, c.want)
		}
	}
}

func TestMCPScanFailures(t *testing.T) {
	stdio := func(command string, args ...string) string {
		a, _ := json.Marshal(append([]string{}, args...)) // [] rather than null
		return fmt.Sprintf(`{"type": "stdio", "command": %q, "args": %s}`, command, a)
	}
	tests := []struct {
		name, content string
		want          []string // parts of stderr, besides the file's path
	}{
		{"bad command", `{"transport": ` + stdio("./no-such-server") + `}`, []string{"no-such-server: no such file or directory"}},
		{"bad definition", `{"transport": ` + stdio(mcpserver) + `, "callTimeout": "soon"}`, []string{`callTimeout: want a positive duration such as "30s" or "2m", got "soon"`}},
		{"not JSON", `{"transport": `, []string{"unexpected EOF"}},
		{"server exits", `{"transport": ` + stdio(mcpserver, mcptest.VariantCrash) + `}`, []string{"fatal: this server cannot start"}},
		{"server never answers", `{"transport": ` + stdio(mcpserver, mcptest.VariantSilent) + `, "discoveryTimeout": "300ms"}`, []string{"discovery timed out after 300ms"}},
		{"nothing listens", `{"transport": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}`, []string{"connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "broken.mcp.json", tt.content)
			// Given directly, or found in a directory, the file fails the scan.
			for _, arg := range []string{path, dir} {
				o := runToolhost(t, "list", arg)
				if o.code != 1 || !strings.Contains(o.stderr, path) {
					t.Errorf("list %s = %d, stderr does not name %s:\n%s", arg, o.code, path, o.stderr)
				}
				for _, want := range tt.want {
					if !strings.Contains(o.stderr, want) {
						t.Errorf("list %s: stderr lacks %q:\n%s", arg, want, o.stderr)
					}
				}
			}
		})
	}
}

// parentOf returns the parent pid of a process.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	state, ppid := procStat(pid)
	if state == "" {
		t.Fatalf("no process %d", pid)
	}
	return ppid
}

// startHang starts `toolhost call DEF hang {}` and returns it with the pid
// the hang tool reported and the command's stdout.
func startHang(t *testing.T, def string) (*exec.Cmd, int, *bytes.Buffer) {
	t.Helper()
	var pid int
	cmd, out := startCall(t, "[output] 0 pid %d", []any{&pid}, def, "hang", `{}`)
	return cmd, pid, out
}

func TestMCPCtrlCKillsTheCall(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			def := writeDef(t, transport, mcptest.VariantFull, "")
			cmd, pid, out := startHang(t, def.path)
			var serve int
			if transport == "stdio" {
				serve = parentOf(t, pid) // toolhost mcp-serve
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(out.String(), `was stopped`) {
				t.Fatalf("exit %v, stdout %s", err, out.String())
			}
			if transport == "stdio" {
				waitGone(t, pid, serve)
			}
		})
	}
}

func TestMCPServerDiesWithItsHost(t *testing.T) {
	def := writeDef(t, "stdio", mcptest.VariantFull, "")
	cmd, pid, _ := startHang(t, def.path)
	serve := parentOf(t, pid)
	// SIGKILL: the host gets no chance to kill its plugins.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, pid, serve)
}

// newMCPHost returns a host that serves MCP definitions with the built
// toolhost, as agent-server does; at the end of the test it is closed and
// nothing it started may be left.
func newMCPHost(t *testing.T) *tool.Host {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last
	h := tool.NewHost(tool.Config{SocketDir: t.TempDir(), Kinds: []tool.Kind{mcp.Kind(toolhost)}})
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

func scanHost(t *testing.T, h *tool.Host, paths ...string) *tool.Set {
	t.Helper()
	set, err := h.Scan(t.Context(), paths...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestMCPThroughTheHost(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newMCPHost(t) // first: its leak check runs after the server's cleanup
			def := writeDef(t, transport, mcptest.VariantFull, "")
			set := scanHost(t, h, def.path)
			echo := func() {
				t.Helper()
				res := set.Execute(t.Context(), "echo", json.RawMessage(`{"text":"x"}`), tool.Options{})
				if res.Error || tool.OutputText(res.Output) != "echo: x" {
					t.Fatalf("echo: %+v", res)
				}
			}
			echo()

			t.Run("server asks during the call", func(t *testing.T) {
				host := &tool.HostHandler{
					Elicit: func(_ context.Context, r *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error) {
						if r.GetMessage() != "Who are you?" || !strings.Contains(r.GetRequestedSchemaJson(), `"default":"hello"`) {
							return nil, fmt.Errorf("unexpected request %v", r)
						}
						// The greeting left out: the schema's default fills it.
						return &pluginv1.ElicitResponse{Action: pluginv1.ElicitAction_ELICIT_ACTION_ACCEPT, ContentJson: `{"name":"Ada"}`}, nil
					},
					Sample: func(_ context.Context, r *pluginv1.SampleRequest) (*pluginv1.SampleResponse, error) {
						in := r.GetMessages()[0].GetContent()[0].GetText()
						return &pluginv1.SampleResponse{Model: "m1", StopReason: "endTurn",
							Content: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: fmt.Sprintf("%d %s %q", r.GetMaxTokens(), r.GetSystemPrompt(), in)}}}}, nil
					},
				}
				for _, c := range []struct{ tool, input, want string }{
					{"ask_user", `{}`, "hello, Ada"},
					{"ask_model", `{"text":"hi"}`, `m1 said: 50 Be brief. "hi"`},
				} {
					res := set.Execute(t.Context(), c.tool, json.RawMessage(c.input), tool.Options{HostHandler: host})
					if got := tool.OutputText(res.Output); res.Error || got != c.want {
						t.Errorf("%s: %q (error %v), want %q", c.tool, got, res.Error, c.want)
					}
				}
				// A host that answers nothing: the server's request fails, and so its tool.
				res := set.Execute(t.Context(), "ask_user", json.RawMessage(`{}`), tool.Options{})
				if got := tool.OutputText(res.Output); !res.Error || !strings.Contains(got, "no one to ask") {
					t.Errorf("without a host: %q", got)
				}
				echo()
			})

			t.Run("cancelled mid-call", func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var first string
				res := set.Execute(ctx, "hang", json.RawMessage(`{}`), tool.Options{OnOutput: func(c tool.Chunk) {
					if first == "" {
						first = c.Data
						cancel()
					}
				}})
				if !res.Error || !strings.Contains(tool.OutputText(res.Output), "was stopped") {
					t.Fatalf("result %+v", res)
				}
				var pid int
				if _, err := fmt.Sscanf(first, "0 pid %d", &pid); err != nil {
					t.Fatalf("first chunk %q: %v", first, err)
				}
				if transport == "stdio" {
					waitGone(t, pid)
				}
				echo()
			})

			t.Run("server dies mid-call", func(t *testing.T) {
				var res tool.Result
				if transport == "stdio" {
					res = set.Execute(t.Context(), "die", json.RawMessage(`{}`), tool.Options{})
				} else {
					res = set.Execute(t.Context(), "hang", json.RawMessage(`{}`), tool.Options{OnOutput: func(tool.Chunk) {
						def.http.CloseClientConnections() // the server goes away
					}})
				}
				text := tool.OutputText(res.Output)
				if !res.Error || !strings.HasPrefix(text, "mcp server "+def.path) {
					t.Fatalf("result %+v, want an error naming the definition", res)
				}
				if transport == "stdio" && (!strings.Contains(text, "exit status 3") || !strings.Contains(text, "dying now")) {
					t.Errorf("result %q lacks the exit status and stderr", text)
				}
				echo()
			})
		})
	}
}

func TestMCPCallTimeoutKillsTheServer(t *testing.T) {
	set := scanHost(t, newMCPHost(t), writeDef(t, "stdio", mcptest.VariantFull, `"callTimeout": "300ms"`).path)
	var first string
	res := set.Execute(t.Context(), "hang", json.RawMessage(`{}`), tool.Options{OnOutput: func(c tool.Chunk) {
		if first == "" {
			first = c.Data
		}
	}})
	if !res.Error || !strings.Contains(tool.OutputText(res.Output), `tool "hang" timed out after 300ms and was killed`) {
		t.Fatalf("result %+v", res)
	}
	var pid int
	if _, err := fmt.Sscanf(first, "0 pid %d", &pid); err != nil {
		t.Fatalf("first chunk %q: %v", first, err)
	}
	waitGone(t, pid)
}

func TestMCPReuse(t *testing.T) {
	pids := func(t *testing.T, set *tool.Set, n int) []int {
		t.Helper()
		var out []int
		for range n {
			res := set.Execute(t.Context(), "pid", json.RawMessage(`{}`), tool.Options{})
			pid, err := strconv.Atoi(tool.OutputText(res.Output))
			if res.Error || err != nil {
				t.Fatalf("pid: %+v", res)
			}
			out = append(out, pid)
		}
		return out
	}

	t.Run("per call", func(t *testing.T) {
		set := scanHost(t, newMCPHost(t), writeDef(t, "stdio", mcptest.VariantFull, "").path)
		got := pids(t, set, 2)
		if got[0] == got[1] {
			t.Errorf("two calls without reuse ran on one server process %d", got[0])
		}
		waitGone(t, got...)
	})

	t.Run("reuse", func(t *testing.T) {
		h := newMCPHost(t)
		set := scanHost(t, h, writeDef(t, "stdio", mcptest.VariantFull, `"reuse": true`).path)
		first := pids(t, set, 3)
		if first[0] != first[1] || first[1] != first[2] {
			t.Fatalf("calls with reuse ran on server processes %v", first)
		}
		if res := set.Execute(t.Context(), "die", json.RawMessage(`{}`), tool.Options{}); !res.Error {
			t.Fatalf("die: %+v", res)
		}
		waitGone(t, first[0])
		again := pids(t, set, 2)
		if again[0] == first[0] || again[0] != again[1] {
			t.Fatalf("after the server died: server processes %v (before: %d)", again, first[0])
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		waitGone(t, again[0]) // the kept server dies with its toolhost
	})
}

func TestMCPDefinitionChangeRestartsTheServer(t *testing.T) {
	h := newMCPHost(t)
	def := writeDef(t, "stdio", mcptest.VariantFull, "")
	if tools := scanHost(t, h, def.path).Names(); !slices.Contains(tools, "echo") {
		t.Fatalf("tools %v", tools)
	}
	writeFile(t, filepath.Dir(def.path), filepath.Base(def.path),
		fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q}, "prefix": "new_"}`, mcpserver))
	if tools := scanHost(t, h, def.path).Names(); !slices.Contains(tools, "new_echo") {
		t.Fatalf("after the definition changed: tools %v", tools)
	}
}
