package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

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
		rec := storedAgent(id, "", &agentv1.AgentConfig{Profile: proto.String("default")}, nil, nil, nil)
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

// A permission request of a run on replica A is answered on replica B.
func TestRespondPermissionOnAnotherReplica(t *testing.T) {
	dsn := pgtest.Schema(t)
	model := fakemodel.StartTB(t)
	model.Handle(callThenAnswer("rm_everything", "done"))
	a := startReplica(t, model, "-store", dsn, "-replica-id", "a")
	b := startReplica(t, model, "-store", dsn, "-replica-id", "b")
	ctx := ctxT(t)
	ag, err := a.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sendCtx, leave := context.WithCancel(ctx)
	var runID string
	_, err = ag.SendWith(sendCtx, client.SendOptions{Text: "clean up", Detach: true, Callbacks: client.Callbacks{
		OnStart: func(id string) { runID = id },
		OnPermission: func(ctx context.Context, req *agentv1.PermissionRequestEvent) client.Decision {
			leave() // the person answers on another replica
			<-ctx.Done()
			return client.Deny("gone")
		},
	}})
	if client.KindOf(err) != "aborted" {
		t.Fatalf("leaving: %v", err)
	}
	if run, err := b.c.Run(ctx, runID); err != nil || run.GetReplica() != "a" || len(run.GetPendingPermissions()) != 1 {
		t.Fatalf("B's view of A's run: %v, %v", run, err)
	}
	if err := b.c.RespondPermission(ctx, runID, "c1", client.Deny("not today, says B")); err != nil {
		t.Fatal(err)
	}
	res, err := b.c.Attach(ctx, runID, 0, client.Callbacks{})
	if err != nil || res.Text != "done" {
		t.Fatalf("A's run after B's answer: %v, %v", res, err)
	}
	h, _ := b.c.Agent(ag.ID).History(ctx)
	if !strings.Contains(history.Render(h), "not today, says B") {
		t.Fatalf("B's denial is not in the history:\n%s", history.Render(h))
	}
}

// A run longer than -lease-ttl keeps its lease (renewed) while another
// replica sweeps for dead replicas' runs: it is not taken over.
func TestALongRunKeepsItsLeaseWhileAnotherReplicaSweeps(t *testing.T) {
	dsn := pgtest.Schema(t)
	model := fakemodel.StartTB(t)
	g := newGate(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn {
		<-g.ch
		return fakemodel.Turn{Text: "finally"}
	})
	a := startReplica(t, model, "-store", dsn, "-replica-id", "a", "-lease-ttl", "1s")
	b := startReplica(t, model, "-store", dsn, "-replica-id", "b", "-lease-ttl", "1s")
	ctx := ctxT(t)
	ag, err := a.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	type sent struct {
		res *client.Result
		err error
	}
	done := make(chan sent, 1)
	started := make(chan string, 1)
	go func() {
		res, err := ag.SendWith(ctx, client.SendOptions{Text: "think long", Callbacks: client.Callbacks{OnStart: func(id string) { started <- id }}})
		done <- sent{res, err}
	}()
	runID := <-started
	first, err := b.c.Run(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3500 * time.Millisecond) // three and a half leases; B sweeps every half
	run, err := b.c.Run(ctx, runID)
	if err != nil || run.GetState() != agentv1.RunState_RUN_STATE_RUNNING || run.GetReplica() != "a" ||
		!run.GetLeaseExpireTime().AsTime().After(first.GetLeaseExpireTime().AsTime().Add(2*time.Second)) {
		t.Fatalf("the long run after 3.5 leases, seen from B: %v, %v (lease then %v)", run, err, first.GetLeaseExpireTime().AsTime())
	}
	g.open()
	if s := <-done; s.err != nil || s.res.Text != "finally" {
		t.Fatalf("the long run: %v, %v", s.res, s.err)
	}
	if run, _ := b.c.Run(ctx, runID); run.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED {
		t.Fatalf("the long run's end: %v", run)
	}
}
