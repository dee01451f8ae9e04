package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// treeAgent creates, on c's server, an agent answering with script s that
// may use tools (nil: none) and call the agents of ats.
func treeAgent(t *testing.T, c *client.Client, s e2e.Script, tools []string, ats ...*agentv1.AgentTool) *client.Agent {
	t.Helper()
	if tools == nil {
		tools = []string{}
	}
	cfg := &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, s))}
	a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: cfg, Tools: tools, AgentTools: ats})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Delete(context.Background()) })
	return a
}

// calls is a model turn calling tools, each with a task.
func calls(tasks ...string) fakemodel.Turn {
	var tc []fakemodel.ToolCall
	for i := 0; i < len(tasks); i += 2 {
		tc = append(tc, fakemodel.ToolCall{ID: "call_" + tasks[i], Name: tasks[i], Arguments: fmt.Sprintf(`{"task":%q}`, tasks[i+1])})
	}
	return fakemodel.Turn{ToolCalls: tc, Usage: &fakemodel.Usage{Input: 10, Output: 2}}
}

// answer is a script answering once with text made from the request.
func answer(f func(req *fakemodel.Request) string) e2e.Script {
	return func(step int, req *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Text: f(req), Usage: &fakemodel.Usage{Input: 10, Output: 2}}
	}
}

// delegating is a script that calls tools (name, task, …) first, then
// answers with prefix and the results.
func delegating(prefix string, tasks ...string) e2e.Script {
	return func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return calls(tasks...)
		}
		return fakemodel.Turn{Text: prefix + strings.Join(e2e.LastToolResults(req), " | "), Usage: &fakemodel.Usage{Input: 10, Output: 2}}
	}
}

// innerSeqs checks that each run's events, as the root's stream nests
// them, come in their own order from run_started to the result.
func innerSeqs(t *testing.T, events []*agentv1.Event) map[string][]*agentv1.ChildRunEvent {
	t.Helper()
	byRun := map[string][]*agentv1.ChildRunEvent{}
	for _, e := range events {
		if c := e.GetChild(); c != nil {
			byRun[c.GetRunId()] = append(byRun[c.GetRunId()], c)
		}
	}
	for run, evs := range byRun {
		// A run's own seq counts the events of its children it carried,
		// which reach the root as theirs: it grows, with gaps.
		for i, c := range evs {
			if i == 0 && c.GetEvent().GetSeq() != 1 || i > 0 && c.GetEvent().GetSeq() <= evs[i-1].GetEvent().GetSeq() || c.GetEvent().GetRunId() != run {
				t.Fatalf("run %s: nested event %d has seq %d, run %q", run, i, c.GetEvent().GetSeq(), c.GetEvent().GetRunId())
			}
		}
		if evs[0].GetEvent().GetRunStarted() == nil || evs[len(evs)-1].GetEvent().GetResult() == nil {
			t.Errorf("run %s: nested events from %s to %s", run, kindName(evs[0].GetEvent()), kindName(evs[len(evs)-1].GetEvent()))
		}
	}
	return byRun
}

