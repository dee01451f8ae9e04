package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func testReopen(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("the driver keeps nothing across a reopen")
	}
	s := h.Open(t)
	c := ctx(t)
	mustCreate(t, s, "keep", history.User("remember me"))
	mustStart(t, s, "keep", "run_k", "x", time.Minute)
	if err := s.AppendEvents(c, []*agentv1.Event{event("run_k", 1, "a")}); err != nil {
		t.Fatal(err)
	}
	s2 := h.Reopen(t, s)
	defer s2.Close()
	if !s.Shared() {
		defer s.Close()
	} else {
		s.Close()
	}
	msgs, _, err := s2.History(c, "keep")
	if err != nil || len(msgs) != 1 || history.Render(msgs) == "" {
		t.Fatalf("history after reopen: %v, %v", msgs, err)
	}
	r, err := s2.GetRun(c, "run_k")
	if err != nil || r.State != agentv1.RunState_RUN_STATE_RUNNING || r.LastSeq != 1 {
		t.Fatalf("run after reopen: %+v, %v", r, err)
	}
}

func testSecondHandle(t *testing.T, h Harness) {
	s := open(t, h)
	if !s.Shared() || h.Reopen == nil {
		t.Skip("the store is not shared between processes")
	}
	b := h.Reopen(t, s)
	defer b.Close()
	c := ctx(t)
	lb := listen(t, b)
	mustCreate(t, s, "sh")
	mustStart(t, s, "sh", "run_a", "replica-a", time.Minute)
	var be *store.BusyError
	if err := b.StartRun(c, &store.Run{ID: "run_b", AgentID: "sh", Owner: "replica-b"}, time.Minute); !errors.As(err, &be) {
		t.Fatalf("the second handle's StartRun: %v", err)
	}
	if err := s.Notify(c, store.Notice{Kind: store.NoticeStop, RunID: "run_a", Text: "replaced"}); err != nil {
		t.Fatal(err)
	}
	lb.want(t, "a stop sent by the other handle", func(n store.Notice) bool { return n.Kind == store.NoticeStop && n.RunID == "run_a" })
	if err := s.AppendEvents(c, []*agentv1.Event{event("run_a", 1, "a")}); err != nil {
		t.Fatal(err)
	}
	lb.want(t, "events written by the other handle", func(n store.Notice) bool { return n.Kind == store.NoticeEvents && n.RunID == "run_a" })
	if err := s.FinishRun(c, "run_a", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
		t.Fatal(err)
	}
	lb.want(t, "the lease released by the other handle", func(n store.Notice) bool { return n.Kind == store.NoticeLease && n.AgentID == "sh" })
	if err := b.StartRun(c, &store.Run{ID: "run_b", AgentID: "sh", Owner: "replica-b"}, time.Minute); err != nil {
		t.Fatal(err)
	}
}
