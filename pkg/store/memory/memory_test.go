package memory_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/store/memory"
	"github.com/agentcore/agentcore/pkg/store/storetest"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{Open: func(*testing.T) store.Store { return memory.New() }})
}

func BenchmarkStep(b *testing.B) { storetest.Bench(b, memory.New()) }

// TestEventsKeptApart checks the events the store keeps in their wire form:
// changing an event after AppendEvents, or one Events returned, changes
// nothing stored, and an event that cannot be encoded (text that is not
// UTF-8) is kept too, as it was given.
func TestEventsKeptApart(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	defer s.Close()
	if err := s.CreateAgent(ctx, &store.Agent{ID: "a", Spec: &agentv1.Agent{}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.StartRun(ctx, &store.Run{ID: "r", AgentID: "a", Owner: "me"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	text := func(seq int64, s string) *agentv1.Event {
		return &agentv1.Event{RunId: "r", Seq: seq, Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{
			Delta: &agentv1.ModelDeltaEvent_Text{Text: s}}}}
	}
	given := []*agentv1.Event{text(1, "one"), text(2, "not \xff UTF-8"), text(3, "three")}
	if err := s.AppendEvents(ctx, given); err != nil {
		t.Fatal(err)
	}
	for _, ev := range given {
		ev.GetModelDelta().Delta = &agentv1.ModelDeltaEvent_Text{Text: "changed"}
	}
	want := []string{"one", "not \xff UTF-8", "three"}
	for range 2 {
		got, err := s.Events(ctx, "r", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d events, want %d", len(got), len(want))
		}
		for i, ev := range got {
			if ev.GetSeq() != int64(i+1) || ev.GetModelDelta().GetText() != want[i] {
				t.Errorf("event %d: %v, want seq %d text %q", i, ev, i+1, want[i])
			}
			ev.GetModelDelta().Delta = &agentv1.ModelDeltaEvent_Text{Text: "changed by a reader"}
		}
	}
	if got, err := s.Events(ctx, "r", 2, 10); err != nil || len(got) != 1 || got[0].GetSeq() != 3 {
		t.Errorf("events after 2: %v, %v", got, err)
	}
}
