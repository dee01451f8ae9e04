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

func testRunLease(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "l1")
	r := mustStart(t, s, "l1", "run_1", "replica-a", time.Minute)
	if r.State != agentv1.RunState_RUN_STATE_RUNNING || r.Started.IsZero() {
		t.Errorf("StartRun left state %v, started %v", r.State, r.Started)
	}
	a, _ := s.GetAgent(c, "l1")
	if a.RunID != "run_1" {
		t.Errorf("agent's run %q, want run_1", a.RunID)
	}
	if r.AgentVersion == 0 || r.AgentVersion != a.Version {
		t.Errorf("StartRun saw agent version %d, the agent is at %d", r.AgentVersion, a.Version)
	}
	err := s.StartRun(c, &store.Run{ID: "run_2", AgentID: "l1", Owner: "replica-b"}, time.Minute)
	var be *store.BusyError
	if !errors.As(err, &be) || !errors.Is(err, store.ErrBusy) || be.RunID != "run_1" || be.Owner != "replica-a" || be.Expired {
		t.Fatalf("second StartRun: %v (%+v)", err, be)
	}
	wantErr(t, s.StartRun(c, &store.Run{ID: "run_x", AgentID: "nope", Owner: "a"}, time.Minute), store.ErrNotFound, "StartRun on no agent")

	if ids, err := s.RenewLeases(c, "replica-a", time.Hour); err != nil || fmt.Sprint(ids) != "[run_1]" {
		t.Errorf("RenewLeases = %v, %v", ids, err)
	}
	if ids, err := s.RenewLeases(c, "replica-b", time.Hour); err != nil || len(ids) != 0 {
		t.Errorf("RenewLeases of another replica = %v, %v", ids, err)
	}
	got, err := s.GetRun(c, "run_1")
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(got.LeaseExpires) < 30*time.Minute || got.LeaseExpired || got.Owner != "replica-a" {
		t.Errorf("after renewal: lease until %v (expired %v), owner %q", got.LeaseExpires, got.LeaseExpired, got.Owner)
	}
	if got.OnDisconnect != agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE {
		t.Errorf("on_disconnect %v", got.OnDisconnect)
	}

	res := &agentv1.RunResultEvent{Text: "done", Steps: 2, Reason: agentv1.EndReason_END_REASON_NO_TOOL}
	if err := s.FinishRun(c, "run_1", agentv1.RunState_RUN_STATE_SUCCEEDED, res, nil); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.FinishRun(c, "run_1", agentv1.RunState_RUN_STATE_STOPPED, nil, nil), store.ErrConflict, "second FinishRun")
	wantErr(t, s.FinishRun(c, "nope", agentv1.RunState_RUN_STATE_STOPPED, nil, nil), store.ErrNotFound, "FinishRun(nope)")
	got, _ = s.GetRun(c, "run_1")
	if got.State != agentv1.RunState_RUN_STATE_SUCCEEDED || !proto.Equal(got.Result, res) || got.Ended.IsZero() || got.Error != nil {
		t.Errorf("finished run: %+v", got)
	}
	if a, _ := s.GetAgent(c, "l1"); a.RunID != "" {
		t.Errorf("lease still held by %q after the run ended", a.RunID)
	}
	if ids, _ := s.RenewLeases(c, "replica-a", time.Hour); len(ids) != 0 {
		t.Errorf("RenewLeases renewed the leases of ended runs %v", ids)
	}

	mustStart(t, s, "l1", "run_2", "replica-b", time.Minute)
	rerr := &agentv1.RunError{Code: 1, Message: "stopped", Reason: "ABORTED", Metadata: map[string]string{"cause": "stopped"}}
	if err := s.FinishRun(c, "run_2", agentv1.RunState_RUN_STATE_STOPPED, nil, rerr); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetRun(c, "run_2")
	if got.State != agentv1.RunState_RUN_STATE_STOPPED || !proto.Equal(got.Error, rerr) || got.Result != nil {
		t.Errorf("stopped run: %+v", got)
	}
}

