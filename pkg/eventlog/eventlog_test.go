package eventlog

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The event log is woken by an event only when it waits for its first
// one: while it lingers the events join its batch without a wake-up of
// its goroutine each, until they fill a batch; none is lost for it, and
// a run's end is stored after them.
func TestEventLogLingersWithoutAWakeUpPerEvent(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	if err := mem.CreateAgent(ctx, &store.Agent{ID: "a", Spec: &agentv1.Agent{}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := mem.StartRun(ctx, &store.Run{ID: "run_a", AgentID: "a", Owner: "here"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	l := New(mem, hclog.NewNullLogger(), func(string, error) {})
	seq := int64(0)
	ev := func() *agentv1.Event {
		seq++
		return &agentv1.Event{Seq: seq, RunId: "run_a", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{}}}
	}

	// Not lingering: an event wakes the log.
	l.Add(ev())
	if len(l.wake) != 1 {
		t.Fatalf("an event to an idle log left %d wake-ups, want 1", len(l.wake))
	}
	<-l.wake
	// Lingering: no wake-up, until the events fill a batch.
	l.setLingering(true)
	for range 10 {
		l.Add(ev())
	}
	if len(l.wake) != 0 {
		t.Fatalf("events to a lingering log left %d wake-ups, want 0", len(l.wake))
	}
	for len(l.pending) < maxBatch-1 {
		l.Add(ev())
	}
	if len(l.wake) != 0 {
		t.Fatal("a lingering log was woken before its batch was full")
	}
	l.Add(ev())
	if len(l.wake) != 1 {
		t.Fatal("a full batch did not wake a lingering log")
	}
	<-l.wake
	l.setLingering(false)
	l.mu.Lock()
	l.pending = nil
	l.mu.Unlock()
	seq = 0

	// Running: the events added while it lingers are all stored, and the
	// end after them.
	done := make(chan struct{})
	go func() { defer close(done); l.Run() }()
	defer func() { l.Close(); <-done }()
	for range 5 {
		l.Add(ev())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := mem.Events(ctx, "run_a", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 5 events stored", len(got))
		}
		time.Sleep(time.Millisecond)
	}
	l.Add(ev())
	if err := l.End(ctx, store.RunEnd{RunID: "run_a", State: agentv1.RunState_RUN_STATE_SUCCEEDED}); err != nil {
		t.Fatal(err)
	}
	if got, _ := mem.Events(ctx, "run_a", 0, 100); len(got) != 6 {
		t.Errorf("%d events stored before the end, want 6", len(got))
	}
}

// A run's end that finds no batch being written is written by its caller,
// with the events queued before it, without the log's goroutine; one that
// finds a batch being written waits for the log's goroutine to write it.
func TestEventLogEndWrittenByItsCallerWhenNoBatchIsWritten(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	for _, id := range []string{"a", "b"} {
		if err := mem.CreateAgent(ctx, &store.Agent{ID: id, Spec: &agentv1.Agent{}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := mem.StartRun(ctx, &store.Run{ID: "run_" + id, AgentID: id, Owner: "here"}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	l := New(mem, hclog.NewNullLogger(), func(string, error) {})
	delta := func(run string, seq int64) *agentv1.Event {
		return &agentv1.Event{Seq: seq, RunId: run, Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{}}}
	}
	succeeded := func(run string) store.RunEnd {
		return store.RunEnd{RunID: run, State: agentv1.RunState_RUN_STATE_SUCCEEDED}
	}

	// No goroutine runs the log: the end is written by its caller.
	for seq := int64(1); seq <= 3; seq++ {
		l.Add(delta("run_a", seq))
	}
	endCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := l.End(endCtx, succeeded("run_a")); err != nil {
		t.Fatal(err)
	}
	if got, _ := mem.Events(ctx, "run_a", 0, 100); len(got) != 3 {
		t.Errorf("%d events stored with the end, want 3", len(got))
	}
	if r, err := mem.GetRun(ctx, "run_a"); err != nil {
		t.Error(err)
	} else if r.State != agentv1.RunState_RUN_STATE_SUCCEEDED {
		t.Errorf("run_a after its end: %v, want it stored as succeeded", r.State)
	}

	// A batch is being written: the end waits for the log's goroutine.
	l.Add(delta("run_b", 1))
	l.flushing.Lock()
	ended := make(chan error, 1)
	go func() { ended <- l.End(endCtx, succeeded("run_b")) }()
	select {
	case err := <-ended:
		t.Fatalf("the end returned (%v) while another batch was being written", err)
	case <-time.After(50 * time.Millisecond):
	}
	l.flushing.Unlock()
	done := make(chan struct{})
	go func() { defer close(done); l.Run() }()
	defer func() { l.Close(); <-done }()
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if got, _ := mem.Events(ctx, "run_b", 0, 100); len(got) != 1 {
		t.Errorf("%d events of run_b stored with its end, want 1", len(got))
	}
}
