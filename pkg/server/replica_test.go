package server_test

import (
	"context"
	"errors"
	"net/url"
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
	"github.com/agentcore/agentcore/internal/servetest"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/postgres"
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
	target, stop := servetest.Start(t, append(base, args...), nil)
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	servetest.WaitServing(t, conn)
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

func postgresOpen(ctx context.Context, dsn string) (store.Store, error) {
	return postgres.Open(ctx, dsn)
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
