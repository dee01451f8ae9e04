package server_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

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

// benchServer runs an in-process server with the fake model and flags
// until the benchmark ends, and returns a client.
func benchServer(b *testing.B, model *fakemodel.Server, args ...string) *client.Client {
	b.Helper()
	target, stop := servetest.Start(b, append([]string{"-listen", "127.0.0.1:0", "-tool-dir", b.TempDir(), "-model-base-url", model.URL, "-model", "m"}, args...), nil)
	c, err := client.Dial(target)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(); _ = stop() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := c.ListTools(context.Background()); err == nil || time.Now().After(deadline) {
			return c
		}
	}
}

func pct(d []time.Duration, p float64) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[int(float64(len(d)-1)*p/100)].Microseconds()) / 1000
}

// BenchmarkStoreAddedLatency measures what the store adds to a model step:
// the same two-step send (a tool call, its result, the answer) on servers
// with the memory, SQLite and PostgreSQL stores, taken in turns, per step.
// The added latency is the difference of each store's median from memory's.
func BenchmarkStoreAddedLatency(b *testing.B) {
	model := fakemodel.StartTB(b)
	model.Handle(func(r *fakemodel.Request) fakemodel.Turn {
		if msgs, _ := r.JSON()["messages"].([]any); len(msgs) > 2 {
			return fakemodel.Turn{TextChunks: []string{"the ", "tool ", "failed"}}
		}
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "missing_tool", Arguments: `{"x":1}`}}}
	})
	stores := []struct {
		name string
		args []string
	}{
		{"memory", []string{"-store", "memory"}},
		{"sqlite", []string{"-store", "sqlite:" + filepath.Join(b.TempDir(), "a.db")}},
	}
	if os.Getenv(pgtest.EnvVar) != "" {
		stores = append(stores, struct {
			name string
			args []string
		}{"postgres", []string{"-store", pgtest.Schema(b)}})
	}
	agents := make([]*client.Agent, len(stores))
	for i, s := range stores {
		c := benchServer(b, model, s.args...)
		a, err := c.CreateAgent(context.Background(), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
		if err != nil {
			b.Fatal(err)
		}
		agents[i] = a
	}
	step := make([][]time.Duration, len(stores))
	send := func(i int) time.Duration {
		_ = agents[i].SetHistory(context.Background(), nil)
		start := time.Now()
		if _, err := agents[i].Send(context.Background(), "go", client.Callbacks{}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start) / 2 // two model steps
	}
	for range 10 { // warm up
		for i := range agents {
			send(i)
		}
	}
	b.ResetTimer()
	for range b.N {
		for i := range agents {
			step[i] = append(step[i], send(i))
		}
	}
	b.StopTimer()
	base := pct(step[0], 50)
	for i, s := range stores {
		p50, p99 := pct(step[i], 50), pct(step[i], 99)
		b.ReportMetric(p50, s.name+"-step-p50-ms")
		b.ReportMetric(p99, s.name+"-step-p99-ms")
		if i > 0 {
			b.ReportMetric(p50-base, s.name+"-added-p50-ms")
		}
	}
}

// BenchmarkAttachReplay measures how fast Attach replays a finished run's
// stored events from SQLite to a client.
func BenchmarkAttachReplay(b *testing.B) {
	const events = 20000
	path := filepath.Join(b.TempDir(), "a.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	rec := server.StoredAgent("replay", "", &agentv1.AgentConfig{})
	if err := st.CreateAgent(ctx, rec, []*agentv1.Message{history.User("talk")}); err != nil {
		b.Fatal(err)
	}
	if err := st.StartRun(ctx, &store.Run{ID: "run_long", AgentID: "replay", Owner: "x"}, time.Hour); err != nil {
		b.Fatal(err)
	}
	batch := make([]*agentv1.Event, 0, 1000)
	for seq := int64(1); seq <= events; seq++ {
		batch = append(batch, &agentv1.Event{Seq: seq, RunId: "run_long", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{
			Step: 1, Delta: &agentv1.ModelDeltaEvent_Text{Text: fmt.Sprintf("token %d ", seq)}}}})
		if len(batch) == cap(batch) {
			if err := st.AppendEvents(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := st.FinishRun(ctx, "run_long", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
		b.Fatal(err)
	}
	st.Close()
	model := fakemodel.StartTB(b)
	c := benchServer(b, model, "-store", "sqlite:"+path)
	b.ResetTimer()
	for range b.N {
		n := 0
		stream, err := c.API().Attach(ctx, &agentv1.AttachRequest{RunId: "run_long"})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := stream.Recv(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			n++
		}
		if n != events {
			b.Fatalf("replayed %d events, want %d", n, events)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(events*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReplicaAbort measures, on PostgreSQL, how long a Stop on one
// replica takes to stop a run on another: from the call to the run ended.
func BenchmarkReplicaAbort(b *testing.B) {
	dsn := pgtest.Schema(b)
	model := fakemodel.StartTB(b)
	model.Handle(holdOrAnswer)
	ca := benchServer(b, model, "-store", dsn, "-replica-id", "a")
	cb := benchServer(b, model, "-store", dsn, "-replica-id", "b")
	ctx := context.Background()
	if _, err := ca.CreateAgent(ctx, client.AgentOptions{ID: "ab", Config: &agentv1.AgentConfig{System: proto.String("s")}}); err != nil {
		b.Fatal(err)
	}
	onA, onB := ca.Agent("ab"), cb.Agent("ab")
	var took []time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		started := make(chan struct{})
		ended := make(chan error, 1)
		go func() {
			_, err := onB.SendWith(ctx, client.SendOptions{Text: "hold", Callbacks: client.Callbacks{
				OnLLMStart: func(*agentv1.ModelRequestEvent) { close(started) },
			}})
			ended <- err
		}()
		<-started
		b.StartTimer()
		start := time.Now()
		if stopped, err := onA.Stop(ctx); err != nil || !stopped {
			b.Fatalf("stop: %v, %v", stopped, err)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		<-ended
		_ = onA.SetHistory(ctx, nil)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(pct(took, 50), "stop-p50-ms")
	b.ReportMetric(pct(took, 99), "stop-p99-ms")
}
