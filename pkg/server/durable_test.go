package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/pgtest"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	"github.com/agentcore/agentcore/pkg/store/postgres"
	"github.com/agentcore/agentcore/pkg/store/sqlite"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// replica is an in-process agent-server on a real socket.
type replica struct {
	c    *client.Client
	stop func() error
}

// startReplica serves with the fake model as the default profile, no tools
// and the given flags (a store among them).
func startReplica(t *testing.T, model *fakemodel.Server, args ...string) *replica {
	t.Helper()
	base := []string{"-listen", "127.0.0.1:0", "-tool-dir", t.TempDir(), "-model-base-url", model.URL, "-model", "m"}
	target, stop := serve(t, append(base, args...), nil)
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitServing(t, conn)
	c, err := client.Dial(target)
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{c: c}
	var once sync.Once
	r.stop = func() error {
		var err error
		once.Do(func() { c.Close(); err = stop() })
		return err
	}
	t.Cleanup(func() { _ = r.stop() })
	return r
}

// gate holds model answers until opened; opened when the test ends.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate(t *testing.T) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

func reasonOf(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		return string(e.Reason)
	}
	return ""
}

func codeOf(err error) codes.Code {
	var e *client.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return codes.OK
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

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
	rec := storedAgent("cut", "", &agentv1.AgentConfig{Profile: proto.String("default")}, nil, nil, nil)
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

// storeFlags lists the stores a test runs on: memory and SQLite always,
// PostgreSQL when there is one.
func storeFlags(t *testing.T) map[string]func(t *testing.T) []string {
	return map[string]func(t *testing.T) []string{
		"memory": func(*testing.T) []string { return []string{"-store", "memory"} },
		"sqlite": func(t *testing.T) []string { return []string{"-store", "sqlite:" + filepath.Join(t.TempDir(), "a.db")} },
		"postgres": func(t *testing.T) []string {
			return []string{"-store", pgtest.Schema(t)}
		},
	}
}

func TestDetachedRunIsFollowedWithAttach(t *testing.T) {
	for name, args := range storeFlags(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			model := fakemodel.StartTB(t)
			g := newGate(t)
			model.Handle(func(r *fakemodel.Request) fakemodel.Turn {
				<-g.ch
				return fakemodel.Turn{TextChunks: []string{"one ", "two ", "three"}}
			})
			r := startReplica(t, model, args(t)...)
			ctx := ctxT(t)
			ag, err := r.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
			if err != nil {
				t.Fatal(err)
			}
			sendCtx, leave := context.WithCancel(ctx)
			var runID string
			var last int64
			_, err = ag.SendWith(sendCtx, client.SendOptions{Text: "count", Detach: true, Callbacks: client.Callbacks{
				OnEvent: func(e *agentv1.Event) {
					runID, last = e.GetRunId(), e.GetSeq()
					if e.GetModelRequest() != nil {
						leave() // the client goes away while the model thinks
					}
				},
			}})
			if client.KindOf(err) != "aborted" || runID == "" {
				t.Fatalf("leaving the send: %v (run %q)", err, runID)
			}
			if run, err := r.c.Run(ctx, runID); err != nil || run.GetState() != agentv1.RunState_RUN_STATE_RUNNING ||
				run.GetOnDisconnect() != agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE {
				t.Fatalf("the run after its client left: %v, %v", run, err)
			}
			g.open()
			var seqs []int64
			var text strings.Builder
			res, err := r.c.Attach(ctx, runID, last, client.Callbacks{
				OnEvent:    func(e *agentv1.Event) { seqs = append(seqs, e.GetSeq()) },
				OnLLMEvent: func(d *agentv1.ModelDeltaEvent) { text.WriteString(d.GetText()) },
			})
			if err != nil || res.Text != "one two three" || text.String() != "one two three" {
				t.Fatalf("attach: %v, %v (deltas %q)", res, err, text.String())
			}
			for i, s := range seqs {
				if s != last+1+int64(i) {
					t.Fatalf("attach after %d gave seqs %v: not each once, in order, without a gap", last, seqs)
				}
			}
			var all []*agentv1.Event
			if _, err := r.c.Attach(ctx, runID, 0, client.Callbacks{OnEvent: func(e *agentv1.Event) { all = append(all, e) }}); err != nil {
				t.Fatal(err)
			}
			run, _ := r.c.Run(ctx, runID)
			if int64(len(all)) != run.GetLastSeq() || all[0].GetRunStarted() == nil || all[len(all)-1].GetResult() == nil ||
				run.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED {
				t.Fatalf("replay from 0: %d events, run %v", len(all), run)
			}
			// The agent's latest run is the default target.
			if res, err := ag.Attach(ctx, client.Callbacks{}); err != nil || res.RunID != runID {
				t.Fatalf("attach by agent: %v, %v", res, err)
			}
		})
	}
}

