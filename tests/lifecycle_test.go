package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// privatePlugins copies the named plugins (of bin/plugins, or else of
// tests/testdata/plugins) into a folder of the test's own, so that every
// process started from there belongs to this test.
func privatePlugins(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(suite.Plugins, n))
		if os.IsNotExist(err) {
			b, err = os.ReadFile(filepath.Join(suite.TestPlugins, n))
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// processesUnder returns the pids of live processes whose executable is in dir.
func processesUnder(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, dir+"/") && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ownServer starts an agent-server of the test's own over plugin folder dir.
func ownServer(t *testing.T, dir string, extra ...string) (*e2e.Server, *client.Client) {
	t.Helper()
	p, err := suite.StartServer(dir, extra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.Cmd.ProcessState == nil {
			p.Kill()
		}
	})
	c, err := client.Dial(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, c
}

// shellForever makes every model turn call shell with a command that starts
// a grandchild sleep, prints its pid and blocks.
func shellForever(int, *fakemodel.Request) fakemodel.Turn {
	return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_sh", Name: "shell",
		Arguments: `{"command":"sleep 300 & echo child=$!; sleep 300"}`}}}
}

var childPID = regexp.MustCompile(`child=(\d+)`)

// startBlockedRun sends a task whose shell tool blocks; it returns the
// grandchild's pid and the channel the send's error arrives on.
func startBlockedRun(t *testing.T, c *client.Client) (int, <-chan error) {
	t.Helper()
	a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{
		Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, shellForever))},
	})
	if err != nil {
		t.Fatal(err)
	}
	pidCh := make(chan int, 1)
	errCh := make(chan error, 1)
	go func() {
		_, err := a.Send(context.Background(), "block", client.Callbacks{
			OnToolOutput: func(o *agentv1.ToolOutputEvent) {
				if m := childPID.FindStringSubmatch(o.GetData()); m != nil {
					pid, _ := strconv.Atoi(m[1])
					pidCh <- pid
				}
			},
		})
		errCh <- err
	}()
	select {
	case pid := <-pidCh:
		return pid, errCh
	case err := <-errCh:
		t.Fatalf("the send ended early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the shell tool never printed its child's pid")
	}
	return 0, nil
}

func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s %d still alive", what, pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestSIGTERMWithARunInFlight(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "shell", "hello")
	p, c := ownServer(t, dir, "-shutdown-grace", "3s")
	grandchild, blocked := startBlockedRun(t, c)

	// A short run started now may finish within the grace period.
	quick, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{
		System: proto.String(suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
			return fakemodel.Turn{Text: "finished in time", Delay: 300 * time.Millisecond}
		})),
	}})
	if err != nil {
		t.Fatal(err)
	}
	quickRes := make(chan error, 1)
	asked := make(chan struct{})
	go func() {
		res, err := quick.Send(context.Background(), "be quick", client.Callbacks{
			OnLLMStart: func(*agentv1.ModelRequestEvent) { close(asked) },
		})
		if err == nil && res.Text != "finished in time" {
			err = fmt.Errorf("result %+v", res)
		}
		quickRes <- err
	}()
	select {
	case <-asked: // the quick run is waiting for its model: SIGTERM now
	case err := <-quickRes:
		t.Fatalf("the quick send ended before asking the model: %v", err)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// No new calls are accepted, while the runs go on.
	refused := false
	for deadline := time.Now().Add(2 * time.Second); !refused && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, err := c.CreateAgent(e2e.Context(t, time.Second), client.AgentOptions{})
		refused = err != nil
	}
	if !refused {
		t.Error("agent-server still accepts calls after SIGTERM")
	}
	if err := <-quickRes; err != nil {
		t.Errorf("a run that fits in the grace period failed: %v", err)
	}
	err = <-blocked
	var ce *client.Error
	if !asClientError(err, &ce) || ce.Code != codes.Unavailable || ce.Reason != "SHUTTING_DOWN" {
		t.Errorf("the blocked run ended with %v, want UNAVAILABLE SHUTTING_DOWN", err)
	}
	select {
	case <-p.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("agent-server still running 20s after SIGTERM")
	}
	if p.Err() != nil {
		t.Errorf("agent-server exit: %v, want 0\n%s", p.Err(), p.Logs())
	}
	waitGone(t, "grandchild", grandchild)
	if left := processesUnder(dir); len(left) > 0 {
		t.Errorf("plugin processes left after shutdown: %v", left)
	}
}