func TestChildRunsNestInTheRootStream(t *testing.T) {
	t.Parallel()
	c := suite.client
	grand := treeAgent(t, c, answer(func(req *fakemodel.Request) string { return "grand found " + e2e.LastUserText(req) }), nil)
	c1 := treeAgent(t, c, answer(func(req *fakemodel.Request) string { return "c1 did " + e2e.LastUserText(req) }), nil)
	c2 := treeAgent(t, c, delegating("c2 got ", "dig", "the roots"), nil, &agentv1.AgentTool{AgentId: grand.ID, Name: "dig"})
	root := treeAgent(t, c, delegating("root: ", "one", "task one", "two", "task two"), nil,
		&agentv1.AgentTool{AgentId: c1.ID, Name: "one", Description: "does the first thing"},
		&agentv1.AgentTool{AgentId: c2.ID, Name: "two"})

	var events []*agentv1.Event
	res, err := root.Send(e2e.Context(t, 60*time.Second), "split the work", client.Callbacks{
		OnEvent: func(e *agentv1.Event) { events = append(events, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "root: c1 did task one | c2 got grand found the roots" {
		t.Fatalf("result %q", res.Text)
	}
	for i, e := range events {
		if e.GetSeq() != int64(i+1) || e.GetRunId() != res.RunID {
			t.Fatalf("event %d of the root's stream: seq %d, run %q", i, e.GetSeq(), e.GetRunId())
		}
	}
	byRun := innerSeqs(t, events)
	if len(byRun) != 3 {
		t.Fatalf("%d child runs nested, want 3", len(byRun))
	}
	// Each child's events lie between its call's tool_call and tool_result
	// events in its parent's stream; the grandchild's at depth 2 under c2's run.
	pos := func(match func(*agentv1.Event) bool) int {
		return slices.IndexFunc(events, match)
	}
	agentOf := map[string]string{}
	for run, evs := range byRun {
		agentOf[evs[0].GetAgentId()] = run
		first := pos(func(e *agentv1.Event) bool { return e.GetChild().GetRunId() == run })
		last := -1
		for i, e := range events {
			if e.GetChild().GetRunId() == run {
				last = i
			}
		}
		call := evs[0].GetToolCallId()
		parent := evs[0].GetParentRunId()
		started := pos(func(e *agentv1.Event) bool { return eventOf(e, parent).GetToolCall().GetToolCallId() == call })
		ended := pos(func(e *agentv1.Event) bool { return eventOf(e, parent).GetToolResult().GetToolCallId() == call })
		if started < 0 || ended < 0 || !(started < first && last < ended) {
			t.Errorf("run %s (call %s of %s): its events at %d..%d, the call at %d..%d", run, call, parent, first, last, started, ended)
		}
	}
	if got := byRun[agentOf[grand.ID]][0]; got.GetDepth() != 2 || got.GetParentRunId() != agentOf[c2.ID] {
		t.Errorf("the grandchild's events: depth %d, parent %s (c2's run %s)", got.GetDepth(), got.GetParentRunId(), agentOf[c2.ID])
	}
	for _, a := range []*client.Agent{c1, c2} {
		if got := byRun[agentOf[a.ID]][0]; got.GetDepth() != 1 || got.GetParentRunId() != res.RunID {
			t.Errorf("child of %s: depth %d, parent %s", a.ID, got.GetDepth(), got.GetParentRunId())
		}
	}
	if tu := res.TreeUsage; tu.GetChildRuns() != 3 || tu.GetModelRequests() != 6 || res.RunUsage.GetModelRequests() != 2 || tu.GetInputTokens() != 60 {
		t.Errorf("usage: run %v, tree %v", res.RunUsage, tu)
	}

	// The tree in ListRuns: the root and its three descendants, stored like any run.
	runs, err := c.Runs(e2e.Context(t, 10*time.Second), client.RunFilter{RootRunID: res.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 4 {
		t.Fatalf("the tree lists %d runs", len(runs))
	}
	want := map[string][3]any{
		res.RunID:         {"", "", 0},
		agentOf[c1.ID]:    {res.RunID, res.RunID, 1},
		agentOf[c2.ID]:    {res.RunID, res.RunID, 1},
		agentOf[grand.ID]: {agentOf[c2.ID], res.RunID, 2},
	}
	for _, r := range runs {
		w, ok := want[r.GetId()]
		if !ok || r.GetParentRunId() != w[0] || r.GetRootRunId() != w[1] || int(r.GetDepth()) != w[2] || r.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED {
			t.Errorf("run %s: parent %q root %q depth %d state %v; want %v", r.GetId(), r.GetParentRunId(), r.GetRootRunId(), r.GetDepth(), r.GetState(), w)
		}
	}
	// A child run is a run like any: Attach replays its own events.
	var replay []*agentv1.Event
	if _, err := c.Attach(e2e.Context(t, 10*time.Second), agentOf[grand.ID], 0, client.Callbacks{OnEvent: func(e *agentv1.Event) { replay = append(replay, e) }}); err != nil {
		t.Fatal(err)
	}
	if len(replay) != len(byRun[agentOf[grand.ID]]) {
		t.Errorf("Attach on the grandchild: %d events, the root's stream nested %d", len(replay), len(byRun[agentOf[grand.ID]]))
	}
}

// eventOf is e, or the child run's event it carries, when it belongs to run;
// nil otherwise.
func eventOf(e *agentv1.Event, run string) *agentv1.Event {
	if c := e.GetChild(); c != nil {
		e = c.GetEvent()
	}
	if e.GetRunId() != run {
		return nil
	}
	return e
}

func TestStoppingTheRootKillsAGrandchildsTools(t *testing.T) {
	t.Parallel()
	c := suite.client
	grand := treeAgent(t, c, func(step int, req *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_sh", Name: "shell",
			Arguments: `{"command":"echo plugin=$PPID child=$$; sleep 300"}`}}}
	}, []string{"shell"})
	child := treeAgent(t, c, delegating("", "work", "sleep"), nil, &agentv1.AgentTool{AgentId: grand.ID, Name: "work"})
	root := treeAgent(t, c, delegating("", "delegate", "go"), nil, &agentv1.AgentTool{AgentId: child.ID, Name: "delegate"})

	pids := make(chan [2]int, 1)
	errCh := make(chan error, 1)
	var rootRun string
	var mu sync.Mutex
	go func() {
		_, err := root.Send(context.Background(), "go deep", client.Callbacks{
			OnStart: func(id string) { mu.Lock(); rootRun = id; mu.Unlock() },
			OnChild: func(ce *agentv1.ChildRunEvent) {
				m := regexp.MustCompile(`plugin=(\d+) child=(\d+)`).FindStringSubmatch(ce.GetEvent().GetToolOutput().GetData())
				if m != nil {
					p, _ := strconv.Atoi(m[1])
					s, _ := strconv.Atoi(m[2])
					pids <- [2]int{p, s}
				}
			},
		})
		errCh <- err
	}()
	var pid [2]int
	select {
	case pid = <-pids:
	case err := <-errCh:
		t.Fatalf("the send ended early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the grandchild's shell never printed its pids")
	}
	if !alive(pid[0]) || !alive(pid[1]) {
		t.Fatalf("plugin %d or shell %d not running before the stop", pid[0], pid[1])
	}
	stopped, err := root.Stop(e2e.Context(t, 20*time.Second))
	if err != nil || !stopped {
		t.Fatalf("Stop: %v, %v", stopped, err)
	}
	// Stop returns once the root ended, which waits for its descendants.
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid[0]) || alive(pid[1]) {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild's plugin %d (alive %v) or shell %d (alive %v) outlived the root's Stop", pid[0], alive(pid[0]), pid[1], alive(pid[1]))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := <-errCh; client.KindOf(err) != "aborted" {
		t.Errorf("the root's send ended with %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	runs, err := c.Runs(e2e.Context(t, 10*time.Second), client.RunFilter{RootRunID: rootRun})
	if err != nil || len(runs) != 3 {
		t.Fatalf("tree: %d runs, %v", len(runs), err)
	}
	for _, r := range runs {
		if r.GetState() != agentv1.RunState_RUN_STATE_STOPPED {
			t.Errorf("run %s at depth %d is %v", r.GetId(), r.GetDepth(), r.GetState())
		}
	}
	for _, a := range []*client.Agent{root, child, grand} {
		waitIdle(t, a)
	}
}

func TestAGrandchildsPermissionIsAnsweredOnTheRoot(t *testing.T) {
	t.Parallel()
	c := suite.client
	grand := treeAgent(t, c, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_hi", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
		}
		return fakemodel.Turn{Text: "grand: " + strings.Join(e2e.LastToolResults(req), "")}
	}, []string{"say_hello"})
	child := treeAgent(t, c, delegating("", "greet", "say hi"), nil, &agentv1.AgentTool{AgentId: grand.ID, Name: "greet"})
	root := treeAgent(t, c, delegating("", "delegate", "say hi"), nil, &agentv1.AgentTool{AgentId: child.ID, Name: "delegate"})

	var asked []*agentv1.PermissionRequestEvent
	var askedBy []string
	res, err := root.SendWith(e2e.Context(t, 60*time.Second), client.SendOptions{
		Text: "greet", AskTools: []string{"say_hello"},
		Callbacks: client.Callbacks{
			OnChild: func(ce *agentv1.ChildRunEvent) {
				if ce.GetEvent().GetPermissionRequest() != nil {
					askedBy = append(askedBy, ce.GetAgentId())
				}
			},
			OnPermission: func(ctx context.Context, p *agentv1.PermissionRequestEvent) client.Decision {
				asked = append(asked, p)
				return client.Allow()
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0].GetToolName() != "say_hello" || fmt.Sprint(askedBy) != "["+grand.ID+"]" {
		t.Fatalf("asked %v by %v", asked, askedBy)
	}
	if !strings.Contains(res.Text, "grand: Hello, Ming!") {
		t.Errorf("the allowed call did not run: %q", res.Text)
	}
}

// TestClosingTheStreamDeniesAChildsPendingPermission: a client that closes
// its side of the root's stream can answer no more, so the permission
// requests waiting in the run tree are denied at once: the grandchild's
// as the root's (it waited for the permission timeout).
func TestClosingTheStreamDeniesAChildsPendingPermission(t *testing.T) {
	t.Parallel()
	c := suite.client
	grand := treeAgent(t, c, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_hi", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
		}
		return fakemodel.Turn{Text: "grand: " + strings.Join(e2e.LastToolResults(req), "")}
	}, []string{"say_hello"})
	child := treeAgent(t, c, delegating("", "greet", "say hi"), nil, &agentv1.AgentTool{AgentId: grand.ID, Name: "greet"})
	root := treeAgent(t, c, delegating("", "delegate", "say hi"), nil, &agentv1.AgentTool{AgentId: child.ID, Name: "delegate"})

	ctx := e2e.Context(t, 60*time.Second)
	stream, err := c.API().Send(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{AgentId: root.ID,
		Input:          []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "greet"}}},
		PermissionMode: agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED, AskTools: []string{"say_hello"}}}}); err != nil {
		t.Fatal(err)
	}
	closed := false
	for {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("the stream ended before the result: %v", err)
		}
		ev := resp.GetEvent()
		if !closed && ev.GetChild().GetEvent().GetPermissionRequest() != nil {
			if err := stream.CloseSend(); err != nil {
				t.Fatal(err)
			}
			closed = true
		}
		if r := ev.GetResult(); r != nil {
			if !closed || !strings.Contains(r.GetText(), "no one could approve") {
				t.Fatalf("the root's result %q: want the grandchild's call denied for the closed stream", r.GetText())
			}
			return
		}
	}
}

