package tests

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// blockThenAnswer calls a shell that blocks on the first turn of a task,
// and answers once the history holds a model response.
func blockThenAnswer(step int, req *fakemodel.Request) fakemodel.Turn {
	if step == 0 {
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_block", Name: "shell",
			Arguments: `{"command":"sleep 300 & echo child=$!; sleep 300"}`}}}
	}
	return fakemodel.Turn{Text: "answered: " + strings.Join(e2e.LastToolResults(req), " | ")}
}

// heldRun starts a detached send whose shell blocks and returns its run id
// once the shell printed its child's pid, and where the send's error arrives.
func heldRun(t *testing.T, a *client.Agent) (string, int, <-chan error) {
	t.Helper()
	type started struct {
		run string
		pid int
	}
	ch := make(chan started, 1)
	errs := make(chan error, 1)
	go func() {
		var run string
		_, err := a.SendWith(context.Background(), client.SendOptions{Text: "block", Detach: true, Callbacks: client.Callbacks{
			OnStart: func(id string) { run = id },
			OnToolOutput: func(o *agentv1.ToolOutputEvent) {
				if m := childPID.FindStringSubmatch(o.GetData()); m != nil {
					pid, _ := strconv.Atoi(m[1])
					ch <- started{run, pid}
				}
			},
		}})
		errs <- err
	}()
	select {
	case s := <-ch:
		return s.run, s.pid, errs
	case err := <-errs:
		t.Fatalf("the send ended before its tool blocked: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the shell tool never printed its child's pid")
	}
	return "", 0, nil
}

// TestSIGKILLMidRunThenRestart kills agent-server while a tool runs and
// starts it again on the same SQLite file: the agent and its history are
// intact, the run is interrupted, its cut-off call has an error result, and
// the next send works at once.
func TestSIGKILLMidRunThenRestart(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "shell")
	data := t.TempDir()
	p, c := ownServer(t, dir, "-data-dir", data)
	ctx := e2e.Context(t, time.Minute)
	a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, blockThenAnswer))}})
	if err != nil {
		t.Fatal(err)
	}
	run, grandchild, blocked := heldRun(t, a)
	p.Kill()
	<-blocked
	waitGone(t, "grandchild", grandchild)

	p2, c2 := ownServer(t, dir, "-data-dir", data)
	a = c2.Agent(a.ID)
	r, err := c2.Run(ctx, run)
	if err != nil || r.GetState() != agentv1.RunState_RUN_STATE_INTERRUPTED {
		t.Fatalf("the killed run after the restart: %v, %v", r, err)
	}
	h, err := a.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := "user: block\nassistant: [call shell"
	if got := history.RenderWith(h, history.English()); !strings.HasPrefix(got, want) || !strings.Contains(got, "server stopped") || len(h) != 3 {
		t.Fatalf("history after the restart:\n%s", got)
	}
	res, err := a.Send(ctx, "are you back?", client.Callbacks{})
	if err != nil || !strings.HasPrefix(res.Text, "answered") {
		t.Fatalf("the next send: %v, %v", res, err)
	}
	if err := p2.Stop(); err != nil {
		t.Fatalf("clean stop: %v\n%s", err, p2.Logs())
	}
}

// TestGracefulStopLeavesAResumableRun stops agent-server gracefully
// (SIGTERM) while a tool of a run that asked to be resumed runs: the stopped
// call is not stored as a result, so the next start resumes the run with
// that call cut off, as after a crash (reported to the model, or run again
// for an idempotent tool), and the run ends by itself.
func TestGracefulStopLeavesAResumableRun(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "shell")
	data := t.TempDir()
	p, c := ownServer(t, dir, "-data-dir", data)
	ctx := e2e.Context(t, time.Minute)
	a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, blockThenAnswer)),
		OnInterrupt: agentv1.OnInterrupt_ON_INTERRUPT_RESUME}})
	if err != nil {
		t.Fatal(err)
	}
	run, grandchild, blocked := heldRun(t, a)
	if err := p.Stop(); err != nil {
		t.Fatalf("graceful stop: %v\n%s", err, p.Logs())
	}
	<-blocked
	waitGone(t, "grandchild", grandchild)

	p2, c2 := ownServer(t, dir, "-data-dir", data)
	var resumed *agentv1.RunResumedEvent
	res, err := c2.Attach(ctx, run, 0, client.Callbacks{OnResumed: func(e *agentv1.RunResumedEvent) { resumed = e }})
	if err != nil || !strings.HasPrefix(res.Text, "answered") {
		t.Fatalf("the resumed run: %+v, %v", res, err)
	}
	if got := resumed.GetReportedCallIds(); len(got) != 1 || got[0] != "call_block" {
		t.Errorf("run_resumed %v: want the stopped call reported as cut off", resumed)
	}
	h, err := c2.Agent(a.ID).History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := history.RenderWith(h, history.English()); len(h) != 4 || strings.Contains(got, "was stopped") || !strings.Contains(got, "may or may not have run") {
		t.Fatalf("history after the resumed run: want one result for the call, saying it may or may not have run:\n%s", got)
	}
	if err := p2.Stop(); err != nil {
		t.Fatalf("clean stop: %v\n%s", err, p2.Logs())
	}
}