func TestSIGKILLLeavesNoPluginProcess(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "shell", "hello", "math")
	p, c := ownServer(t, dir)
	grandchild, blocked := startBlockedRun(t, c)
	plugins := processesUnder(dir)
	if len(plugins) < 3 { // the busy shell, and the idle hello and math kept warm by the scan
		t.Fatalf("want at least 3 plugin processes before the kill, have %v", plugins)
	}
	p.Kill()
	<-blocked
	waitGone(t, "plugin process", plugins...)
	waitGone(t, "grandchild", grandchild)
	if left := processesUnder(dir); len(left) > 0 {
		t.Errorf("plugin processes left after SIGKILL: %v", left)
	}
}

func TestConcurrentSessions(t *testing.T) {
	t.Parallel()
	const sessions = 200
	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_add", Name: "add", Arguments: `{"a":20,"b":22}`}}}
		}
		return fakemodel.Turn{Text: "the sum is " + strings.Join(e2e.LastToolResults(req), "")}
	})
	ctx := e2e.Context(t, 2*time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := suite.client.CreateAgent(ctx, client.AgentOptions{
				Config: &agentv1.AgentConfig{System: proto.String(system)}, Tools: []string{"add"},
			})
			if err != nil {
				errs <- err
				return
			}
			defer a.Delete(context.Background())
			res, err := a.Send(ctx, fmt.Sprintf("task %d", i), client.Callbacks{})
			switch {
			case err != nil:
				errs <- err
			case res.Steps != 2 || res.Text != "the sum is 42":
				errs <- fmt.Errorf("session %d: %+v", i, res)
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Fatalf("%d of %d sessions failed", n, sessions)
	}
}

func asClientError(err error, ce **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*ce = e
	}
	return ok
}

