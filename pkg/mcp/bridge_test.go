package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/mcptest"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

func TestMain(m *testing.M) {
	if variant := os.Getenv(serverEnv); variant != "" {
		os.Exit(mcptest.RunStdio(variant))
	}
	if os.Getenv(hostEnv) != "" {
		os.Exit(runHost())
	}
	goleak.VerifyTestMain(m)
}

// summary renders a result compactly for comparisons.
func summary(r *pluginv1.ToolResult) string {
	var out string
	switch o := r.Output.(type) {
	case *pluginv1.ToolResult_Text:
		out = "text " + o.Text
	case *pluginv1.ToolResult_Json:
		out = "json " + o.Json
	case *pluginv1.ToolResult_Content:
		var parts []string
		for _, p := range o.Content.GetParts() {
			if f := p.GetFile(); f != nil {
				parts = append(parts, fmt.Sprintf("file %s %q %d bytes", f.MediaType, f.Filename, len(f.GetData())))
			} else {
				parts = append(parts, "text "+p.GetText())
			}
		}
		out = "content [" + strings.Join(parts, " | ") + "]"
	}
	if r.Error != "" {
		out += " ERROR " + r.Error
	}
	return out
}

func TestDiscover(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			s := newTestBridge(t, fx.def(t, variantFull, `"prefix": "t_", "callTimeout": "90s"`))
			specs, err := s.Discover(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*pluginv1.ToolSpec{}
			var names []string
			for _, spec := range specs {
				byName[spec.Name] = spec
				names = append(names, spec.Name)
				if got := spec.Timeout.AsDuration(); got != 90*time.Second {
					t.Errorf("%s: timeout %v, want 90s", spec.Name, got)
				}
				var schema map[string]any
				if err := json.Unmarshal([]byte(spec.InputSchemaJson), &schema); err != nil || schema["type"] != "object" {
					t.Errorf("%s: input schema %s is not an object schema", spec.Name, spec.InputSchemaJson)
				}
			}
			want := []string{"t_echo", "t_media", "t_fail", "t_sum", "t_progress", "t_pid", "t_hang", "t_stderr", "t_dotted_name_x", "t_greet", "t_picture", "t_read_resource"}
			for _, name := range want {
				if byName[name] == nil {
					t.Errorf("no tool %s in %v", name, names)
				}
			}
			if t.Failed() {
				return
			}
			if got := byName["t_echo"].Description; got != "Echoes text." {
				t.Errorf("echo description %q", got)
			}
			if got := byName["t_echo"].InputSchemaJson; !strings.Contains(got, `"text"`) || !strings.Contains(got, `"what to echo"`) {
				t.Errorf("echo schema %s does not hold the server's", got)
			}
			if h := byName["t_media"].Hints; !h.GetReadOnly() || !h.GetIdempotent() {
				t.Errorf("media hints %v, want read-only", h)
			}
			if got, want := byName["t_greet"].InputSchemaJson, `{"properties":{"name":{"description":"who","type":"string"},"style":{"type":"string"}},"required":["name"],"type":"object"}`; got != want {
				t.Errorf("greet schema\n got %s\nwant %s", got, want)
			}
			desc := byName["t_read_resource"].Description
			for _, part := range []string{"test://readme (readme): The read me. [text/plain]", "test://logo.bin (logo)", "test://items/{id} (item): One item."} {
				if !strings.Contains(desc, part) {
					t.Errorf("read_resource description lacks %q:\n%s", part, desc)
				}
			}
		})
	}
}

