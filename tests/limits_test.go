package tests

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/pkg/llm/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// rss returns a process's resident set size in bytes.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// mechanism returns how the server enforces tool limits (ListTools).
func mechanism(t *testing.T, c *client.Client) string {
	t.Helper()
	tools, err := c.ListTools(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return tools.GetLimitsMechanism()
}

func TestToolOverItsMemoryLimit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	p, c := ownServer(t, privatePlugins(t, "shell"), "-tool-memory", "256MiB")
	if m := mechanism(t, c); !strings.Contains(m, "enforces memory") {
		t.Skip("no memory limits here: " + m)
	}
	tools, _ := c.ListTools(ctxT(t, 10*time.Second))
	if l := tools.GetTools()[0].GetLimits(); l.GetMemoryBytes() != 256<<20 {
		t.Errorf("ListTools shows the shell's limits as %v", l)
	}
	ctx := ctxT(t, 60*time.Second)
	if res, err := c.ExecuteTool(ctx, "shell", map[string]any{"command": "echo warm"}, 0, nil); err != nil || res.GetError() {
		t.Fatalf("warm-up: %v %v", res, err)
	}
	before := rss(t, p.cmd.Process.Pid)
	hog := "import sys\nb = []\nwhile True:\n    b.append(b'x' * (8 << 20))\n    print(len(b) * 8, flush=True)\n"
	var last time.Time
	var mib atomic.Int64
	res, err := c.ExecuteTool(ctx, "shell", map[string]any{"command": "python3 -c \"" + hog + "\""}, 0, func(o *agentv1.ToolOutputChunk) {
		for _, f := range strings.Fields(o.GetData()) {
			if n, err := strconv.Atoi(f); err == nil {
				mib.Store(int64(n))
			}
		}
		last = time.Now()
	})
	took := time.Since(last)
	if err != nil {
		t.Fatal(err)
	}
	if !res.GetError() || !strings.Contains(res.GetOutput().GetText(), `tool "shell" exceeded its memory limit of 256 MiB and was killed`) {
		t.Fatalf("result = %v", res.GetOutput())
	}
	if n := mib.Load(); n < 128 || n > 256 {
		t.Errorf("the tool got to %d MiB under a 256 MiB limit", n)
	}
	if took > time.Second {
		t.Errorf("the result came %v after the tool's last allocation", took)
	}
	if grew := rss(t, p.cmd.Process.Pid) - before; grew > 5<<20 {
		t.Errorf("agent-server's RSS grew by %.1f MB", float64(grew)/(1<<20))
	}
	if res, err := c.ExecuteTool(ctx, "shell", map[string]any{"command": "echo next"}, 0, nil); err != nil || res.GetError() {
		t.Fatalf("the next call: %v %v", res, err)
	}
}

func TestDaemonDiesWithItsCall(t *testing.T) {
	t.Parallel()
	_, c := ownServer(t, privatePlugins(t, "shell"))
	if m := mechanism(t, c); !strings.HasPrefix(m, "cgroup") {
		t.Skip("a daemon leaves its process group; only a cgroup holds it: " + m)
	}
	ctx, cancel := context.WithCancel(ctxT(t, 30*time.Second))
	daemon := 0
	// setsid and a double fork: the daemon is in no process group of the call.
	cmd := "setsid bash -c 'sleep 1000 >/dev/null 2>&1 & echo daemon=$!'; sleep 1000"
	_, _ = c.ExecuteTool(ctx, "shell", map[string]any{"command": cmd}, 0, func(o *agentv1.ToolOutputChunk) {
		if m := regexp.MustCompile(`daemon=(\d+)`).FindStringSubmatch(o.GetData()); m != nil {
			daemon, _ = strconv.Atoi(m[1])
			cancel()
		}
	})
	if daemon == 0 {
		t.Fatal("the daemon's pid never came")
	}
	waitGone(t, "daemon", daemon)
}

