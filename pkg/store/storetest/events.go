package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func testEvents(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "ev")
	mustStart(t, s, "ev", "run_ev", "x", time.Minute)
	var batch []*agentv1.Event
	for i := int64(1); i <= 10; i++ {
		batch = append(batch, event("run_ev", i, fmt.Sprint("t", i)))
	}
	if err := s.AppendEvents(c, batch[:4]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents(c, batch[4:]); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.AppendEvents(c, []*agentv1.Event{event("run_ev", 10, "again")}), store.ErrConflict, "an event at a used seq")
	wantErr(t, s.AppendEvents(c, []*agentv1.Event{event("run_nope", 1, "x")}), store.ErrNotFound, "events of no run")

	got, err := s.Events(c, "run_ev", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("%d events, want 10", len(got))
	}
	for i, ev := range got {
		if !proto.Equal(ev, batch[i]) {
			t.Fatalf("event %d: %v, want %v", i, ev, batch[i])
		}
	}
	page, _ := s.Events(c, "run_ev", 6, 3)
	if len(page) != 3 || page[0].GetSeq() != 7 || page[2].GetSeq() != 9 {
		t.Errorf("Events(after 6, limit 3) = %v", page)
	}
	if tail, _ := s.Events(c, "run_ev", 10, 5); len(tail) != 0 {
		t.Errorf("Events after the last: %d", len(tail))
	}
	r, _ := s.GetRun(c, "run_ev")
	if r.LastSeq != 10 {
		t.Errorf("LastSeq %d, want 10", r.LastSeq)
	}
	_, err = s.Events(c, "run_nope", 0, 0)
	wantErr(t, err, store.ErrNotFound, "Events of no run")
}

// testEventsWithEnds: AppendEvents ends runs after their events, in the
// same write, and leaves out a run whose events do not follow its log
// (with its end) while storing the others.
func testEventsWithEnds(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	l := listen(t, s)
	mustCreate(t, s, "wa")
	mustCreate(t, s, "wb")
	mustCreate(t, s, "wc")
	mustStart(t, s, "wa", "run_wa", "x", time.Minute)
	mustStart(t, s, "wb", "run_wb", "x", time.Minute)
	mustStart(t, s, "wc", "run_wc", "x", time.Minute)
	res := &agentv1.RunResultEvent{Text: "done", Steps: 1}
	if err := s.AppendEvents(c, []*agentv1.Event{event("run_wa", 1, "a"), event("run_wa", 2, "b"), event("run_wb", 1, "c")},
		store.RunEnd{RunID: "run_wa", State: agentv1.RunState_RUN_STATE_SUCCEEDED, Result: res}); err != nil {
		t.Fatal(err)
	}
	a, _ := s.GetRun(c, "run_wa")
	if a.State != agentv1.RunState_RUN_STATE_SUCCEEDED || a.LastSeq != 2 || !proto.Equal(a.Result, res) || a.Ended.IsZero() {
		t.Fatalf("a run ended with its events: %+v", a)
	}
	if b, _ := s.GetRun(c, "run_wb"); b.State != agentv1.RunState_RUN_STATE_RUNNING || b.LastSeq != 1 {
		t.Fatalf("a run with events and no end: %+v", b)
	}
	if ag, _ := s.GetAgent(c, "wa"); ag.RunID != "" {
		t.Errorf("the ended run still holds its agent's lease")
	}
	l.want(t, "run ended", func(n store.Notice) bool { return n.Kind == store.NoticeRunEnded && n.RunID == "run_wa" })
	l.want(t, "lease released", func(n store.Notice) bool { return n.Kind == store.NoticeLease && n.AgentID == "wa" })

	// run_wb's events repeat a seq: it is left out with its end; run_wc
	// and the end of an ended run (skipped) go through.
	rerr := &agentv1.RunError{Code: 1, Reason: "X"}
	err := s.AppendEvents(c, []*agentv1.Event{event("run_wb", 1, "again"), event("run_wc", 1, "d")},
		store.RunEnd{RunID: "run_wb", State: agentv1.RunState_RUN_STATE_FAILED, Error: rerr},
		store.RunEnd{RunID: "run_wc", State: agentv1.RunState_RUN_STATE_FAILED, Error: rerr},
		store.RunEnd{RunID: "run_wa", State: agentv1.RunState_RUN_STATE_STOPPED})
	var ee *store.EventsError
	if !errors.As(err, &ee) || len(ee.Runs) != 1 || !errors.Is(ee.Runs["run_wb"], store.ErrConflict) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a batch with one run's events out of order: %v", err)
	}
	if b, _ := s.GetRun(c, "run_wb"); b.State != agentv1.RunState_RUN_STATE_RUNNING || b.LastSeq != 1 {
		t.Errorf("the run left out: %+v", b)
	}
	if evs, _ := s.Events(c, "run_wb", 0, 0); len(evs) != 1 || evs[0].GetModelDelta().GetText() != "c" {
		t.Errorf("the run left out has events %v", evs)
	}
	if cr, _ := s.GetRun(c, "run_wc"); cr.State != agentv1.RunState_RUN_STATE_FAILED || cr.LastSeq != 1 || !proto.Equal(cr.Error, rerr) {
		t.Errorf("the other run of the batch: %+v", cr)
	}
	if a, _ := s.GetRun(c, "run_wa"); a.State != agentv1.RunState_RUN_STATE_SUCCEEDED {
		t.Errorf("the end of an ended run was not skipped: %v", a.State)
	}
	// Ends alone; an end of no run is skipped.
	if err := s.AppendEvents(c, nil, store.RunEnd{RunID: "run_wb", State: agentv1.RunState_RUN_STATE_STOPPED},
		store.RunEnd{RunID: "run_nope", State: agentv1.RunState_RUN_STATE_STOPPED}); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.GetRun(c, "run_wb"); b.State != agentv1.RunState_RUN_STATE_STOPPED {
		t.Errorf("an end without events: %v", b.State)
	}
	err = s.AppendEvents(c, []*agentv1.Event{event("run_gone", 1, "x")})
	if !errors.As(err, &ee) || !errors.Is(ee.Runs["run_gone"], store.ErrNotFound) {
		t.Errorf("events of no run: %v", err)
	}
}

func testDeleteEvents(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "a")
	mustCreate(t, s, "b")
	mustStart(t, s, "a", "run_old", "x", time.Minute)
	mustStart(t, s, "b", "run_live", "x", time.Minute)
	for _, id := range []string{"run_old", "run_live"} {
		if err := s.AppendEvents(c, []*agentv1.Event{event(id, 1, "a"), event(id, 2, "b")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FinishRun(c, "run_old", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteEvents(c, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("DeleteEvents before an hour ago = %d, %v", n, err)
	}
	n, err := s.DeleteEvents(c, time.Now().Add(time.Second))
	if err != nil || n != 2 {
		t.Errorf("DeleteEvents = %d, %v; want the ended run's 2", n, err)
	}
	if evs, _ := s.Events(c, "run_old", 0, 0); len(evs) != 0 {
		t.Errorf("%d events left of a swept run", len(evs))
	}
	if evs, _ := s.Events(c, "run_live", 0, 0); len(evs) != 2 {
		t.Errorf("a running run's events were swept: %d left", len(evs))
	}
	r, _ := s.GetRun(c, "run_old")
	if !r.Purged || r.LastSeq != 2 {
		t.Errorf("swept run: purged %v, last seq %d", r.Purged, r.LastSeq)
	}
}