func TestDiscoverAsksOnlyForWhatTheServerDeclares(t *testing.T) {
	var mu sync.Mutex
	var methods []string
	def := httpDefinition(t, "http", variantToolsOnly, "", func(method string) {
		mu.Lock()
		defer mu.Unlock()
		methods = append(methods, method)
	})
	specs, err := newTestBridge(t, def).Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || specs[0].Name != "echo" {
		t.Errorf("specs %v, want only echo", specs)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range methods {
		if strings.HasPrefix(m, "prompts/") || strings.HasPrefix(m, "resources/") {
			t.Errorf("asked %s of a server without that capability (methods: %v)", m, methods)
		}
	}
	if !slices.Contains(methods, "tools/list") {
		t.Errorf("never listed tools: %v", methods)
	}
}

func TestCall(t *testing.T) {
	calls := []struct {
		tool, input string
		want        string // summary; a leading ~ means "contains"
	}{
		{"echo", `{"text":"hi"}`, "text echo: hi"},
		{"media", ``, `content [text here | file image/png "" 24 bytes | file audio/wav "" 16 bytes | text embedded text | file application/octet-stream "logo.bin" 6 bytes | text resource: test://more (more)]`},
		{"fail", `{}`, "text it broke ERROR it broke"},
		{"sum", `{"a":2,"b":3}`, `json {"sum":5}`},
		{"dotted_name_x", `{}`, "text dotted"},
		{"greet", `{"name":"Ann","style":"warm"}`, "text user: Say hello to Ann.\n\nassistant: Hello, Ann! (warm)"},
		{"greet", `{"name":7}`, "text user: Say hello to 7.\n\nassistant: Hello, 7! ()"},
		{"picture", `{}`, `content [text user: What is this?\n\nuser: | file image/png "" 24 bytes]`},
		{"read_resource", `{"uri":"test://readme"}`, "text read me first"},
		{"read_resource", `{"uri":"test://logo.bin"}`, `content [file application/x-logo "logo.bin" 6 bytes]`},
		{"read_resource", `{"uri":"test://items/42"}`, "text item 42"},
		// Failures the model reads.
		{"read_resource", `{}`, `~ERROR read_resource needs "uri"`},
		{"read_resource", `{"uri":"test://nothing"}`, `~ERROR mcp server `},
		{"greet", `{}`, `~ERROR mcp server `}, // a protocol error: the handler failed
		{"greet", `{}`, `~prompt "greet": calling "prompts/get": name is required`},
		{"sum", `{"a":"two"}`, `~ERROR validating "arguments"`}, // an isError result of the server's
		{"echo", `{}`, `~ERROR validating "arguments"`},
		{"echo", `[1]`, "text the tool's input must be a JSON object ERROR the tool's input must be a JSON object"},
		{"nope", `{}`, `~ERROR unknown tool "nope"; this MCP server offers: `},
		{"nope", `{}`, `~dotted_name_x, echo, fail, greet, hang, media, picture, pid, progress, read_resource, stderr, sum`},
	}
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			s := newTestBridge(t, fx.def(t, variantFull, ""))
			for _, c := range calls {
				res, err := s.Call(t.Context(), c.tool, c.input, nil)
				if err != nil {
					t.Fatalf("%s %s: %v", c.tool, c.input, err)
				}
				got := summary(res)
				if want, ok := strings.CutPrefix(c.want, "~"); ok {
					if !strings.Contains(got, want) {
						t.Errorf("%s %s:\n got %q\nwant it to contain %q", c.tool, c.input, got, want)
					}
				} else if got != strings.ReplaceAll(c.want, `\n`, "\n") {
					t.Errorf("%s %s:\n got %q\nwant %q", c.tool, c.input, got, c.want)
				}
			}
		})
	}
}

func TestCallReportsProgress(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			s := newTestBridge(t, fx.def(t, variantFull, ""))
			rec := newRecorder()
			res, err := s.Call(t.Context(), "progress", `{"steps":3}`, rec.emit)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res); got != "text done" {
				t.Errorf("result %q", got)
			}
			want := []string{"OUTPUT_STREAM_OUTPUT 1/3 step 1\n", "OUTPUT_STREAM_OUTPUT 2/3 step 2\n", "OUTPUT_STREAM_OUTPUT 3/3 step 3\n"}
			if got := rec.all(); strings.Join(got, "") != strings.Join(want, "") {
				t.Errorf("chunks %q, want %q", got, want)
			}
		})
	}
}

