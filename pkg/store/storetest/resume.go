package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// testTakeOver: a run keeps where its messages begin and what resumes it;
// a run cut off is taken over once per attempt, with its lease and its
// agent's.
func testTakeOver(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "t1", history.User("a"), history.AssistantText("b"))
	r := &store.Run{ID: "run_cut", AgentID: "t1", Owner: "replica-a", Resume: []byte("spec")}
	if err := s.StartRun(c, r, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if r.HistoryStart != 2 {
		t.Errorf("StartRun set history start %d, want 2", r.HistoryStart)
	}
	got, err := s.GetRun(c, "run_cut")
	if err != nil || string(got.Resume) != "spec" || got.HistoryStart != 2 || got.Attempts != 0 {
		t.Fatalf("stored run: resume %q, history start %d, attempts %d, %v", got.Resume, got.HistoryStart, got.Attempts, err)
	}
	time.Sleep(120 * time.Millisecond)

	taken, err := s.TakeOverRun(c, "run_cut", "replica-b", 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if taken.Owner != "replica-b" || taken.Attempts != 1 || taken.LeaseExpired || taken.State != agentv1.RunState_RUN_STATE_RUNNING ||
		string(taken.Resume) != "spec" || taken.HistoryStart != 2 {
		t.Errorf("taken over: %+v", taken)
	}
	wantErr(t, errOnly(s.TakeOverRun(c, "run_cut", "replica-c", 0, time.Minute)), store.ErrConflict, "a second take-over of the same attempt")
	if a, _ := s.GetAgent(c, "t1"); a.RunID != "run_cut" {
		t.Errorf("the agent's lease after the take-over names run %q", a.RunID)
	}
	err = s.StartRun(c, &store.Run{ID: "run_other", AgentID: "t1", Owner: "replica-a"}, time.Minute)
	var be *store.BusyError
	if !errors.As(err, &be) || be.Expired || be.Owner != "replica-b" {
		t.Fatalf("StartRun over a run taken over: %v", err)
	}
	if ids, err := s.RenewLeases(c, "replica-b", time.Minute); err != nil || fmt.Sprint(ids) != "[run_cut]" {
		t.Errorf("RenewLeases of the new owner = %v, %v", ids, err)
	}
	if _, err := s.TakeOverRun(c, "run_cut", "replica-a", 1, time.Minute); err != nil {
		t.Fatalf("the next attempt: %v", err)
	}
	if got, _ := s.GetRun(c, "run_cut"); got.Attempts != 2 || got.Owner != "replica-a" {
		t.Errorf("after the second take-over: attempts %d, owner %q", got.Attempts, got.Owner)
	}
	if err := s.FinishRun(c, "run_cut", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
		t.Fatal(err)
	}
	wantErr(t, errOnly(s.TakeOverRun(c, "run_cut", "replica-b", 2, time.Minute)), store.ErrConflict, "TakeOverRun of an ended run")
	wantErr(t, errOnly(s.TakeOverRun(c, "nope", "replica-b", 0, time.Minute)), store.ErrNotFound, "TakeOverRun(nope)")

	mustStart(t, s, "t1", "run_plain", "replica-a", time.Minute)
	if got, _ := s.GetRun(c, "run_plain"); got.Resume != nil || got.HistoryStart != 2 {
		t.Errorf("a run without resume: resume %q, history start %d", got.Resume, got.HistoryStart)
	}
}

func errOnly(_ *store.Run, err error) error { return err }