func TestHugeResultKeepsTheStreamAndTheHistory(t *testing.T) {
	t.Parallel()
	_, c := ownServer(t, suite.testPlugins)
	var seen []string
	system := suite.router.add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "big_result", Arguments: `{"bytes":200000000}`}}}
		}
		seen = lastToolResults(req)
		return fakemodel.Turn{Text: "read it"}
	})
	a, err := c.CreateAgent(ctxT(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	var result *agentv1.ToolResultEvent
	res, err := a.Send(ctxT(t, 60*time.Second), "read the big thing", client.Callbacks{
		OnToolResult: func(e *agentv1.ToolResultEvent) { result = e },
	})
	if err != nil || res.Text != "read it" {
		t.Fatalf("send: %v %v", res, err)
	}
	text := result.GetOutput().GetText()
	if result.GetError() || len(text) > 40000 || !strings.HasPrefix(text, "aaaa") || !strings.HasSuffix(text, "zzzz") || !strings.Contains(text, "cut from the middle") {
		t.Fatalf("tool result event: error=%v, %d bytes", result.GetError(), len(text))
	}
	if len(seen) != 1 || len(seen[0]) > 40000 {
		t.Fatalf("the model got %d results, %d bytes", len(seen), len(seen[0]))
	}
	h, err := c.API().GetHistory(ctxT(t, 10*time.Second), &agentv1.GetHistoryRequest{AgentId: a.ID})
	if err != nil || len(h.GetMessages()) != 4 || h.GetNextPageToken() != "" {
		t.Fatalf("GetHistory: %d messages, %v", len(h.GetMessages()), err)
	}
	// And again: the agent and its stream still work.
	if _, err := a.Send(ctxT(t, 60*time.Second), "again", client.Callbacks{}); err != nil {
		t.Fatalf("the next send: %v", err)
	}
}

func TestEndless501EndsTheSend(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	a := newAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		requests.Add(1)
		return fakemodel.Turn{Status: 501}
	}, nil)
	start := time.Now()
	_, err := a.Send(ctxT(t, 30*time.Second), "hi", client.Callbacks{})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != codes.Unavailable || ce.Reason != "SERVER" {
		t.Fatalf("err = %v", err)
	}
	if n := requests.Load(); n != 1 || time.Since(start) > 5*time.Second {
		t.Fatalf("%d requests in %v: a 501 was retried", n, time.Since(start))
	}
}

func TestEndless503EndsWithinTheRetryBound(t *testing.T) {
	t.Parallel()
	p, c := ownServer(t, privatePlugins(t, "hello"), "-retry-max-elapsed", "3s", "-retry-max-delay", "1s")
	system := suite.router.add(t, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: 503} })
	// The agent asks for an hour: the server's bound wins.
	a, err := c.CreateAgent(ctxT(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{
		System: proto.String(system), RetryMaxElapsed: durationpb.New(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = a.Send(ctxT(t, 60*time.Second), "hi", client.Callbacks{})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Reason != "SERVER" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("the send ended after %v, past the 3 s bound", d)
	}
	// The log is read from the server's stderr as it comes: wait for it.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		logs := p.logs()
		n := strings.Count(logs, `"@message":"model request failed"`)
		if n >= 2 && strings.Contains(logs, `"@level":"warn"`) && strings.Contains(logs, "giving up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d WARN lines for the failed attempts:\n%s", n, logs)
		}
	}
}

func TestHistoryLimitIsOneRule(t *testing.T) {
	t.Parallel()
	_, c := ownServer(t, privatePlugins(t, "hello"), "-max-history", "4")
	system := suite.router.add(t, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	a, err := c.CreateAgent(ctxT(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := func(n int) []*agentv1.Message {
		var h []*agentv1.Message
		for i := range n {
			role := agentv1.Role_ROLE_USER
			if i%2 == 1 {
				role = agentv1.Role_ROLE_ASSISTANT
			}
			h = append(h, &agentv1.Message{Role: role, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "m"}}}})
		}
		return h
	}
	if _, err := c.API().SetHistory(ctxT(t, 10*time.Second), &agentv1.SetHistoryRequest{AgentId: a.ID, Messages: msgs(4)}); err != nil {
		t.Fatal(err)
	}
	// A history SetHistory accepts is one a send may start from.
	if _, err := a.Send(ctxT(t, 30*time.Second), "go on", client.Callbacks{}); err != nil {
		t.Fatalf("send on a full history: %v", err)
	}
	_, err = c.API().SetHistory(ctxT(t, 10*time.Second), &agentv1.SetHistoryRequest{AgentId: a.ID, Messages: msgs(5)})
	if errorInfo(err).GetReason() != "HISTORY_LIMIT" {
		t.Fatalf("SetHistory of 5 under a limit of 4: %v", err)
	}
}

