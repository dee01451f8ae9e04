package server_test

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/server"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/sqlite"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// cutRun leaves in a SQLite store what a server killed mid-run leaves: a
// running run that asked to be resumed, taken over attempts times already,
// its first events stored, and a model response whose tool call has no
// result. It returns the store's path. budget is the cut send's.
func cutRun(t *testing.T, attempts int, budget ...*agentv1.Budget) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentcore.db")
	ctx := ctxT(t)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := server.StoredAgent("cut", "", &agentv1.AgentConfig{Profile: proto.String("default")})
	if err := st.CreateAgent(ctx, rec, []*agentv1.Message{history.User("earlier"), history.AssistantText("done before")}); err != nil {
		t.Fatal(err)
	}
	r := &store.Run{ID: "run_cut", AgentID: "cut", Owner: "an-old-host", Resume: server.ResumeRecord(&agentv1.StartRun{AgentId: "cut"})}
	if len(budget) > 0 {
		r.Resume = server.ResumeRecord(&agentv1.StartRun{AgentId: "cut", Budget: budget[0]})
	}
	if err := st.StartRun(ctx, r, time.Hour); err != nil {
		t.Fatal(err)
	}
	for range attempts {
		cur, _ := st.GetRun(ctx, "run_cut")
		if _, err := st.TakeOverRun(ctx, "run_cut", "an-old-host", cur.Attempts, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.AppendHistory(ctx, "cut", 2, []*agentv1.Message{
		history.User("list the files"), history.Assistant(history.ToolCall("c1", "shell", `{"command":"ls"}`)),
	}, nil, true); err != nil {
		t.Fatal(err)
	}
	var evs []*agentv1.Event
	for i := range 3 {
		evs = append(evs, &agentv1.Event{Seq: int64(i + 1), RunId: "run_cut", Kind: &agentv1.Event_RunStarted{RunStarted: &agentv1.RunStartedEvent{AgentId: "cut"}}})
	}
	if err := st.AppendEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	return path
}

// A run that asked to be resumed is taken up by the next start without any
// client: the same run id, its events following the stored ones, the cut
// call answered, the model asked only for the rounds not in the history.
func TestRestartResumesCutOffRuns(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(r *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "finished"} })
	path := cutRun(t, 0)
	r := startReplica(t, model, "-store", "sqlite:"+path, "-resume-attempts", "3")
	ctx := ctxT(t)
	var seqs []int64
	var resumed *agentv1.RunResumedEvent
	res, err := r.c.Attach(ctx, "run_cut", 0, client.Callbacks{
		OnEvent:   func(e *agentv1.Event) { seqs = append(seqs, e.GetSeq()) },
		OnResumed: func(e *agentv1.RunResumedEvent) { resumed = e },
	})
	if err != nil || res.Text != "finished" || res.Steps != 2 {
		t.Fatalf("the resumed run: %+v, %v", res, err)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seqs %v: not 1, 2, 3…", seqs)
		}
	}
	if resumed.GetAttempt() != 1 || resumed.GetStep() != 1 || len(resumed.GetReportedCallIds()) != 1 {
		t.Errorf("run_resumed %v", resumed)
	}
	run, err := r.c.Run(ctx, "run_cut")
	if err != nil || run.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED || run.GetAttempts() != 1 {
		t.Fatalf("the run: %v, %v", run, err)
	}
	h, _ := r.c.Agent("cut").History(ctx)
	if len(h) != 6 || !h[4].GetParts()[0].GetToolResult().GetError() || !strings.Contains(history.Render(h[4:5]), "may or may not have run") ||
		h[5].GetRole() != agentv1.Role_ROLE_ASSISTANT {
		t.Fatalf("history:\n%s", history.Render(h))
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// A resumed run keeps its send's budget: the model's first answer goes
// over the output tokens the send allowed, and the run ends for its budget
// instead of asking the model again.
func TestResumedRunKeepsItsBudget(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(r *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c2", Name: "no_such_tool", Arguments: "{}"}},
			Usage: &fakemodel.Usage{Input: 10, Output: 50}}
	})
	path := cutRun(t, 0, &agentv1.Budget{OutputTokens: proto.Int64(20)})
	r := startReplica(t, model, "-store", "sqlite:"+path, "-resume-attempts", "3")
	var exceeded *agentv1.BudgetExceededEvent
	res, err := r.c.Attach(ctxT(t), "run_cut", 0, client.Callbacks{
		OnBudgetExceeded: func(e *agentv1.BudgetExceededEvent) { exceeded = e },
	})
	if err != nil || res.Reason != agentv1.EndReason_END_REASON_BUDGET {
		t.Fatalf("the resumed run: %+v, %v", res, err)
	}
	if exceeded.GetLimit() != agentv1.BudgetLimit_BUDGET_LIMIT_OUTPUT_TOKENS {
		t.Errorf("budget_exceeded %v", exceeded)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// A run cut off more times than the server resumes one ends failed with a
// reason of its own, its history repaired; the server goes on.
func TestPoisonRunEndsFailed(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(r *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	path := cutRun(t, 2)
	r := startReplica(t, model, "-store", "sqlite:"+path, "-resume-attempts", "2")
	ctx := ctxT(t)
	run, err := r.c.Run(ctx, "run_cut")
	if err != nil || run.GetState() != agentv1.RunState_RUN_STATE_FAILED || run.GetError().GetReason() != "RESUME_LIMIT" ||
		run.GetError().GetCode() != int32(codes.Aborted) || run.GetAttempts() != 2 {
		t.Fatalf("the run: %v, %v", run, err)
	}
	if len(model.Requests()) != 0 {
		t.Errorf("the model was asked %d times", len(model.Requests()))
	}
	if _, err := r.c.Agent("cut").Send(ctx, "again", client.Callbacks{}); err != nil {
		t.Fatalf("a send after: %v", err)
	}
}

// A server closed before its tools loaded does not wait for the run it
// took over to resume (it waited for the tools forever): Close returns, and
// the run is left running for the next start.
func TestCloseBeforeToolsLeavesTheResumedRun(t *testing.T) {
	path := cutRun(t, 0)
	ctx := ctxT(t)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load([]string{"-tool-limits", "off", "-tool-dir", t.TempDir(), "-model-base-url", "http://127.0.0.1:9", "-model", "m",
		"-resume-attempts", "3"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close waits for a resumed run whose tools never loaded")
	}
	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r, err := st.GetRun(ctx, "run_cut"); err != nil || r.Done() {
		t.Fatalf("the run after Close: %+v, %v; want it left running for the next start", r, err)
	}
}