// callThenAnswer is a model that calls tool (call id c1) on the first
// turn and answers text once the history holds the call's result.
func callThenAnswer(tool, text string) func(*fakemodel.Request) fakemodel.Turn {
	return func(r *fakemodel.Request) fakemodel.Turn {
		if msgs := r.JSON()["messages"].([]any); len(msgs) > 2 {
			return fakemodel.Turn{Text: text}
		}
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: tool, Arguments: `{}`}}}
	}
}

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

func TestStopReachesADetachedRun(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "never", StallAfter: 1} })
	r := startReplica(t, model)
	ctx := ctxT(t)
	ag, err := r.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	sendCtx, leave := context.WithCancel(ctx)
	var runID string
	_, _ = ag.SendWith(sendCtx, client.SendOptions{Text: "wait", Detach: true, Callbacks: client.Callbacks{
		OnEvent: func(e *agentv1.Event) {
			if e.GetModelRequest() != nil {
				runID = e.GetRunId()
				leave()
			}
		},
	}})
	if runID == "" {
		t.Fatal("no model request before the stream ended")
	}
	if stopped, err := ag.StopRun(ctx, "run_other"); err != nil || stopped {
		t.Fatalf("stopping another run id: %v, %v", stopped, err)
	}
	if stopped, err := ag.Stop(ctx); err != nil || !stopped {
		t.Fatalf("Stop: %v, %v", stopped, err)
	}
	run, _ := r.c.Run(ctx, runID)
	if run.GetState() != agentv1.RunState_RUN_STATE_STOPPED || run.GetError().GetMetadata()["cause"] != "stopped" {
		t.Fatalf("stopped run: %v", run)
	}
}

// holdOrAnswer is a model that holds its answer while the last user
// message says "hold" (until the run stops) and answers others at once.
func holdOrAnswer(r *fakemodel.Request) fakemodel.Turn {
	msgs, _ := r.JSON()["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if text, _ := last["content"].(string); strings.HasPrefix(text, "hold") {
		return fakemodel.Turn{Text: "held", StallAfter: 1}
	}
	return fakemodel.Turn{Text: "answered"}
}

// startHeld starts a detached send that holds, on r, and returns its run
// id and where its error arrives.
func startHeld(t *testing.T, ag *client.Agent) (string, <-chan error) {
	t.Helper()
	ids := make(chan string, 1)
	errs := make(chan error, 1)
	go func() {
		_, err := ag.SendWith(context.Background(), client.SendOptions{Text: "hold", Detach: true, Callbacks: client.Callbacks{
			OnLLMStart: func(*agentv1.ModelRequestEvent) {},
			OnEvent: func(e *agentv1.Event) {
				if e.GetModelRequest() != nil {
					ids <- e.GetRunId()
				}
			},
		}})
		errs <- err
	}()
	select {
	case id := <-ids:
		return id, errs
	case err := <-errs:
		t.Fatalf("the held send ended early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the held send never asked the model")
	}
	return "", nil
}

