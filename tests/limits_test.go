package tests

import (
	"bufio"
	"context"
	"encoding/json"
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

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
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
	tools, err := c.ListTools(e2e.Context(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return tools.GetLimitsMechanism()
}

// Python programs the shell tool runs to go over each limit.
const (
	// pyHog allocates 8 MiB at a time without end, printing the MiB it holds.
	pyHog = `python3 -c '
b = []
while True:
    b.append(b"x" * (8 << 20))
    print(len(b) * 8, flush=True)
'`
	// pyForks forks sleeping children until a fork fails.
	pyForks = `python3 -c '
import os, time
n = 0
while True:
    try:
        pid = os.fork()
    except OSError as e:
        print(n, "forks, then:", e, flush=True)
        break
    if pid == 0:
        os.closerange(0, 1024)
        time.sleep(60)
        os._exit(0)
    n += 1
'`
	// pyFiles opens files until an open fails.
	pyFiles = `ulimit -n; python3 -c '
fs = []
try:
    while True:
        fs.append(open("/dev/null"))
except OSError as e:
    print(len(fs), e)
'`
)

// TestToolsOverTheirLimits runs tools over each of their limits under each
// mechanism this machine has, in the real agent-server. The limits come
// from the server's defaults (-tool-memory), from the config file's
// plugins section (the shell plugin's others) and from what a tool asks
// for, capped by the server's maximums (the limited plugin's); ListTools
// shows them and the calls get them. Each breach ends in a result naming
// the limit (over its open files a process gets EMFILE instead, which the
// tool reports), and the next call works; in a run, the agent goes on.
func TestToolsOverTheirLimits(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		unavailable(t, "no python3 on PATH")
	}
	// The shell's CPU time limit leaves room for the memory hog: on some
	// VMs here, faulting in 256 MiB costs over 1 s of CPU time by itself.
	file := filepath.Join(t.TempDir(), "agentcore.yaml")
	if err := os.WriteFile(file, []byte("plugins:\n  shell:\n    processes: 48\n    cpu_time: 3s\n    open_files: 64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lim := func(mem int, procs uint32, cpu time.Duration, files uint32) *agentv1.ToolLimits {
		l := &agentv1.ToolLimits{MemoryBytes: uint64(mem) << 20, MaxProcesses: procs, MaxOpenFiles: files}
		if cpu > 0 {
			l.CpuTime = durationpb.New(cpu)
		}
		return l
	}
	mechanisms := []struct {
		name, flag string
		listed     map[string]*agentv1.ToolLimits // ListTools' limits of each tool
	}{
		{"cgroup", "auto", map[string]*agentv1.ToolLimits{
			"shell":       lim(256, 48, 3*time.Second, 64), // -tool-memory, the rest from the file
			"greedy_hog":  lim(300, 1024, 0, 0),            // asks for 64 GiB: -tool-memory-max
			"greedy_spin": lim(256, 1024, time.Second, 0),  // asks for an hour: -tool-cpu-time-max
		}},
		{"rlimit", "rlimit", map[string]*agentv1.ToolLimits{ // no process count
			"shell":       lim(256, 0, 3*time.Second, 64),
			"greedy_hog":  lim(300, 0, 0, 0),
			"greedy_spin": lim(256, 0, time.Second, 0),
		}},
	}
	cases := []struct {
		name    string
		under   string // "" for every mechanism, else only this one
		tool    string
		command string // the shell's
		want    string // in the result
		breach  bool   // an error result: the call's processes were killed
		hogMiB  int    // a hog printing how many MiB it holds, to this limit
	}{
		{"memory", "cgroup", "shell", pyHog, `tool "shell" exceeded its memory limit of 256 MiB and was killed`, true, 256},
		{"memory a tool asked for, capped", "", "greedy_hog", "", `tool "greedy_hog" exceeded its memory limit of 300 MiB and was killed`, true, 300},
		{"processes", "cgroup", "shell", pyForks, `tool "shell" exceeded its limit of 48 processes and was killed`, true, 0},
		{"CPU time of a child", "", "shell", "while :; do :; done", `tool "shell" exceeded its CPU time limit of 3s and was killed`, true, 0},
		{"CPU time a tool asked for, capped", "", "greedy_spin", "", `tool "greedy_spin" exceeded its CPU time limit of 1s and was killed`, true, 0},
		{"open files", "", "shell", pyFiles, "Too many open files", false, 0},
	}
	for _, m := range mechanisms {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			p, c := ownServer(t, privatePlugins(t, "shell", "limited"), "-tool-limits", m.flag,
				"-tool-memory", "256MiB", "-tool-memory-max", "300MiB", "-tool-cpu-time-max", "1s", "-config", file)
			tools, err := c.ListTools(e2e.Context(t, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if mech := tools.GetLimitsMechanism(); !strings.HasPrefix(mech, m.name) || !strings.Contains(mech, "enforces memory, processes, CPU time") && m.name == "cgroup" {
				unavailable(t, "no %s limits here: %s", m.name, mech)
			}
			for _, tl := range tools.GetTools() {
				if want := m.listed[tl.GetName()]; !proto.Equal(tl.GetLimits(), want) {
					t.Errorf("ListTools: %s's limits %v, want %v", tl.GetName(), tl.GetLimits(), want)
				}
			}
			ctx := e2e.Context(t, 2*time.Minute)
			next := func(what string) {
				t.Helper()
				if res, err := c.ExecuteTool(ctx, "shell", map[string]any{"command": "echo next"}, 0, nil); err != nil || res.GetError() {
					t.Fatalf("the call after %s: %v %v", what, res, err)
				}
			}
			next("the start")
			for _, tt := range cases {
				if tt.under != "" && tt.under != m.name {
					continue
				}
				input := map[string]any{}
				if tt.command != "" {
					input["command"] = tt.command
				}
				before := rss(t, p.Cmd.Process.Pid)
				var last time.Time
				var mib atomic.Int64
				res, err := c.ExecuteTool(ctx, tt.tool, input, 0, func(o *agentv1.ToolOutputChunk) {
					for _, f := range strings.Fields(o.GetData()) {
						if n, err := strconv.Atoi(f); err == nil {
							mib.Store(int64(n))
						}
					}
					last = time.Now()
				})
				took := time.Since(last)
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				text := res.GetOutput().GetText() + res.GetOutput().GetJson()
				if res.GetError() != tt.breach || !strings.Contains(text, tt.want) {
					t.Errorf("%s: error=%v %q, want %q", tt.name, res.GetError(), text, tt.want)
				}
				if tt.hogMiB > 0 {
					if n := mib.Load(); n > int64(tt.hogMiB) || m.name == "cgroup" && n < int64(tt.hogMiB/2) {
						t.Errorf("%s: the tool got to %d MiB under a %d MiB limit", tt.name, n, tt.hogMiB)
					}
				}
				if tt.hogMiB > 0 && m.name == "cgroup" {
					if took > time.Second {
						t.Errorf("%s: the result came %v after the tool's last allocation", tt.name, took)
					}
					if grew := rss(t, p.Cmd.Process.Pid) - before; grew > 5<<20 {
						t.Errorf("%s: agent-server's RSS grew by %.1f MB", tt.name, float64(grew)/(1<<20))
					}
				}
				if tt.name == "open files" && !strings.Contains(text, `64\n`) {
					t.Errorf("open files: the shell's limit is not 64: %q", text)
				}
				next(tt.name)
			}
			if m.name != "cgroup" {
				return
			}
			// In a run: the breach is the tool's result, the model reads it
			// and calls the tool again, which works.
			var results []*agentv1.ToolResultEvent
			system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
				switch step {
				case 0:
					return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: toJSON(t, map[string]any{"command": pyHog})}}}
				case 1:
					return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c2", Name: "shell", Arguments: `{"command":"echo after"}`}}}
				}
				return fakemodel.Turn{Text: "done"}
			})
			a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.Send(ctx, "use a lot of memory", client.Callbacks{
				OnToolResult: func(e *agentv1.ToolResultEvent) { results = append(results, e) },
			})
			if err != nil || out.Text != "done" || len(results) != 2 {
				t.Fatalf("send: %v %v, %d tool results", out, err, len(results))
			}
			if r := results[0]; !r.GetError() || !strings.Contains(r.GetOutput().GetText(), `tool "shell" exceeded its memory limit of 256 MiB and was killed`) {
				t.Errorf("the hog's result in the run: %v", r.GetOutput())
			}
			if r := results[1]; r.GetError() || !strings.Contains(r.GetOutput().GetJson(), "after") {
				t.Errorf("the next call in the run: %v", r.GetOutput())
			}
		})
	}
}

