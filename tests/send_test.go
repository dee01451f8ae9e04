package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
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

// newAgent creates an agent whose model requests go to s.
func newAgent(t testing.TB, s e2e.Script, cfg *agentv1.AgentConfig) *client.Agent {
	t.Helper()
	if cfg == nil {
		cfg = &agentv1.AgentConfig{}
	}
	cfg.System = proto.String(suite.Router.Add(t, s))
	a, err := suite.client.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = a.Delete(context.Background())
		if t.Failed() {
			for _, line := range strings.Split(suite.server.Logs(), "\n") {
				if strings.Contains(line, a.ID) {
					t.Log("server:", line)
				}
			}
		}
	})
	return a
}

// kindName is an event's kind, e.g. "model_delta".
func kindName(e *agentv1.Event) string {
	return string(e.ProtoReflect().WhichOneof(e.ProtoReflect().Descriptor().Oneofs().ByName("kind")).Name())
}

func TestSendStreamsEveryEventInOrder(t *testing.T) {
	t.Parallel()
	a := newAgent(t, e2e.TwoTools, nil)
	var events []*agentv1.Event
	var results []*agentv1.ToolResultEvent
	res, err := a.Send(e2e.Context(t, 30*time.Second), "greet Ming and add 2 and 3", client.Callbacks{
		OnEvent:      func(e *agentv1.Event) { events = append(events, e) },
		OnToolResult: func(e *agentv1.ToolResultEvent) { results = append(results, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != agentv1.EndReason_END_REASON_NO_TOOL || res.Steps != 2 || !strings.Contains(res.Text, "Hello, Ming!") || !strings.Contains(res.Text, "5") {
		t.Fatalf("result: %+v", res)
	}
	if u := res.Usage; u.GetInputTokens() != 130 || u.GetOutputTokens() != 22 || u.GetCacheReadTokens() != 60 {
		t.Errorf("usage summed over the send: %v", u)
	}
	// Sequence numbers are 1, 2, 3… and every event belongs to the run.
	for i, e := range events {
		if e.GetSeq() != int64(i+1) || e.GetRunId() != res.RunID {
			t.Fatalf("event %d: seq %d run %q (run %q)", i, e.GetSeq(), e.GetRunId(), res.RunID)
		}
	}
	// The shape: start, then per step request, deltas, response, tool
	// events, step; the result last.
	var kinds []string
	for _, e := range events {
		k := kindName(e)
		if k == "model_delta" || k == "tool_output" {
			if len(kinds) > 0 && kinds[len(kinds)-1] == k {
				continue
			}
		}
		kinds = append(kinds, k)
	}
	got := strings.Join(kinds, " ")
	want := regexp.MustCompile(`^run_started model_request model_delta model_response ` +
		`((tool_call|tool_output|tool_result) ){4,}step model_request model_delta model_response step result$`)
	if !want.MatchString(got) {
		t.Fatalf("event order:\n%s", got)
	}
	// Each call: tool_call before its tool_result; both results right.
	seen := map[string]int{}
	for i, e := range events {
		if c := e.GetToolCall(); c != nil {
			seen[c.GetToolCallId()] = i
		}
		if r := e.GetToolResult(); r != nil {
			if _, ok := seen[r.GetToolCallId()]; !ok {
				t.Errorf("result of %s before its call", r.GetToolCallId())
			}
		}
	}
	if len(results) != 2 {
		t.Fatalf("tool results: %v", results)
	}
	for _, r := range results {
		if r.GetError() {
			t.Errorf("tool %s failed: %v", r.GetToolName(), r.GetOutput())
		}
	}
	// The history holds user, assistant with calls, tool results, answer.
	h, err := a.History(e2e.Context(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 4 {
		t.Fatalf("history has %d messages", len(h))
	}
	turns, err := a.Turns(e2e.Context(t, 5*time.Second))
	if err != nil || len(turns) != 3 || len(turns[1]) != 2 {
		t.Fatalf("turns: %d %v", len(turns), err)
	}
	text, err := a.Render(e2e.Context(t, 5*time.Second))
	if err != nil || !strings.Contains(text, "say_hello") {
		t.Errorf("render: %q %v", text, err)
	}
	st, err := a.Get(e2e.Context(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if st.GetHistoryLength() != 4 || st.GetState() != agentv1.AgentState_AGENT_STATE_IDLE || st.GetUsage().GetInputTokens() != 130 {
		t.Errorf("agent: %v", st)
	}
}

func TestPermissionAskAndDeny(t *testing.T) {
	t.Parallel()
	var secondRequest []string
	a := newAgent(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 1 {
			secondRequest = e2e.LastToolResults(req)
		}
		return e2e.TwoTools(step, req)
	}, nil)
	var asked []string
	res, err := a.SendWith(e2e.Context(t, 30*time.Second), client.SendOptions{
		Text:     "greet Ming and add",
		AskTools: []string{"say_hello"},
		Callbacks: client.Callbacks{
			OnPermission: func(_ context.Context, req *agentv1.PermissionRequestEvent) client.Decision {
				asked = append(asked, req.GetToolName()+" "+req.GetArguments())
				return client.Decision{Allow: false, Reason: "not today"}
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != `say_hello {"name":"Ming"}` {
		t.Fatalf("asked for %v, want only say_hello", asked)
	}
	if res.Reason != agentv1.EndReason_END_REASON_NO_TOOL || len(secondRequest) != 2 {
		t.Fatalf("the loop did not go on: %+v, tool results sent %v", res, secondRequest)
	}
	if !strings.Contains(secondRequest[0], "not today") || strings.Contains(secondRequest[0], "Hello") {
		t.Errorf("the model was not told of the denial: %q", secondRequest[0])
	}
	if secondRequest[1] != "5" {
		t.Errorf("the allowed tool did not run: %q", secondRequest[1])
	}
}

func TestNewSendCancelsOldStream(t *testing.T) {
	t.Parallel()
	a := newAgent(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if e2e.LastUserText(req) == "slow task" {
			return fakemodel.Turn{Text: "thinking…", StallAfter: 1}
		}
		return fakemodel.Turn{Text: "quick answer"}
	}, nil)
	started := make(chan struct{})
	oldErr := make(chan error, 1)
	go func() {
		_, err := a.Send(e2e.Context(t, 30*time.Second), "slow task", client.Callbacks{
			OnLLMStart: func(*agentv1.ModelRequestEvent) {
				select {
				case <-started:
				default:
					close(started)
				}
			},
		})
		oldErr <- err
	}()
	select {
	case <-started:
	case err := <-oldErr:
		t.Fatalf("the first send ended early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the first send never asked the model")
	}
	res, err := a.Send(e2e.Context(t, 30*time.Second), "quick task", client.Callbacks{})
	if err != nil || res.Text != "quick answer" {
		t.Fatalf("new send: %+v %v", res, err)
	}
	err = <-oldErr
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != codes.Canceled || ce.Kind != "aborted" {
		t.Fatalf("old stream ended with %v, want CANCELLED with kind aborted", err)
	}
}

func TestCancellingTheStreamKillsShellAndGrandchildren(t *testing.T) {
	t.Parallel()
	a := newAgent(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_sh", Name: "shell",
			Arguments: `{"command":"sleep 300 & echo child=$!; sleep 300"}`}}}
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pidCh := make(chan int, 1)
	errCh := make(chan error, 1)
	go func() {
		_, err := a.Send(ctx, "run it", client.Callbacks{
			OnToolOutput: func(o *agentv1.ToolOutputEvent) {
				if m := regexp.MustCompile(`child=(\d+)`).FindStringSubmatch(o.GetData()); m != nil {
					pid, _ := strconv.Atoi(m[1])
					pidCh <- pid
				}
			},
		})
		errCh <- err
	}()
	var pid int
	select {
	case pid = <-pidCh:
	case <-time.After(20 * time.Second):
		t.Fatal("the shell tool never printed its child's pid")
	}
	if !alive(pid) {
		t.Fatalf("grandchild %d not running before the cancel", pid)
	}
	cancel()
	if err := <-errCh; client.KindOf(err) != "aborted" {
		t.Errorf("send ended with %v, want aborted", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild sleep %d still alive 5s after the client cancelled", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The agent is idle again and its history well-formed.
	waitIdle(t, a)
}

// alive reports whether pid runs (a zombie counts as gone).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func waitIdle(t *testing.T, a *client.Agent) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := a.Get(e2e.Context(t, 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if st.GetState() == agentv1.AgentState_AGENT_STATE_IDLE {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent still running")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDemo runs `make demo`'s program against the binaries built here.
func TestDemo(t *testing.T) {
	t.Parallel()
	cmd := e2e.Go("run", "./examples/demo", "-server", suite.Bin, "-plugins", suite.Plugins)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"-> say_hello", "-> multiply", "<- multiply = 42", "reason=END_REASON_NO_TOOL steps=2"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

func TestBusyPolicies(t *testing.T) {
	t.Parallel()
	a := newAgent(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if e2e.LastUserText(req) == "slow task" {
			return fakemodel.Turn{Text: "slow answer", Delay: 2 * time.Second}
		}
		return fakemodel.Turn{Text: "answer to " + e2e.LastUserText(req)}
	}, nil)
	started := make(chan struct{})
	slow := make(chan error, 1)
	go func() {
		_, err := a.Send(e2e.Context(t, 30*time.Second), "slow task", client.Callbacks{
			OnLLMStart: func(*agentv1.ModelRequestEvent) { close(started) },
		})
		slow <- err
	}()
	<-started
	// Reject: ABORTED, and the running send goes on.
	_, err := a.SendWith(e2e.Context(t, 10*time.Second), client.SendOptions{Text: "rejected", Busy: agentv1.BusyPolicy_BUSY_POLICY_REJECT})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != codes.Aborted || ce.Reason != "AGENT_BUSY" {
		t.Fatalf("reject: %v, want ABORTED AGENT_BUSY", err)
	}
	// SetHistory during the run: FAILED_PRECONDITION.
	if err := a.SetHistory(e2e.Context(t, 10*time.Second), nil); !errors.As(err, &ce) || ce.Code != codes.FailedPrecondition {
		t.Errorf("SetHistory during a run: %v, want FAILED_PRECONDITION", err)
	}
	// Queue: waits for the running send, then runs.
	res, err := a.SendWith(e2e.Context(t, 10*time.Second), client.SendOptions{Text: "queued", Busy: agentv1.BusyPolicy_BUSY_POLICY_QUEUE})
	if err != nil || res.Text != "answer to queued" {
		t.Fatalf("queued send: %+v %v", res, err)
	}
	if err := <-slow; err != nil {
		t.Errorf("the running send was disturbed: %v", err)
	}
	h, _ := a.History(e2e.Context(t, 5*time.Second))
	if len(h) != 4 {
		t.Errorf("history has %d messages, want 4 (two sends)", len(h))
	}
}