// TestCrossCallsDoNotWaitForever: two run trees whose roots call each
// other's agents (queued, the default) would wait for each other forever;
// each call fails after -child-queue-wait instead, and both runs end.
func TestCrossCallsDoNotWaitForever(t *testing.T) {
	t.Parallel()
	_, c := ownServer(t, privatePlugins(t, "hello"), "-child-queue-wait", "2s")
	ctx := e2e.Context(t, 60*time.Second)
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	// Each root asks the model, which calls the other agent once both
	// roots have started: neither agent is idle when its call comes.
	crossing := func(other string) e2e.Script {
		return func(step int, req *fakemodel.Request) fakemodel.Turn {
			if step == 0 {
				arrived.Done()
				select {
				case <-both:
				case <-time.After(30 * time.Second):
				}
				return calls(other, "help")
			}
			return fakemodel.Turn{Text: strings.Join(e2e.LastToolResults(req), "")}
		}
	}
	mk := func(s e2e.Script) *client.Agent {
		a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, s))}, Tools: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := mk(crossing("call_b")), mk(crossing("call_a"))
	for _, u := range []struct {
		from *client.Agent
		to   string
		name string
	}{{a, b.ID, "call_b"}, {b, a.ID, "call_a"}} {
		if _, err := c.API().UpdateAgent(ctx, &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: u.from.ID,
			AgentTools: []*agentv1.AgentTool{{AgentId: u.to, Name: u.name}}}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"agent_tools"}}}); err != nil {
			t.Fatal(err)
		}
	}
	type ended struct {
		res *client.Result
		err error
	}
	results := make(chan ended, 2)
	for _, x := range []*client.Agent{a, b} {
		go func() {
			res, err := x.Send(ctx, "go", client.Callbacks{})
			results <- ended{res, err}
		}()
	}
	for range 2 {
		r := <-results
		if r.err != nil || !strings.Contains(r.res.Text, "stayed busy") || !strings.Contains(r.res.Text, "-child-queue-wait") {
			t.Fatalf("a root whose call waited for the other tree: %+v, %v", r.res, r.err)
		}
	}
}