// toJSON encodes v.
func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDaemonDiesWithItsCall: a setsid, double-forked daemon that a tool
// left behind is dead once its call ends: cancelled, stopped in a run (the
// Stop RPC), or with agent-server (SIGTERM) after a call that ended well.
// The daemon left the call's process group: only a cgroup holds it while
// agent-server runs; at its exit agent-server kills the orphans it reaped
// too.
func TestDaemonDiesWithItsCall(t *testing.T) {
	t.Parallel()
	const leave = "setsid bash -c 'sleep 1000 >/dev/null 2>&1 & echo daemon=$!'"
	daemonPID := func(s string) int {
		if m := regexp.MustCompile(`daemon=(\d+)`).FindStringSubmatch(s); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
		return 0
	}
	tests := []struct {
		name   string
		cgroup bool // only a cgroup kills it
		run    func(t *testing.T, p *e2e.Server, c *client.Client) (daemon int)
	}{
		{"cancelled ExecuteTool", true, func(t *testing.T, _ *e2e.Server, c *client.Client) int {
			ctx, cancel := context.WithCancel(e2e.Context(t, 30*time.Second))
			defer cancel()
			daemon := 0
			_, _ = c.ExecuteTool(ctx, "shell", map[string]any{"command": leave + "; sleep 1000"}, 0, func(o *agentv1.ToolOutputChunk) {
				if daemon = daemonPID(o.GetData()); daemon != 0 {
					cancel()
				}
			})
			return daemon
		}},
		{"Stop on a run", true, func(t *testing.T, _ *e2e.Server, c *client.Client) int {
			system := suite.Router.Add(t, func(step int, _ *fakemodel.Request) fakemodel.Turn {
				if step == 0 {
					return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: toJSON(t, map[string]any{"command": leave + "; sleep 1000"})}}}
				}
				return fakemodel.Turn{Text: "stopped"}
			})
			a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
			if err != nil {
				t.Fatal(err)
			}
			pids, ended := make(chan int, 1), make(chan error, 1)
			go func() {
				_, err := a.Send(e2e.Context(t, 30*time.Second), "leave a daemon", client.Callbacks{OnToolOutput: func(o *agentv1.ToolOutputEvent) {
					if pid := daemonPID(o.GetData()); pid != 0 {
						pids <- pid
					}
				}})
				ended <- err
			}()
			var daemon int
			select {
			case daemon = <-pids:
			case err := <-ended:
				t.Fatalf("the send ended before the daemon started: %v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("no daemon pid")
			}
			if resp, err := c.API().Stop(e2e.Context(t, 10*time.Second), &agentv1.StopRequest{AgentId: a.ID}); err != nil || !resp.GetStopped() {
				t.Fatalf("Stop: %v %v", resp, err)
			}
			select {
			case <-ended:
			case <-time.After(20 * time.Second):
				t.Fatal("the send did not end after Stop")
			}
			return daemon
		}},
		{"agent-server's exit", false, func(t *testing.T, p *e2e.Server, c *client.Client) int {
			res, err := c.ExecuteTool(e2e.Context(t, 30*time.Second), "shell", map[string]any{"command": leave}, 0, nil)
			if err != nil || res.GetError() {
				t.Fatalf("shell: %v %v", res, err)
			}
			daemon := daemonPID(res.GetOutput().GetJson())
			if !alive(daemon) {
				t.Fatalf("daemon %d is not running after a call that ended well: the test proves nothing", daemon)
			}
			if err := p.Stop(); err != nil {
				t.Fatalf("agent-server's exit: %v", err)
			}
			return daemon
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, c := ownServer(t, privatePlugins(t, "shell"))
			if m := mechanism(t, c); tt.cgroup && !strings.HasPrefix(m, "cgroup") {
				unavailable(t, "a daemon leaves its call's process group; only a cgroup holds it: %s", m)
			}
			daemon := tt.run(t, p, c)
			if daemon == 0 {
				t.Fatal("the daemon's pid never came")
			}
			waitGone(t, "daemon", daemon)
		})
	}
}

