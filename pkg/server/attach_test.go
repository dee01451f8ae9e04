package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/servetest"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/server"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/sqlite"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

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
	target, stop := servetest.Start(t, base, nil)
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

// A stored log with a hole (a store that lost events) is never replayed
// across it: Attach stops there with EVENTS_LOST.
func TestAttachStopsAtAGapInTheStoredEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	ctx := ctxT(t)
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateAgent(ctx, server.StoredAgent("holed", "", &agentv1.AgentConfig{}), []*agentv1.Message{history.User("hi")}); err != nil {
		t.Fatal(err)
	}
	if err := st.StartRun(ctx, &store.Run{ID: "run_holed", AgentID: "holed", Owner: "x"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	delta := func(seq int64) *agentv1.Event {
		return &agentv1.Event{Seq: seq, RunId: "run_holed", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{
			Step: 1, Delta: &agentv1.ModelDeltaEvent_Text{Text: "x"}}}}
	}
	result := &agentv1.Event{Seq: 7, RunId: "run_holed", Kind: &agentv1.Event_Result{Result: &agentv1.RunResultEvent{Text: "x"}}}
	for _, b := range [][]*agentv1.Event{{delta(1), delta(2)}, {delta(5), delta(6), result}} { // 3 and 4 lost
		if err := st.AppendEvents(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.FinishRun(ctx, "run_holed", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{Text: "x"}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	model := fakemodel.StartTB(t)
	r := startReplica(t, model, "-store", "sqlite:"+path)
	for _, tt := range []struct {
		after int64
		want  []int64
	}{{0, []int64{1, 2}}, {2, nil}, {4, []int64{5, 6, 7}}} {
		var seqs []int64
		_, err := r.c.Attach(ctx, "run_holed", tt.after, client.Callbacks{OnEvent: func(e *agentv1.Event) { seqs = append(seqs, e.GetSeq()) }})
		wantErr := tt.after < 4
		if (reasonOf(err) == "EVENTS_LOST") != wantErr || !wantErr && err != nil || len(seqs) != len(tt.want) {
			t.Errorf("attach after %d: events %v, %v", tt.after, seqs, err)
		}
	}
}

// Past -event-retention a finished run's events are swept: Attach before
// its last event answers EVENTS_EXPIRED, GetRun keeps its outcome.
func TestEventRetentionExpiresAttach(t *testing.T) {
	model := fakemodel.StartTB(t)
	model.Handle(func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: []string{"kept ", "briefly"}}
	})
	r := startReplica(t, model, "-store", "sqlite:"+filepath.Join(t.TempDir(), "a.db"), "-event-retention", "1s")
	ctx := ctxT(t)
	ag, err := r.c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String("s")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ag.Send(ctx, "hi", client.Callbacks{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Attach(ctx, res.RunID, 0, client.Callbacks{}); err != nil {
		t.Fatalf("attach within the retention: %v", err)
	}
	var run *agentv1.Run
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if run, err = r.c.Run(ctx, res.RunID); err != nil {
			t.Fatal(err)
		}
		if run.GetEventsExpired() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's events were never swept: %v", run)
		}
	}
	if run.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED || run.GetResult().GetText() != "kept briefly" || run.GetLastSeq() == 0 {
		t.Fatalf("the swept run: %v", run)
	}
	for _, after := range []int64{0, run.GetLastSeq() - 1} {
		n := 0
		_, err := r.c.Attach(ctx, res.RunID, after, client.Callbacks{OnEvent: func(*agentv1.Event) { n++ }})
		if codeOf(err) != codes.OutOfRange || reasonOf(err) != "EVENTS_EXPIRED" || n != 0 {
			t.Fatalf("attach after %d to a swept run: %d events, %v", after, n, err)
		}
	}
	if _, err := ag.Send(ctx, "again", client.Callbacks{}); err != nil {
		t.Fatalf("a send after the sweep: %v", err)
	}
}