func TestCallForwardsStdioStderr(t *testing.T) {
	s := newTestBridge(t, stdioDefinition(t, variantFull, ""))
	rec := newRecorder()
	if _, err := s.Call(t.Context(), "stderr", `{}`, rec.emit); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rec.all(), ""); got != "OUTPUT_STREAM_STDERR a line on stderr: ünïcödé\n" {
		t.Errorf("chunks %q", got)
	}
}

func TestCancelClosesTheConnection(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			s := newTestBridge(t, fx.def(t, variantFull, ""))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rec := newRecorder()
			done := make(chan error, 1)
			go func() {
				_, err := s.Call(ctx, "hang", `{}`, rec.emit)
				done <- err
			}()
			var pid int
			select {
			case first := <-rec.first:
				if _, err := fmt.Sscanf(first, "0 pid %d", &pid); err != nil {
					t.Fatalf("first chunk %q: %v", first, err)
				}
			case err := <-done:
				t.Fatalf("call ended before hanging: %v", err)
			}
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("call ended with %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("call did not end after cancel")
			}
			if fx.name == "stdio" && !processGone(pid) {
				t.Errorf("stdio server %d still runs after the call was cancelled", pid)
			}
			// The bridge goes on working.
			res, err := s.Call(t.Context(), "echo", `{"text":"after"}`, nil)
			if err != nil || summary(res) != "text echo: after" {
				t.Errorf("call after cancel: %v %v", summary(res), err)
			}
		})
	}
}