// TestPID1LeavesNoZombie runs agent-server as the init of a new PID
// namespace (as in a container without an init) and cancels shell calls
// whose grandchildren then lose their parents.
func TestPID1LeavesNoZombie(t *testing.T) {
	t.Parallel()
	if err := exec.Command("unshare", "-p", "-f", "--mount-proc", "true").Run(); err != nil {
		t.Skipf("cannot make a PID namespace here: %v", err)
	}
	p, err := startServerUnder([]string{"unshare", "-p", "-f", "--mount-proc"}, privatePlugins(t, "shell"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server := childOf(t, p.cmd.Process.Pid)
	for range 3 {
		ctx, cancel := context.WithCancel(ctxT(t, 30*time.Second))
		_, _ = c.ExecuteTool(ctx, "shell", map[string]any{"command": "(sleep 1000 & sleep 1000 & wait) & sleep 1000 & echo started; wait"}, 0,
			func(o *agentv1.ToolOutputChunk) {
				if strings.Contains(o.GetData(), "started") {
					cancel()
				}
			})
		cancel()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		z := zombiesOf(server)
		if len(z) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("zombies left under agent-server as PID 1: %v", z)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(server, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatal("agent-server as PID 1 did not stop on SIGTERM")
	}
	if !strings.Contains(p.logs(), `"@message":"stopped"`) {
		t.Errorf("no clean stop:\n%s", p.logs())
	}
}

// childOf returns the first child of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(b)); len(f) > 0 {
			child, _ := strconv.Atoi(f[0])
			return child
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d has no child", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// zombiesOf lists the zombie children of pid.
func zombiesOf(pid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestNoSocketDirectorySurvivesSIGKILLAndRestart(t *testing.T) {
	t.Parallel()
	if err := syscall.Statfs("/dev/shm", &syscall.Statfs_t{}); err != nil {
		t.Skip("no /dev/shm")
	}
	tmp, err := os.MkdirTemp("/dev/shm", "e2e")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := privatePlugins(t, "hello")
	instances := func() []string {
		entries, _ := os.ReadDir(tmp)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	p, err := startServer(dir, nil, "TMPDIR="+tmp)
	if err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("-%d-", p.cmd.Process.Pid)) {
		t.Fatalf("socket directories of a running server: %v", got)
	}
	p.kill() // SIGKILL: it cannot remove its directory
	if got := instances(); len(got) != 1 {
		t.Fatalf("after SIGKILL: %v", got)
	}
	again, err := startServer(dir, nil, "TMPDIR="+tmp)
	if err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("-%d-", again.cmd.Process.Pid)) {
		t.Fatalf("after a restart: %v (the dead instance's directory must go)", got)
	}
	if err := again.stop(); err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 0 {
		t.Fatalf("after a clean stop: %v", got)
	}
}

func TestFailEarly(t *testing.T) {
	t.Parallel()
	stray := privatePlugins(t, "hello")
	if err := os.WriteFile(filepath.Join(stray, "notes.sh"), []byte("#!/bin/sh\necho these are my notes\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (int, string) {
		cmd := exec.Command(suite.bin, append([]string{"-listen", "127.0.0.1:0", "-log-format", "json"}, args...)...)
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
	t.Run("a stray executable", func(t *testing.T) {
		code, out := run(nil, "-tool-dir", stray)
		want := "not an agentcore plugin (no handshake line on stdout): " + filepath.Join(stray, "notes.sh") + "; remove it or clear its executable bit"
		if code != 1 || !strings.Contains(out, want) || strings.Contains(out, `"@message":"listening"`) {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("skipped", func(t *testing.T) {
		p, err := startServer(stray, []string{"-skip-bad-plugins"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.stop()
		if !strings.Contains(p.logs(), `"@level":"warn"`) || !strings.Contains(p.logs(), "notes.sh") {
			t.Fatalf("no warning about the stray file:\n%s", p.logs())
		}
	})
	t.Run("a half-set model", func(t *testing.T) {
		code, out := run([]string{"AGENTCORE_MODEL_BASE_URL=https://api.example.com/v1", "AGENTCORE_MODEL="}, "-tool-dir", privatePlugins(t, "hello"))
		if code != 2 || !strings.Contains(out, "-model-base-url") || !strings.Contains(out, "-model (AGENTCORE_MODEL") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("an empty key variable", func(t *testing.T) {
		p, err := startServer(privatePlugins(t, "hello"), nil, "AGENTCORE_MODEL_API_KEY=")
		if err != nil {
			t.Fatal(err)
		}
		defer p.stop()
		if !strings.Contains(p.logs(), "AGENTCORE_MODEL_API_KEY is empty or unset") {
			t.Fatalf("no warning naming the variable:\n%s", p.logs())
		}
	})
}
