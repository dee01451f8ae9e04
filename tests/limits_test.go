package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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
	return procMemory(t, pid, "VmRSS")
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
	// An agent called as a tool follows the rule of a send: its history,
	// 6 messages since the send, is over the limit, so its run is refused.
	root, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{
		Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, delegating("", "ask", "go on")))},
		Tools:  []string{}, AgentTools: []*agentv1.AgentTool{{AgentId: a.ID, Name: "ask"}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := root.Send(e2e.Context(t, 30*time.Second), "delegate", client.Callbacks{})
	if err != nil || !strings.Contains(res.Text, "child run refused") || !strings.Contains(res.Text, "-max-history") {
		t.Fatalf("a child run of an agent over the history limit: %+v, %v", res, err)
	}
}
