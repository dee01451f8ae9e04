package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

func TestPermissionAnsweredAfterTheStreamIsGone(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(callThenAnswer("rm_everything", "done"))
	r := startReplica(t, model, "-store", "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	ctx := ctxT(t)
	ag, err := r.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sendCtx, leave := context.WithCancel(ctx)
	var runID string
	asked := make(chan struct{})
	_, err = ag.SendWith(sendCtx, client.SendOptions{Text: "clean up", Detach: true, Callbacks: client.Callbacks{
		OnStart: func(id string) { runID = id },
		OnPermission: func(ctx context.Context, req *agentv1.PermissionRequestEvent) client.Decision {
			close(asked)
			leave() // nobody here answers: the person decides later, elsewhere
			<-ctx.Done()
			return client.Deny("gone")
		},
	}})
	<-asked
	if client.KindOf(err) != "aborted" {
		t.Fatalf("leaving: %v", err)
	}
	run, err := r.c.Run(ctx, runID)
	if err != nil || len(run.GetPendingPermissions()) != 1 || run.GetPendingPermissions()[0].GetToolName() != "rm_everything" {
		t.Fatalf("pending permissions: %v, %v", run, err)
	}
	if err := r.c.RespondPermission(ctx, runID, "c1", client.Deny("not today")); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Attach(ctx, runID, 0, client.Callbacks{})
	if err != nil || res.Text != "done" {
		t.Fatalf("the run after the answer: %v, %v", res, err)
	}
	h, _ := ag.History(ctx)
	if !strings.Contains(history.Render(h), "not today") {
		t.Fatalf("the denial is not in the history:\n%s", history.Render(h))
	}
	if err := r.c.RespondPermission(ctx, runID, "c1", client.Allow()); reasonOf(err) != "PERMISSION_ANSWERED" {
		t.Fatalf("answering twice: %v", err)
	}
	if err := r.c.RespondPermission(ctx, runID, "c9", client.Allow()); codeOf(err) != codes.FailedPrecondition && codeOf(err) != codes.NotFound {
		t.Fatalf("answering no request: %v", err)
	}
}

func TestPermissionTimeoutDenies(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(callThenAnswer("deploy", "ok"))
	r := startReplica(t, model, "-permission-timeout", "100ms")
	ctx := ctxT(t)
	ag, err := r.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ag.SendWith(ctx, client.SendOptions{Text: "deploy", Detach: true, Callbacks: client.Callbacks{
		OnPermission: func(ctx context.Context, _ *agentv1.PermissionRequestEvent) client.Decision {
			<-ctx.Done() // a person who never answers
			return client.Deny("")
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ag.History(ctx)
	if !strings.Contains(history.Render(h), "permission timeout (100ms)") {
		t.Fatalf("history:\n%s", history.Render(h))
	}
}

func TestAnswerReachesAReplicaThatMissedTheNotice(t *testing.T) {
	dsn, a, b := twoReplicas(t, callThenAnswer("rm_everything", "done"), "-permission-timeout", "1m")
	ctx := ctxT(t)
	sendCtx, leave := context.WithCancel(ctx)
	var runID string
	asked := make(chan struct{})
	_, _ = b.c.Agent("shared").SendWith(sendCtx, client.SendOptions{Text: "clean up", Detach: true, Callbacks: client.Callbacks{
		OnStart: func(id string) { runID = id },
		OnPermission: func(ctx context.Context, _ *agentv1.PermissionRequestEvent) client.Decision {
			close(asked)
			leave() // the answer comes later, on A
			<-ctx.Done()
			return client.Deny("gone")
		},
	}})
	<-asked
	dropListeners(t, dsn)
	if err := a.c.RespondPermission(ctx, runID, "c1", client.Deny("not today")); err != nil {
		t.Fatal(err)
	}
	// B hears of the answer when it listens again, not at its timeout.
	attachCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if res, err := a.c.Attach(attachCtx, runID, 0, client.Callbacks{}); err != nil || res.Text != "done" {
		t.Fatalf("the run after an answer B did not hear of: %v, %v", res, err)
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