func testExpiredLease(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "e1")
	mustStart(t, s, "e1", "run_dead", "replica-a", 50*time.Millisecond)
	time.Sleep(120 * time.Millisecond)
	got, _ := s.GetRun(c, "run_dead")
	if !got.LeaseExpired || got.State != agentv1.RunState_RUN_STATE_RUNNING {
		t.Fatalf("run past its lease: expired %v, state %v", got.LeaseExpired, got.State)
	}
	if a, _ := s.GetAgent(c, "e1"); a.RunID != "" {
		t.Errorf("an expired lease shows as run %q", a.RunID)
	}
	err := s.StartRun(c, &store.Run{ID: "run_new", AgentID: "e1", Owner: "replica-b"}, time.Minute)
	var be *store.BusyError
	if !errors.As(err, &be) || !be.Expired || be.RunID != "run_dead" {
		t.Fatalf("StartRun over an expired lease of a running run: %v", err)
	}
	running, err := s.ListRuns(c, store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_RUNNING})
	if err != nil || len(running) != 1 || !running[0].LeaseExpired {
		t.Fatalf("running runs: %v, %v", running, err)
	}
	if err := s.FinishRun(c, "run_dead", agentv1.RunState_RUN_STATE_INTERRUPTED, nil, &agentv1.RunError{Code: 14, Reason: "RUN_INTERRUPTED"}); err != nil {
		t.Fatal(err)
	}
	mustStart(t, s, "e1", "run_new", "replica-b", time.Minute)

	// An expired lease whose run ended (finished by another replica) is taken over at once.
	mustCreate(t, s, "e2")
	mustStart(t, s, "e2", "run_short", "replica-a", 30*time.Millisecond)
	if err := s.FinishRun(c, "run_short", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	mustStart(t, s, "e2", "run_next", "replica-b", time.Minute)
}

func testListRuns(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "r1")
	a2 := newAgent("r2", "other")
	if err := s.CreateAgent(c, a2, nil); err != nil {
		t.Fatal(err)
	}
	// Started one right after the other (in the same tick of a coarse
	// clock), with ids in the opposite order: the list follows the starts.
	for i := range 5 {
		id := fmt.Sprintf("run_%d", 4-i)
		mustStart(t, s, "r1", id, "x", time.Minute)
		if i < 4 {
			if err := s.FinishRun(c, id, agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := mustStart(t, s, "r2", "run_other", "x", time.Minute)
	if other.Tenant != "other" {
		t.Errorf("a run's tenant is %q, want its agent's", other.Tenant)
	}
	var ids []string
	q := store.RunQuery{AgentID: "r1", Limit: 2}
	for {
		page, err := s.ListRuns(c, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			ids = append(ids, r.ID)
		}
		if len(page) < 2 {
			break
		}
		last := page[len(page)-1]
		q.Before = &store.Cursor{Started: last.Started, ID: last.ID}
	}
	if fmt.Sprint(ids) != "[run_0 run_1 run_2 run_3 run_4]" {
		t.Errorf("runs newest first, in pages: %v", ids)
	}
	running, _ := s.ListRuns(c, store.RunQuery{AnyTenant: true, State: agentv1.RunState_RUN_STATE_RUNNING})
	if len(running) != 2 {
		t.Errorf("%d running runs, want 2", len(running))
	}
	mine, _ := s.ListRuns(c, store.RunQuery{})
	if len(mine) != 5 {
		t.Errorf("the default tenant lists %d runs, want 5", len(mine))
	}
	theirs, _ := s.ListRuns(c, store.RunQuery{Tenant: "other"})
	if len(theirs) != 1 || theirs[0].ID != "run_other" {
		t.Errorf("tenant other lists %v", theirs)
	}
}

// testRunTree stores a root run with a child and a grandchild (of other
// agents) and lists the tree.
func testRunTree(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	for _, id := range []string{"t_root", "t_child", "t_grand", "t_other"} {
		mustCreate(t, s, id)
	}
	mustStart(t, s, "t_root", "run_root", "x", time.Minute)
	for _, r := range []*store.Run{
		{ID: "run_child", AgentID: "t_child", Owner: "x", ParentRunID: "run_root", RootRunID: "run_root", Depth: 1, ToolCallID: "call_1", User: "alice@example.com"},
		{ID: "run_grand", AgentID: "t_grand", Owner: "x", ParentRunID: "run_child", RootRunID: "run_root", Depth: 2, ToolCallID: "call_2", User: "alice@example.com"},
	} {
		if err := s.StartRun(c, r, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.StartRun(c, &store.Run{ID: "run_other", AgentID: "t_other", Owner: "x", User: "bob"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetRun(c, "run_other"); err != nil || got.User != "bob" || got.ParentRunID != "" {
		t.Errorf("a root run for a user: %+v, %v", got, err)
	}
	if got, err := s.GetRun(c, "run_root"); err != nil || got.User != "" {
		t.Errorf("a run for no user: %+v, %v", got, err)
	}
	got, err := s.GetRun(c, "run_grand")
	if err != nil {
		t.Fatal(err)
	}
	if got.ParentRunID != "run_child" || got.RootRunID != "run_root" || got.Depth != 2 || got.ToolCallID != "call_2" || got.User != "alice@example.com" {
		t.Errorf("the grandchild's place: %+v", got)
	}
	tree, err := s.ListRuns(c, store.RunQuery{RootRunID: "run_root"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range tree {
		ids = append(ids, r.ID)
	}
	if fmt.Sprint(ids) != "[run_grand run_child run_root]" {
		t.Errorf("the tree lists %v", ids)
	}
}