// TestDetachedRunReattach leaves a CONTINUE run mid-stream and attaches
// from the last event seen: exactly the missed events come, in order.
func TestDetachedRunReattach(t *testing.T) {
	t.Parallel()
	chunks := make([]string, 30)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("w%d ", i)
	}
	system := suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: chunks, ChunkDelay: 10 * time.Millisecond}
	})
	ctx := e2e.Context(t, time.Minute)
	a, err := suite.client.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	sendCtx, leave := context.WithCancel(ctx)
	var (
		run    string
		last   int64
		before strings.Builder
	)
	_, err = a.SendWith(sendCtx, client.SendOptions{Text: "talk", Detach: true, Callbacks: client.Callbacks{
		OnEvent: func(e *agentv1.Event) { run, last = e.GetRunId(), e.GetSeq() },
		OnLLMEvent: func(d *agentv1.ModelDeltaEvent) {
			if before.WriteString(d.GetText()); before.Len() > 20 {
				leave()
			}
		},
	}})
	if client.KindOf(err) != "aborted" {
		t.Fatalf("leaving the stream: %v", err)
	}
	var (
		after strings.Builder
		seqs  []int64
	)
	res, err := suite.client.Attach(ctx, run, last, client.Callbacks{
		OnEvent:    func(e *agentv1.Event) { seqs = append(seqs, e.GetSeq()) },
		OnLLMEvent: func(d *agentv1.ModelDeltaEvent) { after.WriteString(d.GetText()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := before.String() + after.String(); got != strings.Join(chunks, "") || res.Text != got {
		t.Fatalf("text before + after the reconnection = %q (result %q)", got, res.Text)
	}
	for i, s := range seqs {
		if s != last+1+int64(i) {
			t.Fatalf("seqs after %d: %v", last, seqs)
		}
	}
}

// TestPermissionAnsweredElsewhere answers a permission request with
// RespondPermission from another connection after the run's stream ended.
func TestPermissionAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_hi", Name: "say_hello", Arguments: `{"name":"Ada"}`}}}
		}
		return fakemodel.Turn{Text: strings.Join(e2e.LastToolResults(req), "")}
	})
	ctx := e2e.Context(t, time.Minute)
	a, err := suite.client.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	sendCtx, leave := context.WithCancel(ctx)
	var run string
	_, err = a.SendWith(sendCtx, client.SendOptions{Text: "greet Ada", Detach: true, AskTools: []string{"say_hello"}, Callbacks: client.Callbacks{
		OnStart: func(id string) { run = id },
		OnPermission: func(ctx context.Context, _ *agentv1.PermissionRequestEvent) client.Decision {
			leave()
			<-ctx.Done()
			return client.Deny("")
		},
	}})
	if client.KindOf(err) != "aborted" {
		t.Fatalf("leaving: %v", err)
	}
	other, err := client.Dial(suite.server.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.RespondPermission(ctx, run, "call_hi", client.Allow()); err != nil {
		t.Fatal(err)
	}
	res, err := other.Attach(ctx, run, 0, client.Callbacks{})
	if err != nil || !strings.Contains(res.Text, "Hello, Ada") {
		t.Fatalf("the run after the answer: %v, %v", res, err)
	}
}

// TestReplicasOnPostgres runs two agent-servers on one PostgreSQL schema:
// create on A, send on B, follow from A, abort from A, then SIGKILL B in a
// run: once its lease expires A ends the run and the agent works again.
func TestReplicasOnPostgres(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Schema(t)
	dir := privatePlugins(t, "shell")
	flags := []string{"-store", dsn, "-lease-ttl", "1s"}
	_, ca := ownServer(t, dir, append(flags, "-replica-id", "a")...)
	pb, cb := ownServer(t, dir, append(flags, "-replica-id", "b")...)
	ctx := e2e.Context(t, 2*time.Minute)
	onA, err := ca.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, blockThenAnswer))}})
	if err != nil {
		t.Fatal(err)
	}
	onB := cb.Agent(onA.ID)

	run, grandchild, blocked := heldRun(t, onB)
	if r, err := ca.Run(ctx, run); err != nil || r.GetReplica() != "b" || r.GetState() != agentv1.RunState_RUN_STATE_RUNNING {
		t.Fatalf("A's view of the run on B: %v, %v", r, err)
	}
	followed := make(chan error, 1)
	var calls int
	go func() {
		_, err := ca.Attach(ctx, run, 0, client.Callbacks{OnToolCall: func(*agentv1.ToolCallEvent) { calls++ }})
		followed <- err
	}()
	if stopped, err := onA.Stop(ctx); err != nil || !stopped {
		t.Fatalf("abort from A: %v, %v", stopped, err)
	}
	if err := <-blocked; client.KindOf(err) != "aborted" {
		t.Fatalf("B's send after the abort: %v", err)
	}
	waitGone(t, "grandchild", grandchild)
	if err := <-followed; codeOf(err) != codes.Canceled || calls != 1 {
		t.Fatalf("A following B's run: %v (%d tool calls seen)", err, calls)
	}
	if err := onA.SetHistory(ctx, nil); err != nil { // the next task starts afresh
		t.Fatal(err)
	}

	run, grandchild, _ = heldRun(t, onB)
	pb.Kill()
	waitGone(t, "grandchild", grandchild)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := ca.Run(ctx, run)
		if err == nil && r.GetState() == agentv1.RunState_RUN_STATE_INTERRUPTED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed replica's run: %v, %v", r, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := onA.Send(ctx, "still there?", client.Callbacks{})
	if err != nil || !strings.HasPrefix(res.Text, "answered") {
		t.Fatalf("a send on A after B died: %v, %v", res, err)
	}
	if h, _ := onA.History(ctx); !strings.Contains(history.Render(h), "server stopped") {
		t.Fatalf("the killed run's call has no repaired result:\n%s", history.Render(h))
	}
}

func codeOf(err error) codes.Code {
	var ce *client.Error
	if asClientError(err, &ce) {
		return ce.Code
	}
	return codes.OK
}