// twoReplicas starts replicas a and b (with bArgs) on a new PostgreSQL
// schema, the model answering with handle, and creates the agent "shared"
// on a. It returns the schema's dsn and the two replicas.
func twoReplicas(t *testing.T, handle func(*fakemodel.Request) fakemodel.Turn, bArgs ...string) (dsn string, a, b *replica) {
	t.Helper()
	dsn = pgtest.Schema(t)
	model := fakemodel.StartTB(t)
	model.Handle(handle)
	a = startReplica(t, model, "-store", dsn, "-replica-id", "a")
	b = startReplica(t, model, append([]string{"-store", dsn, "-replica-id", "b"}, bArgs...)...)
	if _, err := a.c.CreateAgent(ctxT(t), client.AgentOptions{ID: "shared", Config: &agentv1.AgentConfig{System: proto.String("s")}}); err != nil {
		t.Fatal(err)
	}
	return dsn, a, b
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

func postgresOpen(ctx context.Context, dsn string) (store.Store, error) {
	return postgres.Open(ctx, dsn)
}

// cutProxy forwards TCP connections to target until cut closes them all.
type cutProxy struct {
	lis   net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{lis: lis}
	p.wg.Go(func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(u, c); u.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, u); c.Close() })
		}
	})
	t.Cleanup(func() { lis.Close(); p.cut(); p.wg.Wait() })
	return p
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func TestReconnectingSendSurvivesABrokenConnection(t *testing.T) {
	model := fakemodel.StartTB(t)
	chunks := make([]string, 20)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("w%d ", i)
	}
	model.Handle(func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: chunks, ChunkDelay: 15 * time.Millisecond}
	})
	base := []string{"-listen", "127.0.0.1:0", "-tool-dir", t.TempDir(), "-model-base-url", model.URL, "-model", "m"}
	target, stop := serve(t, base, nil)
	defer stop()
	proxy := newCutProxy(t, target)
	c, err := client.Dial(proxy.lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t)
	var ag *client.Agent
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ag, err = c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}}); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	deltas := 0
	res, err := ag.SendWith(ctx, client.SendOptions{Text: "talk", Reconnect: true, Callbacks: client.Callbacks{
		OnLLMEvent: func(d *agentv1.ModelDeltaEvent) {
			text.WriteString(d.GetText())
			if deltas++; deltas == 5 {
				proxy.cut() // the network breaks mid-answer
			}
		},
	}})
	want := strings.Join(chunks, "")
	if err != nil || res.Text != want || text.String() != want {
		t.Fatalf("reconnecting send: %v, %v; deltas %q", res, err, text.String())
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
	target, stop := serve(t, args, nil)
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
	target, stop = serve(t, args, nil) // the same file, after a restart
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

// At start, every cut-off run is recovered, however many pages of running
// runs the store holds.
func TestRestartRecoversMorePagesOfRunsThanOne(t *testing.T) {
	ctx := ctxT(t)
	st := memory.New()
	const n = recoverPage + 7
	for i := range n {
		id := fmt.Sprint("a", i)
		if err := st.CreateAgent(ctx, storedAgent(id, "", &agentv1.AgentConfig{}, nil, nil, nil), nil); err != nil {
			t.Fatal(err)
		}
		if err := st.StartRun(ctx, &store.Run{ID: "run_" + id, AgentID: id, Owner: "agent-server"}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load([]string{"-tool-limits", "off"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	running, err := st.ListRuns(ctx, store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_RUNNING, Limit: n})
	if err != nil || len(running) != 0 {
		t.Fatalf("%d runs still running after the start, %v", len(running), err)
	}
	interrupted, _ := st.ListRuns(ctx, store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_INTERRUPTED, Limit: n + 1})
	if len(interrupted) != n {
		t.Fatalf("%d runs interrupted, want %d", len(interrupted), n)
	}
}

// dropListeners waits until both replicas LISTEN on the schema of dsn (a
// replica connects its listener as it starts), ends those connections, as
// a database restart or a cut connection would, and returns once none
// listens: a notice sent before they listen again (a few seconds later)
// reaches no one.
func dropListeners(t *testing.T, dsn string) {
	t.Helper()
	ctx := ctxT(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	listen := `LISTEN "agentcore_` + u.Query().Get("search_path") + `"`
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	listeners := func() int {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query = $1`, listen).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for listeners() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	var ended int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query = $1`, listen).Scan(&ended); err != nil || ended != 2 {
		t.Fatalf("ending the two replicas' listeners: %d ended, %v", ended, err)
	}
	for listeners() > 0 {
		time.Sleep(10 * time.Millisecond)
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
