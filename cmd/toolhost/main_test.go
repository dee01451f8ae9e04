package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

var (
	toolhost  string // the built binary
	ready     string // plugins/*
	testplug  string // pkg/tool's test plugin
	mcpserver string // mcptest's MCP server over stdio
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolhost")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "bin")
		cmd := exec.Command("go", "build", "-o", bin+"/", ".", "../../plugins/...", "../../pkg/tool/testdata/plugins/testplug", "./testdata/mcpserver")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build:", err)
			return 1
		}
		ready, testplug = filepath.Join(dir, "ready"), filepath.Join(dir, "test")
		for _, d := range []string{ready, testplug} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				panic(err)
			}
		}
		entries, _ := os.ReadDir(bin)
		for _, e := range entries {
			dst := filepath.Join(ready, e.Name())
			switch e.Name() {
			case "toolhost":
				dst = filepath.Join(dir, "toolhost")
				toolhost = dst
			case "testplug":
				dst = filepath.Join(testplug, e.Name())
			case "mcpserver":
				dst = filepath.Join(dir, "mcpserver")
				mcpserver = dst
			}
			if err := os.Rename(filepath.Join(bin, e.Name()), dst); err != nil {
				panic(err)
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

type outcome struct {
	code           int
	stdout, stderr string
}

func runToolhost(t *testing.T, args ...string) outcome {
	t.Helper()
	return runToolhostEnv(t, nil, args...)
}

// runToolhostEnv runs toolhost with variables env added to the test's
// environment, from which the AGENTCORE_TOOL_* and AGENTCORE_CONFIG
// variables are left out.
func runToolhostEnv(t *testing.T, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(toolhost, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTCORE_TOOL_") && !strings.HasPrefix(kv, "AGENTCORE_CONFIG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return outcome{code, out.String(), errb.String()}
}

func TestList(t *testing.T) {
	o := runToolhost(t, "list", ready)
	lines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	if o.code != 0 || len(lines) != 11 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "add ") {
		t.Fatalf("list = %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stdout, filepath.Join(ready, "hello")) || !strings.Contains(o.stdout, "Greets the given person") {
		t.Fatalf("list lacks source or description:\n%s", o.stdout)
	}
	// Each tool's limits (agent-server's defaults here), and the mechanism on stderr.
	if !strings.Contains(lines[0], "LIMITS") || !strings.Contains(o.stderr, "tool limits: ") {
		t.Fatalf("list lacks limits:\n%s%s", o.stdout, o.stderr)
	}

	o = runToolhost(t, "list", "--json", ready, testplug)
	var items []listItem
	if err := json.Unmarshal([]byte(o.stdout), &items); err != nil || o.code != 0 {
		t.Fatalf("list --json = %d %v\n%s", o.code, err, o.stdout)
	}
	byName := map[string]int{}
	for i, it := range items {
		byName[it.Name] = i
	}
	lt := items[byName["loop_timeout"]]
	if lt.Timeout == nil || *lt.Timeout != "0.3s" || !strings.HasSuffix(lt.Source, "testplug") {
		t.Fatalf("loop_timeout = %+v", lt)
	}
	hello := items[byName["say_hello"]]
	compact := func(raw json.RawMessage) string {
		var b bytes.Buffer
		_ = json.Compact(&b, raw)
		return b.String()
	}
	if strings.Contains(o.stderr, "memory") && !strings.Contains(compact(hello.Limits), `"memoryBytes":"1073741824"`) {
		t.Fatalf("say_hello's limits = %s", hello.Limits)
	}
	if !strings.Contains(compact(items[byName["spin_cpu"]].Limits), `"cpuTime":"0.300s"`) {
		t.Fatalf("spin_cpu's limits = %s", items[byName["spin_cpu"]].Limits)
	}
	if hello.Timeout != nil || !json.Valid(hello.InputSchema) || !strings.Contains(string(hello.InputSchema), `"name"`) {
		t.Fatalf("say_hello = %+v", hello)
	}
	// add is in both: the later path wins.
	if src := items[byName["add"]].Source; !strings.HasSuffix(src, "testplug") {
		t.Fatalf("add comes from %s", src)
	}
}

// TestListShowsTheOperatorsLimits: toolhost gives tools the limits
// agent-server would with the same settings: its -tool-* flags over the
// AGENTCORE_TOOL_* variables over the config file's tool_limits keys, and
// the file's plugins section over what a tool asks for.
func TestListShowsTheOperatorsLimits(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agentcore.yaml")
	if err := os.WriteFile(file, []byte("listen: 127.0.0.1:1\ntool_limits:\n  memory: 300MiB\n  cpu_time: 5s\n"+
		"plugins:\n  hello:\n    memory: 256MiB\n  multiply:\n    cpu_time: none\n    open_files: 77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mib := func(n int) string { return strconv.Itoa(n << 20) }
	// rlimit: the same limits on every machine (it enforces all but
	// processes). Under it a Go plugin needs about 128 MiB to start: its
	// RLIMIT_DATA counts the Go runtime's reservations.
	tests := []struct {
		name string
		env  []string
		args []string
		want map[string]string // tool: its limits in ListTools' JSON, "" for none
	}{
		{"flags", nil, []string{"-tool-limits", "rlimit", "-tool-memory", "300MiB", "-tool-cpu-time", "2s", "-tool-open-files", "128"},
			map[string]string{"say_hello": `{"memoryBytes":"` + mib(300) + `","cpuTime":"2s","maxOpenFiles":128}`}},
		{"variables", []string{"AGENTCORE_TOOL_LIMITS=rlimit", "AGENTCORE_TOOL_MEMORY=200MiB"}, nil,
			map[string]string{"say_hello": `{"memoryBytes":"` + mib(200) + `"}`}},
		{"flags over variables", []string{"AGENTCORE_TOOL_LIMITS=rlimit", "AGENTCORE_TOOL_MEMORY=200MiB"}, []string{"-tool-memory", "300MiB"},
			map[string]string{"say_hello": `{"memoryBytes":"` + mib(300) + `"}`}},
		{"config file and its plugins section", []string{"AGENTCORE_TOOL_LIMITS=rlimit"}, []string{"-config", file},
			map[string]string{
				"say_hello": `{"memoryBytes":"` + mib(256) + `","cpuTime":"5s"}`,
				"add":       `{"memoryBytes":"` + mib(300) + `","cpuTime":"5s"}`,
				"multiply":  `{"memoryBytes":"` + mib(300) + `","maxOpenFiles":77}`,
			}},
		{"the file from AGENTCORE_CONFIG, a flag over it", []string{"AGENTCORE_TOOL_LIMITS=rlimit", "AGENTCORE_CONFIG=" + file}, []string{"-tool-cpu-time", "1s"},
			map[string]string{"add": `{"memoryBytes":"` + mib(300) + `","cpuTime":"1s"}`}},
		{"a tool asking for more than the maximum", nil, []string{"-tool-limits", "rlimit", "-tool-memory-max", "512MiB"},
			map[string]string{"nofile": `{"memoryBytes":"` + mib(512) + `","maxOpenFiles":99}`}},
		{"limits off", nil, []string{"-tool-limits", "off", "-config", file}, map[string]string{"say_hello": "", "nofile": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runToolhostEnv(t, tt.env, append(append([]string{"list", "--json"}, tt.args...), ready, testplug)...)
			var items []listItem
			if err := json.Unmarshal([]byte(o.stdout), &items); err != nil || o.code != 0 {
				t.Fatalf("exit %d %v\n%s%s", o.code, err, o.stdout, o.stderr)
			}
			got := map[string]string{}
			for _, it := range items {
				var b bytes.Buffer
				if len(it.Limits) > 0 {
					_ = json.Compact(&b, it.Limits)
				}
				got[it.Name] = b.String()
			}
			for tool, want := range tt.want {
				if got[tool] != want {
					t.Errorf("%s: limits %s, want %s", tool, got[tool], want)
				}
			}
		})
	}
	// The table shows them too, and says which mechanism enforces them.
	o := runToolhostEnv(t, nil, "list", "-tool-limits", "rlimit", "-config", file, ready)
	if o.code != 0 || !regexp.MustCompile(`(?m)^say_hello .*memory 256 MiB, CPU time 5s`).MatchString(o.stdout) || !strings.Contains(o.stderr, "tool limits: rlimit") {
		t.Fatalf("exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	// And a call runs under them.
	o = runToolhostEnv(t, nil, "call", "-tool-limits", "rlimit", "-tool-open-files", "40", ready, "shell", `{"command":"ulimit -n"}`)
	if o.code != 0 || !strings.Contains(o.stdout, `"output":"40\n"`) {
		t.Fatalf("exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}

func TestExitCodesAndUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"no arguments", nil, 2, "", "usage:"},
		{"help", []string{"--help"}, 0, "", "usage:"},
		{"unknown command", []string{"frob"}, 2, "", `unknown command "frob"`},
		{"list without path", []string{"list"}, 2, "", "at least one PATH"},
		{"list bad flag", []string{"list", "--nope", ready}, 2, "", "flag provided but not defined"},
		{"list missing path", []string{"list", "/no/such/dir"}, 1, "", "no such file"},
		{"list bad limit", []string{"list", "-tool-memory", "lots", ready}, 2, "", `invalid value "lots" for flag -tool-memory`},
		{"list limit under the minimum", []string{"list", "-tool-processes", "3", ready}, 1, "", "-tool-processes 3: must be 0 (no limit) or at least 16"},
		{"list missing config file", []string{"list", "-config", "/no/such.yaml", ready}, 1, "", "config file: open /no/such.yaml"},
		{"list bad limits mechanism", []string{"list", "-tool-limits", "jail", ready}, 1, "", `-tool-limits "jail": want auto`},
		{"call too few", []string{"call", ready, "say_hello"}, 2, "", "PATH... TOOL JSON"},
		{"call bad json", []string{"call", ready, "say_hello", "{name"}, 2, "", "not valid JSON"},
		{"call negative limit", []string{"call", "--limit", "-1", ready, "say_hello", "{}"}, 2, "", "--limit"},
		{"call success", []string{"call", ready, "say_hello", `{"name":"Ada"}`}, 0, `{"output":{"type":"text","value":"Hello, Ada!"}}`, ""},
		{"call json output", []string{"call", ready, "add", `{"a":1,"b":2}`}, 0, `{"output":{"type":"json","value":3}}`, ""},
		{"call stop", []string{"call", ready, "finish", `{"summary":"ok"}`}, 0, `"stop":true`, ""},
		{"call error result", []string{"call", testplug, "fail", `{}`}, 1, `{"output":{"type":"text","value":"it went wrong"},"error":true}`, ""},
		{"call invalid input", []string{"call", ready, "say_hello", `{}`}, 1, `missing property 'name'`, ""},
		{"call unknown tool", []string{"call", ready, "nope", `{}`}, 1, `unknown tool \"nope\"`, ""},
		{"call limit", []string{"call", "--limit", "10", testplug, "big", `{"n":1000}`}, 0, `aaaaa\n\n[… 990 of 1000 characters cut`, ""},
		{"call image", []string{"call", ready, "bar_chart", `{"values":[1,2]}`}, 0, `"type":"file","mediaType":"image/png","data":"iVBORw0KGgo`, ""},
		{"mcp-serve without a file", []string{"mcp-serve"}, 2, "", "mcp-serve needs one FILE"},
		{"mcp-serve by hand", []string{"mcp-serve", "x.mcp.json"}, 1, "", "To try the server, run: toolhost list x.mcp.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runToolhost(t, tt.args...)
			if o.code != tt.code || !strings.Contains(o.stdout, tt.stdout) || !strings.Contains(o.stderr, tt.stderr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", o.code, tt.code, o.stdout, o.stderr)
			}
		})
	}
}

func TestCallStreamsOutputToStderr(t *testing.T) {
	o := runToolhost(t, "call", ready, "shell", `{"command":"echo out; echo err >&2"}`)
	if o.code != 0 || !strings.Contains(o.stderr, "[stdout] out\n") || !strings.Contains(o.stderr, "[stderr] err\n") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", o.code, o.stdout, o.stderr)
	}
	o = runToolhost(t, "call", ready, "count", `{"n":2,"delay_ms":1}`)
	if o.stderr != "[output] counted to 1\n[output] counted to 2\n" {
		t.Fatalf("stderr = %q", o.stderr)
	}
}

func TestCtrlCKillsTheTool(t *testing.T) {
	var plugin, sleep int
	cmd, out := startCall(t, "[output] pids %d %d", []any{&plugin, &sleep}, testplug, "grandchild", `{"shell":true}`)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	if !strings.Contains(out.String(), `was stopped`) || !strings.Contains(out.String(), `"error":true`) {
		t.Fatalf("stdout = %s", out.String())
	}
	waitGone(t, plugin, sleep)
}

// startCall starts `toolhost call args...` and reads the first line of its
// stderr into vals with format. It returns the running command and what it
// writes to stdout.
func startCall(t *testing.T, format string, vals []any, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(toolhost, append([]string{"call"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if _, serr := fmt.Sscanf(line, format, vals...); err != nil || serr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("first line %q: %v %v", line, err, serr)
	}
	return cmd, &out
}

// procStat returns the state letter and the parent of a process; the state
// is "" when there is no such process.
func procStat(pid int) (state string, ppid int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid
}

// waitGone waits until none of pids runs (a zombie does not run).
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for st, _ := procStat(pid); st != "" && st != "Z"; st, _ = procStat(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func TestPrefixWriter(t *testing.T) {
	var b bytes.Buffer
	p := &prefixWriter{w: &b}
	out, errs := agentv1.OutputStream_OUTPUT_STREAM_STDOUT, agentv1.OutputStream_OUTPUT_STREAM_STDERR
	p.chunk(tool.Chunk{Stream: out, Data: "a\nb"})
	p.chunk(tool.Chunk{Stream: out, Data: "c\n"})
	p.chunk(tool.Chunk{Stream: errs, Data: "x"})
	p.chunk(tool.Chunk{Stream: out, Data: "d"})
	p.end()
	want := "[stdout] a\n[stdout] bc\n[stderr] x\n[stdout] d\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

// TestNoZombieLeft: toolhost is a child subreaper, as agent-server is. A
// cancelled call's grandchildren (bash and its sleep) are reaped by it, not
// left as zombies for init, and a daemon a tool left behind (setsid: out of
// the plugin's process group) is killed and reaped when toolhost exits.
func TestNoZombieLeft(t *testing.T) {
	cases := []struct {
		name, tool, input, format string
	}{
		{"grandchild", "grandchild", `{"shell":true}`, "[output] pids %d %d"},
		{"daemon", "daemon", `{}`, "[output] daemon %d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a, b int
			vals := []any{&a, &b}
			if c.tool == "daemon" {
				vals = vals[:1]
			}
			cmd, _ := startCall(t, c.format, vals, testplug, c.tool, c.input)
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// Whatever is left now went to init, which need not reap it
			// (nor soon): a process still listed is left behind.
			for _, pid := range []int{a, b} {
				if st, ppid := procStat(pid); pid != 0 && st != "" {
					t.Errorf("process %d left behind: state %s, parent %d", pid, st, ppid)
				}
			}
		})
	}
}
