package server_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/internal/servetest"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/server"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/sqlite"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

func TestAgentsOutliveARestartWithoutTheirKeys(t *testing.T) {
	const key = "sk-client-secret-0123456789"
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Text: "hello", Usage: &fakemodel.Usage{Input: 5, Output: 1}}
	})
	dir := t.TempDir()
	args := []string{"-store", "sqlite:" + filepath.Join(dir, "agentcore.db")}
	ctx := ctxT(t)

	a1 := startReplica(t, model, args...)
	cfg := &agentv1.AgentConfig{BaseUrl: proto.String(model.URL), Model: proto.String("m"), ApiKey: proto.String(key), System: proto.String("s")}
	ag, err := a1.c.CreateAgent(ctx, client.AgentOptions{ID: "keeper", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Send(ctx, "hi", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	if err := a1.stop(); err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(dir, f.Name()))
		if bytes.Contains(b, []byte(key)) {
			t.Fatalf("the client's API key was written to %s", f.Name())
		}
	}

	a2 := startReplica(t, model, args...)
	ag = a2.c.Agent("keeper")
	got, err := ag.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetHistoryLength() != 2 || !got.GetHasApiKey() || !got.GetApiKeyRequired() || got.GetUsage().GetInputTokens() != 5 {
		t.Fatalf("restored agent: %v", got)
	}
	_, err = ag.Send(ctx, "again", client.Callbacks{})
	if codeOf(err) != codes.FailedPrecondition || reasonOf(err) != "API_KEY_REQUIRED" || !strings.Contains(err.Error(), "config.api_key") {
		t.Fatalf("a send without the key: %v", err)
	}
	if _, err := ag.SendWith(ctx, client.SendOptions{Text: "with the key", Config: &agentv1.AgentConfig{ApiKey: proto.String(key)}}); err != nil {
		t.Fatalf("a send giving the key: %v", err)
	}
	if got, err = ag.Update(ctx, &agentv1.AgentConfig{ApiKey: proto.String(key)}); err != nil || got.GetApiKeyRequired() {
		t.Fatalf("after giving the key again: %v, %v", got, err)
	}
	if _, err := ag.Send(ctx, "and now", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	h, err := ag.History(ctx)
	if err != nil || len(h) != 6 {
		t.Fatalf("history: %d messages, %v", len(h), err)
	}
	runs, err := ag.Runs(ctx)
	if err != nil || len(runs) != 3 || runs[0].GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED || runs[2].GetResult().GetText() != "hello" {
		t.Fatalf("runs: %v, %v", runs, err)
	}
}

func TestRestartInterruptsCutOffRunsAndRepairsTheirHistory(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(r *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "resumed"} })
	path := filepath.Join(t.TempDir(), "agentcore.db")
	ctx := ctxT(t)
	// A server that died mid-run left this behind: a running run and a
	// model response whose tool call has no result.
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rec := server.StoredAgent("cut", "", &agentv1.AgentConfig{Profile: proto.String("default")})
	if err := st.CreateAgent(ctx, rec, []*agentv1.Message{
		history.User("list the files"),
		history.Assistant(history.ToolCall("c1", "shell", `{"command":"ls"}`)),
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.StartRun(ctx, &store.Run{ID: "run_cut", AgentID: "cut", Owner: "an-old-host"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	ev := &agentv1.Event{Seq: 1, RunId: "run_cut", Kind: &agentv1.Event_RunStarted{RunStarted: &agentv1.RunStartedEvent{AgentId: "cut"}}}
	if err := st.AppendEvents(ctx, []*agentv1.Event{ev}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r := startReplica(t, model, "-store", "sqlite:"+path)
	run, err := r.c.Run(ctx, "run_cut")
	if err != nil {
		t.Fatal(err)
	}
	if run.GetState() != agentv1.RunState_RUN_STATE_INTERRUPTED || run.GetError().GetReason() != "RUN_INTERRUPTED" || run.GetEndTime() == nil {
		t.Fatalf("the cut-off run: %v", run)
	}
	ag := r.c.Agent("cut")
	h, _ := ag.History(ctx)
	if len(h) != 3 || h[2].GetRole() != agentv1.Role_ROLE_TOOL || !h[2].GetParts()[0].GetToolResult().GetError() ||
		!strings.Contains(history.Render(h[2:]), "server stopped") {
		t.Fatalf("repaired history:\n%s", history.Render(h))
	}
	var seen []int64
	_, err = r.c.Attach(ctx, "run_cut", 0, client.Callbacks{OnEvent: func(e *agentv1.Event) { seen = append(seen, e.GetSeq()) }})
	if len(seen) != 1 || codeOf(err) != codes.Unavailable || reasonOf(err) != "RUN_INTERRUPTED" {
		t.Fatalf("attach to the interrupted run: events %v, %v", seen, err)
	}
	res, err := ag.SendWith(ctx, client.SendOptions{Resume: true})
	if err != nil || res.Text != "resumed" {
		t.Fatalf("resume: %v, %v", res, err)
	}
	reqs := model.Requests()
	if last := reqs[len(reqs)-1].JSON()["messages"].([]any); last[len(last)-1].(map[string]any)["role"] != "tool" {
		t.Fatalf("the resumed request does not end with the repaired tool result")
	}
	if _, err := ag.SendWith(ctx, client.SendOptions{Resume: true}); reasonOf(err) != "NOTHING_TO_RESUME" {
		t.Fatalf("resume after the answer: %v", err)
	}
}

func TestTenantsKeepTheirStoredAgentsAndRunsApart(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("tenants:\n  alice:\n    tokens: [alice-token-0123456789]\n  bob:\n    tokens: [bob-token-0123456789ab]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-listen", "127.0.0.1:0", "-tool-dir", t.TempDir(), "-model-base-url", model.URL, "-model", "m",
		"-auth-tokens-file", tokens, "-store", "sqlite:" + filepath.Join(t.TempDir(), "a.db")}
	ctx := ctxT(t)
	dial := func(target, token string) *client.Client {
		c, err := client.Dial(target, client.WithToken(token))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	target, stop := servetest.Start(t, args, nil)
	alice, bob := dial(target, "alice-token-0123456789"), dial(target, "bob-token-0123456789ab")
	var runs [2]string
	for i, c := range []*client.Client{alice, bob} {
		var ag *client.Agent
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if ag, err = c.CreateAgent(ctx, client.AgentOptions{ID: "same", Config: &agentv1.AgentConfig{System: proto.String("s")}}); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		res, err := ag.Send(ctx, fmt.Sprint("from ", i), client.Callbacks{})
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = res.RunID
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	target, stop = servetest.Start(t, args, nil) // the same file, after a restart
	defer stop()
	alice, bob = dial(target, "alice-token-0123456789"), dial(target, "bob-token-0123456789ab")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := alice.ListTools(ctx); err == nil || time.Now().After(deadline) {
			break
		}
	}
	h, err := alice.Agent("same").History(ctx)
	if err != nil || len(h) != 2 || !strings.Contains(history.Render(h), "from 0") {
		t.Fatalf("alice's history: %v, %v", h, err)
	}
	if r, err := alice.Run(ctx, runs[0]); err != nil || r.GetAgentId() != "same" {
		t.Fatalf("alice's run: %v, %v", r, err)
	}
	if _, err := bob.Run(ctx, runs[0]); codeOf(err) != codes.NotFound {
		t.Fatalf("bob reading alice's run: %v", err)
	}
	if _, err := bob.Attach(ctx, runs[0], 0, client.Callbacks{}); codeOf(err) != codes.NotFound {
		t.Fatalf("bob attaching to alice's run: %v", err)
	}
	list, err := bob.Agent("same").Runs(ctx)
	if err != nil || len(list) != 1 || list[0].GetId() != runs[1] {
		t.Fatalf("bob's runs: %v, %v", list, err)
	}
	agents, err := bob.ListAgents(ctx)
	if err != nil || len(agents) != 1 || agents[0].GetId() != "same" {
		t.Fatalf("bob's agents: %v, %v", agents, err)
	}
}

// A replica restarting with its -replica-id on PostgreSQL ends the runs it
// owned (interrupted, their histories repaired) and leaves the other
// replicas' live runs alone; the next send works at once.
func TestRestartOnPostgresInterruptsThisReplicasRuns(t *testing.T) {
	dsn := pgtest.Schema(t)
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "back"} })
	ctx := ctxT(t)
	// What replica "a" left when it died, beside a live run of replica "b".
	st, err := postgresOpen(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"mine", "theirs"} {
		rec := server.StoredAgent(id, "", &agentv1.AgentConfig{Profile: proto.String("default")})
		if err := st.CreateAgent(ctx, rec, []*agentv1.Message{history.User("list the files"),
			history.Assistant(history.ToolCall("c1", "shell", `{"command":"ls"}`))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.StartRun(ctx, &store.Run{ID: "run_mine", AgentID: "mine", Owner: "a"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.StartRun(ctx, &store.Run{ID: "run_theirs", AgentID: "theirs", Owner: "b"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	st.Close()

	a := startReplica(t, model, "-store", dsn, "-replica-id", "a")
	run, err := a.c.Run(ctx, "run_mine")
	if err != nil || run.GetState() != agentv1.RunState_RUN_STATE_INTERRUPTED || run.GetError().GetReason() != "RUN_INTERRUPTED" {
		t.Fatalf("the restarted replica's own run: %v, %v", run, err)
	}
	h, _ := a.c.Agent("mine").History(ctx)
	if len(h) != 3 || !h[2].GetParts()[0].GetToolResult().GetError() || !strings.Contains(history.Render(h[2:]), "server stopped") {
		t.Fatalf("repaired history:\n%s", history.Render(h))
	}
	if run, _ := a.c.Run(ctx, "run_theirs"); run.GetState() != agentv1.RunState_RUN_STATE_RUNNING {
		t.Fatalf("another replica's live run was touched: %v", run)
	}
	res, err := a.c.Agent("mine").Send(ctx, "are you back?", client.Callbacks{})
	if err != nil || res.Text != "back" {
		t.Fatalf("the next send: %v, %v", res, err)
	}
}