// treeServer starts a server of its own with a run depth of 1 and prices
// for the fake model, and a client of it.
func treeServer(t *testing.T) *client.Client {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "agent-server.yaml")
	if err := os.WriteFile(cfg, []byte("profiles:\n  default:\n    prices:\n      fake-model: {input: 1000, output: 10000}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(suite.Plugins, []string{"-config", cfg, "-max-run-depth", "1", "-store", "memory"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	c, err := client.Dial(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDepthAndBudgetBounds(t *testing.T) {
	t.Parallel()
	c := treeServer(t)

	t.Run("a call past the depth bound is refused, clearly", func(t *testing.T) {
		grand := treeAgent(t, c, answer(func(*fakemodel.Request) string { return "never" }), nil)
		child := treeAgent(t, c, delegating("child: ", "deeper", "x"), nil, &agentv1.AgentTool{AgentId: grand.ID, Name: "deeper"})
		root := treeAgent(t, c, delegating("root: ", "delegate", "x"), nil, &agentv1.AgentTool{AgentId: child.ID, Name: "delegate"})
		res, err := root.Send(e2e.Context(t, 30*time.Second), "go", client.Callbacks{})
		if err != nil {
			t.Fatal(err)
		}
		want := "child run refused: agent " + grand.ID + " would run at depth 2, deeper than the server allows (1, -max-run-depth)"
		if !strings.Contains(res.Text, want) {
			t.Fatalf("result %q\nwant it to quote %q", res.Text, want)
		}
		if runs, _ := c.Runs(e2e.Context(t, 10*time.Second), client.RunFilter{RootRunID: res.RunID}); len(runs) != 2 {
			t.Errorf("the tree holds %d runs, want the root and the child", len(runs))
		}
	})

	// Every round of loop calls add and spends 10 input and 2 output
	// tokens: 0.03 at the prices above.
	loop := func(step int, req *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "add", Arguments: `{"a":1,"b":2}`}}, Usage: &fakemodel.Usage{Input: 10, Output: 2}}
	}
	tests := []struct {
		name   string
		budget *agentv1.Budget
		limit  agentv1.BudgetLimit
		steps  int
	}{
		{"model requests", &agentv1.Budget{ModelRequests: proto.Int64(3)}, agentv1.BudgetLimit_BUDGET_LIMIT_MODEL_REQUESTS, 3},
		{"input tokens", &agentv1.Budget{InputTokens: proto.Int64(25)}, agentv1.BudgetLimit_BUDGET_LIMIT_INPUT_TOKENS, 3},
		{"output tokens", &agentv1.Budget{OutputTokens: proto.Int64(4)}, agentv1.BudgetLimit_BUDGET_LIMIT_OUTPUT_TOKENS, 2},
		{"tool calls", &agentv1.Budget{ToolCalls: proto.Int64(2)}, agentv1.BudgetLimit_BUDGET_LIMIT_TOOL_CALLS, 3},
		{"cost", &agentv1.Budget{Cost: proto.Float64(0.1)}, agentv1.BudgetLimit_BUDGET_LIMIT_COST, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := treeAgent(t, c, loop, []string{"add"})
			var exceeded []*agentv1.BudgetExceededEvent
			res, err := a.SendWith(e2e.Context(t, 30*time.Second), client.SendOptions{Text: "add forever", Budget: tt.budget,
				Callbacks: client.Callbacks{OnBudgetExceeded: func(b *agentv1.BudgetExceededEvent) { exceeded = append(exceeded, b) }}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != agentv1.EndReason_END_REASON_BUDGET || res.Steps != tt.steps || len(exceeded) != 1 || exceeded[0].GetLimit() != tt.limit {
				t.Fatalf("reason %v after %d steps, events %v; want %v after %d", res.Reason, res.Steps, exceeded, tt.limit, tt.steps)
			}
			run, err := c.Run(e2e.Context(t, 10*time.Second), res.RunID)
			if err != nil || run.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED || run.GetResult().GetReason() != agentv1.EndReason_END_REASON_BUDGET ||
				run.GetResult().GetTreeUsage().GetModelRequests() != int64(tt.steps) {
				t.Errorf("stored run %v, %v", run, err)
			}
		})
	}

	t.Run("wall time, from the agent's default budget", func(t *testing.T) {
		a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{
			Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
				return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "shell", Arguments: `{"command":"sleep 300"}`}}}
			}))},
			Tools: []string{"shell"}, Budget: &agentv1.Budget{WallTime: durationpb.New(500 * time.Millisecond)},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = a.Delete(context.Background()) }()
		start := time.Now()
		res, err := a.Send(e2e.Context(t, 30*time.Second), "sleep", client.Callbacks{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Reason != agentv1.EndReason_END_REASON_BUDGET || time.Since(start) > 10*time.Second {
			t.Fatalf("reason %v after %v", res.Reason, time.Since(start))
		}
	})

	t.Run("a child is refused when the tree has no model request left", func(t *testing.T) {
		child := treeAgent(t, c, answer(func(*fakemodel.Request) string { return "never asked" }), nil)
		root := treeAgent(t, c, delegating("root: ", "delegate", "x"), nil, &agentv1.AgentTool{AgentId: child.ID, Name: "delegate"})
		var exceeded []*agentv1.BudgetExceededEvent
		res, err := root.SendWith(e2e.Context(t, 30*time.Second), client.SendOptions{Text: "go", Budget: &agentv1.Budget{ModelRequests: proto.Int64(1)},
			Callbacks: client.Callbacks{OnBudgetExceeded: func(b *agentv1.BudgetExceededEvent) { exceeded = append(exceeded, b) }}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Reason != agentv1.EndReason_END_REASON_BUDGET || len(exceeded) != 1 || exceeded[0].GetLimit() != agentv1.BudgetLimit_BUDGET_LIMIT_MODEL_REQUESTS {
			t.Fatalf("reason %v, events %v", res.Reason, exceeded)
		}
		runs, _ := c.Runs(e2e.Context(t, 10*time.Second), client.RunFilter{RootRunID: res.RunID})
		if len(runs) != 1 || res.TreeUsage.GetChildRuns() != 0 {
			t.Errorf("the refused child ran: %d runs in the tree, usage %v", len(runs), res.TreeUsage)
		}
		h, _ := root.History(e2e.Context(t, 10*time.Second))
		var refused string
		for _, m := range h {
			for _, p := range m.GetParts() {
				if r := p.GetToolResult(); r != nil {
					refused = r.GetOutput().GetText()
				}
			}
		}
		if !strings.Contains(refused, "child run refused: the budget of run "+res.RunID+" is spent: model requests 1 of 1") {
			t.Errorf("the call's result: %q", refused)
		}
	})
}
