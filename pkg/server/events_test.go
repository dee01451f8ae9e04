package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/server"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// refusingStore is a real store whose event writes fail, as a database
// that went away does, while refuse is set.
type refusingStore struct {
	store.Store
	refuse atomic.Bool
}

var errRefused = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (s *refusingStore) AppendEvents(ctx context.Context, evs []*agentv1.Event, ends ...store.RunEnd) error {
	if s.refuse.Load() && len(evs) > 0 {
		return errRefused
	}
	return s.Store.AppendEvents(ctx, evs, ends...)
}

// serveWith serves an in-process server on st over a real socket and
// returns the server (its event log reachable) and a client.
func serveWith(t *testing.T, model *fakemodel.Server, st store.Store) (*server.Server, *client.Client) {
	t.Helper()
	cfg, err := config.Load([]string{"-tool-limits", "off", "-tool-dir", t.TempDir(), "-model-base-url", model.URL, "-model", "m"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.LoadTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(srv.Interceptors(false)...)
	agentv1.RegisterAgentServiceServer(gs, srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = gs.Serve(lis) }()
	c, err := client.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); srv.StopRuns(context.Background()); gs.Stop(); <-served; srv.Close() })
	return srv, c
}

// A run whose events the store refuses for longer than the event log
// retries is stopped and ends failed with EVENTS_LOST, on its stream, in
// GetRun and for Attach, whose replay ends at the last stored event.
func TestARunWhoseEventsTheStoreRefusesEndsEventsLost(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: []string{"one ", "two ", "three ", "four"}, ChunkDelay: 30 * time.Millisecond, StallAfter: 4}
	})
	st := &refusingStore{Store: memory.New()}
	srv, c := serveWith(t, model, st)
	srv.EventLog().SetRetry(10*time.Millisecond, 200*time.Millisecond)
	ctx := ctxT(t)
	ag, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	var runID string
	_, err = ag.SendWith(ctx, client.SendOptions{Text: "go", Callbacks: client.Callbacks{
		OnEvent: func(e *agentv1.Event) { runID = e.GetRunId() },
		OnLLMStart: func(*agentv1.ModelRequestEvent) {
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if r, err := c.Run(ctx, runID); err == nil && r.GetLastSeq() >= 2 {
					break // the run's first events are stored
				}
			}
			st.refuse.Store(true) // then the store goes away while the model answers
		},
	}})
	if codeOf(err) != codes.DataLoss || reasonOf(err) != "EVENTS_LOST" {
		t.Fatalf("the send whose events were refused: %v", err)
	}
	st.refuse.Store(false)
	run, err := c.Run(ctx, runID)
	if err != nil || run.GetState() != agentv1.RunState_RUN_STATE_FAILED || run.GetError().GetReason() != "EVENTS_LOST" {
		t.Fatalf("the run: %v, %v", run, err)
	}
	var seqs []int64
	_, err = c.Attach(ctx, runID, 0, client.Callbacks{OnEvent: func(e *agentv1.Event) { seqs = append(seqs, e.GetSeq()) }})
	if reasonOf(err) != "EVENTS_LOST" || len(seqs) == 0 || int64(len(seqs)) != run.GetLastSeq() || seqs[len(seqs)-1] != run.GetLastSeq() {
		t.Fatalf("attach: events %v (last stored %d), %v", seqs, run.GetLastSeq(), err)
	}
	// The agent is usable again, and its later runs' events are kept.
	model.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "fine"} })
	res, err := ag.Send(ctx, "again", client.Callbacks{})
	if err != nil || res.Text != "fine" {
		t.Fatalf("the next send: %v, %v", res, err)
	}
	if _, err := c.Attach(ctx, res.RunID, 0, client.Callbacks{}); err != nil {
		t.Fatalf("attach to the next run: %v", err)
	}
}
