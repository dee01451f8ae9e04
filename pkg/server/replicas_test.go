package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

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

func TestReplicasShareAgentsRunsAndThePolicy(t *testing.T) {
	_, a, b := twoReplicas(t, holdOrAnswer)
	ctx := ctxT(t)
	onA, onB := a.c.Agent("shared"), b.c.Agent("shared")

	// A run on B is seen, refused, followed and stopped from A.
	runB, errB := startHeld(t, onB)
	if got, err := onA.Get(ctx); err != nil || got.GetState() != agentv1.AgentState_AGENT_STATE_RUNNING || got.GetRunId() != runB {
		t.Fatalf("A's view of B's run: %v, %v", got, err)
	}
	if _, err := onA.SendWith(ctx, client.SendOptions{Text: "now", Busy: agentv1.BusyPolicy_BUSY_POLICY_REJECT}); reasonOf(err) != "AGENT_BUSY" {
		t.Fatalf("reject on A while B runs: %v", err)
	}
	if err := onA.SetHistory(ctx, nil); reasonOf(err) != "RUN_ACTIVE" {
		t.Fatalf("SetHistory on A while B runs: %v", err)
	}
	followed := make(chan error, 1)
	var seen int
	go func() {
		_, err := a.c.Attach(ctx, runB, 0, client.Callbacks{OnEvent: func(*agentv1.Event) { seen++ }})
		followed <- err
	}()
	if stopped, err := onA.Stop(ctx); err != nil || !stopped {
		t.Fatalf("Stop on A of B's run: %v, %v", stopped, err)
	}
	if err := <-errB; client.KindOf(err) != "aborted" {
		t.Fatalf("B's send after the stop: %v", err)
	}
	if err := <-followed; codeOf(err) != codes.Canceled || seen < 2 {
		t.Fatalf("A's attach to B's run: %v after %d events", err, seen)
	}

	// Replace: the latest instruction wins across replicas.
	runB, errB = startHeld(t, onB)
	res, err := onA.Send(ctx, "quick", client.Callbacks{})
	if err != nil || res.Text != "answered" {
		t.Fatalf("a replacing send on A: %v, %v", res, err)
	}
	if err := <-errB; client.KindOf(err) != "aborted" {
		t.Fatalf("the replaced send on B: %v", err)
	}
	if run, _ := a.c.Run(ctx, runB); run.GetState() != agentv1.RunState_RUN_STATE_STOPPED || run.GetError().GetMetadata()["cause"] != "replaced" {
		t.Fatalf("the replaced run: %v", run)
	}

	// Queue: a send on B waits for A's run, then runs.
	_, errA := startHeld(t, onA)
	queued := make(chan error, 1)
	go func() {
		_, err := onB.SendWith(ctx, client.SendOptions{Text: "after", Busy: agentv1.BusyPolicy_BUSY_POLICY_QUEUE})
		queued <- err
	}()
	select {
	case err := <-queued:
		t.Fatalf("the queued send did not wait: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if stopped, err := onB.Stop(ctx); err != nil || !stopped {
		t.Fatalf("Stop on B of A's run: %v, %v", stopped, err)
	}
	<-errA
	if err := <-queued; err != nil {
		t.Fatalf("the queued send: %v", err)
	}
	h, err := onB.History(ctx)
	if err != nil || !strings.HasSuffix(history.Render(h), "answered") {
		t.Fatalf("B's history:\n%s", history.Render(h))
	}
}

func TestADeadReplicasRunIsRecovered(t *testing.T) {
	dsn := pgtest.Schema(t)
	model := fakemodel.StartTB(t)
	model.Handle(holdOrAnswer)
	a := startReplica(t, model, "-store", dsn, "-replica-id", "a", "-lease-ttl", "1s")
	ctx := ctxT(t)
	if _, err := a.c.CreateAgent(ctx, client.AgentOptions{ID: "orphan", Config: &agentv1.AgentConfig{System: proto.String("s")}}); err != nil {
		t.Fatal(err)
	}
	// Replica "dead" took the agent and stopped renewing its lease.
	st, err := postgresOpen(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.StartRun(ctx, &store.Run{ID: "run_dead", AgentID: "orphan", Owner: "dead"}, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AppendHistory(ctx, "orphan", 0, []*agentv1.Message{history.User("go"),
		history.Assistant(history.ToolCall("c1", "slow", "{}"))}, nil, true); err != nil {
		t.Fatal(err)
	}
	res, err := a.c.Agent("orphan").Send(ctx, "are you there?", client.Callbacks{})
	if err != nil || res.Text != "answered" {
		t.Fatalf("a send once the dead replica's lease expired: %v, %v", res, err)
	}
	if run, _ := a.c.Run(ctx, "run_dead"); run.GetState() != agentv1.RunState_RUN_STATE_INTERRUPTED {
		t.Fatalf("the dead replica's run: %v", run)
	}
}

func TestStopReachesAReplicaThatMissedTheNotice(t *testing.T) {
	for _, tc := range []struct {
		name string
		// end ends B's held run from A, within ctx.
		end func(ctx context.Context, onA *client.Agent) error
	}{
		{"stop", func(ctx context.Context, onA *client.Agent) error {
			if stopped, err := onA.Stop(ctx); err != nil || !stopped {
				return fmt.Errorf("stop: %v, %w", stopped, err)
			}
			return nil
		}},
		{"replace", func(ctx context.Context, onA *client.Agent) error {
			if res, err := onA.Send(ctx, "quick", client.Callbacks{}); err != nil || res.Text != "answered" {
				return fmt.Errorf("replacing send: %v, %w", res, err)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn, a, b := twoReplicas(t, holdOrAnswer)
			ctx := ctxT(t)
			_, errB := startHeld(t, b.c.Agent("shared"))
			dropListeners(t, dsn)
			endCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := tc.end(endCtx, a.c.Agent("shared")); err != nil {
				t.Fatalf("ending B's run from A, B not listening as it was asked: %v", err)
			}
			if err := <-errB; client.KindOf(err) != "aborted" {
				t.Fatalf("B's send after it was ended: %v", err)
			}
		})
	}
}