// TestHugeResultKeepsTheStreamAndTheHistory: a 200 MB tool result leaves
// the stream, the history and GetHistory working, under a message limit of
// 256 KiB; and once the history is larger than a message, GetHistory
// pages it: every message once, in order, no response over the limit.
func TestHugeResultKeepsTheStreamAndTheHistory(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	_, c := ownServer(t, suite.TestPlugins, "-max-message-bytes", strconv.Itoa(limit))
	var seen []string
	reply := func(input string) string { // the model's answer to "fill N": 40 KiB of one letter
		var n int
		if _, err := fmt.Sscanf(input, "fill %d", &n); err == nil {
			return strings.Repeat(string(rune('a'+n%26)), 40<<10)
		}
		return "ok"
	}
	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if e2e.LastUserText(req) != "read the big thing" {
			return fakemodel.Turn{Text: reply(e2e.LastUserText(req))}
		}
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "big_result", Arguments: `{"bytes":200000000}`}}}
		}
		seen = e2e.LastToolResults(req)
		return fakemodel.Turn{Text: "read it"}
	})
	a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	var result *agentv1.ToolResultEvent
	res, err := a.Send(e2e.Context(t, 60*time.Second), "read the big thing", client.Callbacks{
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
	h, err := c.API().GetHistory(e2e.Context(t, 10*time.Second), &agentv1.GetHistoryRequest{AgentId: a.ID})
	if err != nil || len(h.GetMessages()) != 4 || h.GetNextPageToken() != "" {
		t.Fatalf("GetHistory: %d messages, %v", len(h.GetMessages()), err)
	}
	// And again: the agent and its stream still work, and the history
	// grows past what one response holds.
	const fills = 12
	for i := range fills {
		if _, err := a.Send(e2e.Context(t, 60*time.Second), fmt.Sprintf("fill %d", i), client.Callbacks{}); err != nil {
			t.Fatalf("send %d after the big result: %v", i, err)
		}
	}
	var pages [][]*agentv1.Message
	for _, size := range []int32{0, 5} {
		var got []*agentv1.Message
		token, n := "", 0
		for {
			resp, err := c.API().GetHistory(e2e.Context(t, 10*time.Second), &agentv1.GetHistoryRequest{AgentId: a.ID, PageSize: size, PageToken: token})
			if err != nil {
				t.Fatalf("page size %d, page %d: %v", size, n+1, err)
			}
			n++
			if b := proto.Size(resp); b > limit {
				t.Fatalf("page size %d, page %d: %d bytes, over the %d-byte limit", size, n, b, limit)
			}
			if int(resp.GetStartIndex()) != len(got) || resp.GetHistoryLength() != 4+2*fills || size > 0 && len(resp.GetMessages()) > int(size) {
				t.Fatalf("page size %d, page %d: %d messages from %d of %d", size, n, len(resp.GetMessages()), resp.GetStartIndex(), resp.GetHistoryLength())
			}
			got = append(got, resp.GetMessages()...)
			if token = resp.GetNextPageToken(); token == "" {
				break
			}
		}
		if n < 2 || len(got) != 4+2*fills {
			t.Fatalf("page size %d: %d pages, %d messages", size, n, len(got))
		}
		for i := range fills {
			user, answer := got[4+2*i].GetParts()[0].GetText(), got[5+2*i].GetParts()[0].GetText()
			if want := fmt.Sprintf("fill %d", i); user != want || answer != reply(want) {
				t.Fatalf("page size %d: messages %d and %d are %.20q and %.20q, want %q and its answer", size, 4+2*i, 5+2*i, user, answer, want)
			}
		}
		pages = append(pages, got)
	}
	for i := range pages[0] {
		if !proto.Equal(pages[0][i], pages[1][i]) {
			t.Fatalf("message %d differs between page sizes", i)
		}
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
	_, err := a.Send(e2e.Context(t, 30*time.Second), "hi", client.Callbacks{})
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
	system := suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: 503} })
	// The agent asks for an hour: the server's bound wins.
	a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{
		System: proto.String(system), RetryMaxElapsed: durationpb.New(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = a.Send(e2e.Context(t, 60*time.Second), "hi", client.Callbacks{})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Reason != "SERVER" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("the send ended after %v, past the 3 s bound", d)
	}
	// The log is read from the server's stderr as it comes: wait for it.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		logs := p.Logs()
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
	system := suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
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
	if _, err := c.API().SetHistory(e2e.Context(t, 10*time.Second), &agentv1.SetHistoryRequest{AgentId: a.ID, Messages: msgs(4)}); err != nil {
		t.Fatal(err)
	}
	// A history SetHistory accepts is one a send may start from.
	if _, err := a.Send(e2e.Context(t, 30*time.Second), "go on", client.Callbacks{}); err != nil {
		t.Fatalf("send on a full history: %v", err)
	}
	_, err = c.API().SetHistory(e2e.Context(t, 10*time.Second), &agentv1.SetHistoryRequest{AgentId: a.ID, Messages: msgs(5)})
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
		unavailable(t, "cannot make a PID namespace here (unshare -p -f --mount-proc): %v", err)
	}
	p, err := suite.StartServerUnder([]string{"unshare", "-p", "-f", "--mount-proc"}, privatePlugins(t, "shell"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server := childOf(t, p.Cmd.Process.Pid)
	for range 3 {
		ctx, cancel := context.WithCancel(e2e.Context(t, 30*time.Second))
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
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		p.Kill()
		t.Fatal("agent-server as PID 1 did not stop on SIGTERM")
	}
	if !strings.Contains(p.Logs(), `"@message":"stopped"`) {
		t.Errorf("no clean stop:\n%s", p.Logs())
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
		unavailable(t, "no /dev/shm: %v", err)
	}
	tmp, err := os.MkdirTemp("/dev/shm", "e2e")
	if err != nil {
		unavailable(t, "no directory of ours in /dev/shm: %v", err)
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
	p, err := suite.StartServer(dir, nil, "TMPDIR="+tmp)
	if err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("-%d-", p.Cmd.Process.Pid)) {
		t.Fatalf("socket directories of a running server: %v", got)
	}
	p.Kill() // SIGKILL: it cannot remove its directory
	if got := instances(); len(got) != 1 {
		t.Fatalf("after SIGKILL: %v", got)
	}
	again, err := suite.StartServer(dir, nil, "TMPDIR="+tmp)
	if err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("-%d-", again.Cmd.Process.Pid)) {
		t.Fatalf("after a restart: %v (the dead instance's directory must go)", got)
	}
	if err := again.Stop(); err != nil {
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
		cmd := exec.Command(suite.Bin, append([]string{"-listen", "127.0.0.1:0", "-log-format", "json"}, args...)...)
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