// processGone reports whether pid is not running: no such process, or a zombie.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// waitGone fails the test unless pid is gone within five seconds.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestServerDyingMidCall(t *testing.T) {
	s := newTestBridge(t, stdioDefinition(t, variantFull, ""))
	res, err := s.Call(t.Context(), "die", `{}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := summary(res)
	for _, want := range []string{"ERROR mcp server " + s.Definition().Path, `tool "die"`, "exit status 3", "dying now"} {
		if !strings.Contains(got, want) {
			t.Errorf("result %q lacks %q", got, want)
		}
	}
	res, err = s.Call(t.Context(), "echo", `{"text":"again"}`, nil)
	if err != nil || summary(res) != "text echo: again" {
		t.Errorf("call after the server died: %v %v", summary(res), err)
	}
}

func TestHTTPServerGoingAwayMidCall(t *testing.T) {
	for _, transport := range []string{"http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			fx := httpServer(t, transport, variantFull, "", nil)
			s := newTestBridge(t, fx.def)
			rec := newRecorder()
			done := make(chan *pluginv1.ToolResult, 1)
			go func() {
				res, err := s.Call(t.Context(), "hang", `{}`, rec.emit)
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			<-rec.first
			fx.http.CloseClientConnections()
			select {
			case res := <-done:
				if res == nil || !strings.HasPrefix(res.Error, "mcp server "+fx.def.Path) {
					t.Errorf("result %v, want an error naming the definition", res)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not end when the server went away")
			}
		})
	}
}

func TestUnreachableServers(t *testing.T) {
	dir := t.TempDir()
	notExecutable := dir + "/plain.txt"
	if err := os.WriteFile(notExecutable, []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		definition string
		want       []string
	}{
		{"missing command", `{"transport": {"type": "stdio", "command": "./no-such-server"}}`, []string{"no-such-server", "no such file or directory"}},
		{"command not in PATH", `{"transport": {"type": "stdio", "command": "no-such-server-xyz"}}`, []string{`"no-such-server-xyz": executable file not found`}},
		{"not executable", fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q}}`, notExecutable), []string{"permission denied"}},
		{"exits at once", fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "env": {%q: %q}}}`, testBinary(t), serverEnv, variantCrash),
			[]string{"exit status 2", `"fatal: this server cannot start"`}},
		{"never answers", fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "env": {%q: %q}}, "discoveryTimeout": "300ms"}`, testBinary(t), serverEnv, variantSilent),
			[]string{"discovery timed out after 300ms"}},
		{"bad cwd", fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "cwd": "no/such/dir"}}`, testBinary(t)), []string{"no/such/dir"}},
		{"http refused", `{"transport": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}`, []string{"connection refused"}},
		{"sse refused", `{"transport": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}`, []string{"connection refused"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			def := writeDefinition(t, "bad.mcp.json", c.definition)
			s := newTestBridge(t, def)
			start := time.Now()
			_, err := s.Discover(t.Context())
			if err == nil {
				t.Fatal("discovery succeeded")
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("failing took %v", elapsed)
			}
			for _, want := range append([]string{def.Path}, c.want...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			// A call fails the same way, as a result the model can read.
			res, err := s.Call(t.Context(), "echo", `{}`, nil)
			if err != nil || res.Error == "" || !strings.Contains(res.Error, def.Path) {
				t.Errorf("call: %q, %v", summary(res), err)
			}
		})
	}
}

func TestReuse(t *testing.T) {
	pidOf := func(t *testing.T, s *Bridge) int {
		t.Helper()
		res, err := s.Call(t.Context(), "pid", `{}`, nil)
		if err != nil || res.Error != "" {
			t.Fatalf("pid: %v %v", summary(res), err)
		}
		pid, err := strconv.Atoi(res.GetText())
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}

	t.Run("per call", func(t *testing.T) {
		s := newTestBridge(t, stdioDefinition(t, variantFull, ""))
		first, second := pidOf(t, s), pidOf(t, s)
		if first == second {
			t.Errorf("two calls shared server process %d", first)
		}
		for _, pid := range []int{first, second} {
			if !processGone(pid) {
				t.Errorf("server %d outlived its call", pid)
			}
		}
	})

	t.Run("kept and reconnected", func(t *testing.T) {
		s := newTestBridge(t, stdioDefinition(t, variantFull, `"reuse": true`))
		if _, err := s.Discover(t.Context()); err != nil {
			t.Fatal(err)
		}
		first := pidOf(t, s)
		if again := pidOf(t, s); again != first {
			t.Fatalf("reuse: second call ran in %d, first in %d", again, first)
		}
		if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		third := pidOf(t, s)
		if third == first {
			t.Fatalf("reconnect: still %d", third)
		}
		s.Close()
		if !processGone(third) {
			t.Errorf("server %d outlived Close", third)
		}
		if res, err := s.Call(t.Context(), "pid", `{}`, nil); err != nil || !strings.Contains(res.Error, "closed") {
			t.Errorf("call after Close: %v %v", summary(res), err)
		}
	})

	for _, transport := range []string{"http", "sse"} {
		t.Run(transport+" kept and reconnected", func(t *testing.T) {
			fx := httpServer(t, transport, variantFull, `"reuse": true`, nil)
			s := newTestBridge(t, fx.def)
			echo := func() {
				t.Helper()
				res, err := s.Call(t.Context(), "echo", `{"text":"x"}`, nil)
				if err != nil || summary(res) != "text echo: x" {
					t.Fatalf("%v %v", summary(res), err)
				}
			}
			echo()
			first := s.kept
			echo()
			if s.kept != first {
				t.Fatal("the second call did not use the kept connection")
			}
			// The server forgets the session, as after a restart or an idle timeout.
			for ss := range fx.srv.Sessions() {
				_ = ss.Close()
			}
			echo()
			if s.kept == first {
				t.Error("the call after the session was dropped used the old connection")
			}
		})
	}
}

func TestNewBridgeRejectsBadDefinitions(t *testing.T) {
	cases := []struct {
		def  *Definition
		want string
	}{
		{nil, "nil definition"},
		{&Definition{Name: "x", Transport: Transport{Type: "pipe"}}, `"pipe" is not a transport`},
		{&Definition{Name: "x", Transport: Transport{Type: TransportStdio}}, "transport.command: missing"},
		{&Definition{Name: "x", Transport: Transport{Type: TransportHTTP}}, "transport.url: missing"},
		{&Definition{Name: "x", Prefix: "a b", Transport: Transport{Type: TransportSSE, URL: "http://x"}}, "prefix"},
	}
	for _, c := range cases {
		if _, err := NewBridge(c.def); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewBridge(%+v) = %v, want an error with %q", c.def, err, c.want)
		}
	}
}