func TestReloadTools(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "hello")
	_, c := ownServer(t, dir)
	ctx := e2e.Context(t, 30*time.Second)
	a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{
		System: proto.String(suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
			if step == 0 {
				return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "add", Arguments: `{"a":1,"b":2}`}}}
			}
			return fakemodel.Turn{Text: strings.Join(e2e.LastToolResults(req), "")}
		})),
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Send(ctx, "add", client.Callbacks{})
	if err != nil || !strings.Contains(res.Text, "say_hello") { // the unknown-tool result names the tools there are
		t.Fatalf("before the reload: %+v %v", res, err)
	}
	// A new plugin appears; ReloadTools finds it, and the agent (all tools) uses it at its next send.
	b, err := os.ReadFile(filepath.Join(suite.Plugins, "math"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "math"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := c.ReloadTools(ctx)
	if err != nil || r.GetTools() != 3 {
		t.Fatalf("reload: %v %v, want 3 tools", r, err)
	}
	if err := a.SetHistory(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err = a.Send(ctx, "add", client.Callbacks{})
	if err != nil || res.Text != "3" {
		t.Fatalf("after the reload: %+v %v", res, err)
	}
}

func TestMCPServerAsTools(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "hello")
	def := fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "args": ["full"]}, "prefix": "m_"}`, suite.MCPServer)
	defPath := filepath.Join(dir, "test.mcp.json")
	if err := os.WriteFile(defPath, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	_, c := ownServer(t, dir)
	ctx := e2e.Context(t, 30*time.Second)
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	for _, ti := range tools.GetTools() {
		sources[ti.GetName()] = ti.GetSource()
	}
	if sources["m_echo"] != "mcp:"+defPath || sources["say_hello"] == "" {
		t.Fatalf("tools: %v", sources)
	}
	a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{
		System: proto.String(suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
			if step == 0 {
				return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "m_echo", Arguments: `{"text":"over MCP"}`}}}
			}
			return fakemodel.Turn{Text: strings.Join(e2e.LastToolResults(req), "")}
		})),
	}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Send(ctx, "echo", client.Callbacks{})
	if err != nil || res.Text != "echo: over MCP" {
		t.Fatalf("send through the MCP tool: %+v %v", res, err)
	}
}

// TestLivenessDuringShutdown checks what sets the liveness probe apart
// from readiness: during the grace period after SIGTERM, with a run still
// going, `agent-server probe` (a new connection, as a kubelet's probe
// makes) finds the server alive (liveness SERVING) but not ready
// (readiness NOT_SERVING), and calls other than health are refused.
func TestLivenessDuringShutdown(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "shell")
	p, c := ownServer(t, dir, "-shutdown-grace", "4s")
	_, blocked := startBlockedRun(t, c)
	probe := func(args ...string) (string, error) {
		out, err := exec.Command(suite.Bin, append(append([]string{"probe"}, args...), p.Addr)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, service := range []string{"", "liveness"} {
		if out, err := probe("-service", service); err != nil {
			t.Fatalf("probe -service %q before SIGTERM: %v %s", service, err, out)
		}
	}
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.WaitLog(t, "shutting down")
	for i := 0; i < 3; i++ { // through the grace period, not only at its start
		if out, err := probe("-service", "liveness"); err != nil {
			t.Errorf("liveness during the grace period: %v %s\n%s", err, out, p.Logs())
		}
		out, err := probe()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, "NOT_SERVING") {
			t.Errorf("readiness during the grace period: %v %q, want exit 1 and NOT_SERVING", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := c.CreateAgent(e2e.Context(t, 5*time.Second), client.AgentOptions{}); err == nil {
		t.Error("agent-server accepts a new call during its shutdown")
	}
	select {
	case err := <-blocked:
		t.Fatalf("the blocked run ended before the grace period: %v", err)
	default:
	}
	// The grace period ends: the run is stopped and the server exits 0.
	if err := <-blocked; err == nil {
		t.Error("the blocked run ended without an error")
	}
	select {
	case <-p.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("agent-server still running 20s after SIGTERM")
	}
	if p.Err() != nil {
		t.Errorf("agent-server exit: %v, want 0\n%s", p.Err(), p.Logs())
	}
}

func TestFailEarly(t *testing.T) {
	t.Parallel()
	stray := privatePlugins(t, "hello")
	if err := os.WriteFile(filepath.Join(stray, "notes.sh"), []byte("#!/bin/sh\necho these are my notes\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := runServerOnce
	t.Run("a stray executable", func(t *testing.T) {
		code, out := run(nil, "-tool-dir", stray)
		want := "not an agentcore plugin (no handshake line on stdout): " + filepath.Join(stray, "notes.sh") + "; remove it or clear its executable bit"
		if code != 1 || !strings.Contains(out, want) || strings.Contains(out, `"@message":"listening"`) {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("skipped", func(t *testing.T) {
		p, err := suite.StartServer(stray, []string{"-skip-bad-plugins"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		if !strings.Contains(p.Logs(), `"@level":"warn"`) || !strings.Contains(p.Logs(), "notes.sh") {
			t.Fatalf("no warning about the stray file:\n%s", p.Logs())
		}
	})
	for _, half := range []struct{ name, set, unset string }{
		{"a base URL without a model", "AGENTCORE_MODEL_BASE_URL=https://api.example.com/v1", "AGENTCORE_MODEL="},
		{"a model without a base URL", "AGENTCORE_MODEL=gpt-4o", "AGENTCORE_MODEL_BASE_URL="},
	} {
		t.Run("a half-set model: "+half.name, func(t *testing.T) {
			code, out := run([]string{half.set, half.unset}, "-tool-dir", privatePlugins(t, "hello"))
			if code != 2 || !strings.Contains(out, "the default model is half set") ||
				!strings.Contains(out, "-model-base-url (AGENTCORE_MODEL_BASE_URL") || !strings.Contains(out, "-model (AGENTCORE_MODEL") {
				t.Fatalf("exit %d:\n%s", code, out)
			}
		})
	}
	t.Run("an empty key variable", func(t *testing.T) {
		p, err := suite.StartServer(privatePlugins(t, "hello"), nil, "AGENTCORE_MODEL_API_KEY=")
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop()
		if !strings.Contains(p.Logs(), "AGENTCORE_MODEL_API_KEY is empty or unset") {
			t.Fatalf("no warning naming the variable:\n%s", p.Logs())
		}
	})
}

// runServerOnce runs agent-server with args and the environment added to
// the test's, for a start meant to fail: it returns the exit status and
// what it printed, stopping it (SIGTERM) if it still runs after 20 s.
func runServerOnce(env []string, args ...string) (int, string) {
	// A memory store: a start that should have failed must not touch the developer's home.
	cmd := exec.Command(suite.Bin, append([]string{"-listen", "127.0.0.1:0", "-log-format", "json", "-store", "memory"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	done := make(chan struct{})
	time.AfterFunc(20*time.Second, func() {
		select {
		case <-done:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
	})
	out, _ := cmd.CombinedOutput()
	close(done)
	return cmd.ProcessState.ExitCode(), string(out)
}
