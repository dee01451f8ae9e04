// Package storetest is the conformance suite every store driver passes:
// agents, histories, runs and leases, events, permission requests and
// notices, with the semantics pkg/store documents. A driver's test calls
// Run with a Harness that opens fresh stores.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Harness opens the stores of a driver.
type Harness struct {
	// Open returns a new, empty store for one test; the suite closes it.
	Open func(t *testing.T) store.Store
	// Reopen, when set, returns another handle on s's data: a restarted
	// process (s is closed first when the store is not shared) or, for a
	// shared store, a second replica. The suite closes it.
	Reopen func(t *testing.T, s store.Store) store.Store
}

// Reopenable is the Harness of a driver whose stores live at a place (a
// file, a schema): fresh makes a new place for a test, open opens a store
// there (failing the test on error).
func Reopenable(fresh func(t *testing.T) string, open func(t *testing.T, where string) store.Store) Harness {
	var mu sync.Mutex
	places := map[store.Store]string{}
	opened := func(t *testing.T, where string) store.Store {
		s := open(t, where)
		mu.Lock()
		places[s] = where
		mu.Unlock()
		return s
	}
	return Harness{
		Open: func(t *testing.T) store.Store { return opened(t, fresh(t)) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			mu.Lock()
			where := places[s]
			mu.Unlock()
			if !s.Shared() {
				s.Close()
			}
			return opened(t, where)
		},
	}
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Agents", testAgents},
		{"ListAgents", testListAgents},
		{"History", testHistory},
		{"DeleteAgent", testDeleteAgent},
		{"RunLease", testRunLease},
		{"ExpiredLease", testExpiredLease},
		{"ListRuns", testListRuns},
		{"Events", testEvents},
		{"EventsWithEnds", testEventsWithEnds},
		{"DeleteEvents", testDeleteEvents},
		{"Permissions", testPermissions},
		{"Notices", testNotices},
		{"ConcurrentAppends", testConcurrentAppends},
		{"Reopen", testReopen},
		{"SecondHandle", testSecondHandle},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

func open(t *testing.T, h Harness) store.Store {
	t.Helper()
	s := h.Open(t)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// newAgent returns an agent to store.
func newAgent(id, tenant string) *store.Agent {
	now := time.Now().Truncate(time.Microsecond)
	return &store.Agent{
		ID: id, Tenant: tenant,
		Spec: &agentv1.Agent{
			Config: &agentv1.AgentConfig{System: proto.String("be brief"), Model: proto.String("m1")},
			Tools:  &agentv1.ToolSelection{Names: []string{"add"}},
		},
		Secrets: []string{"config.api_key"},
		Usage:   &agentv1.Usage{InputTokens: 3},
		Created: now, Updated: now,
	}
}

func mustCreate(t *testing.T, s store.Store, id string, h ...*agentv1.Message) *store.Agent {
	t.Helper()
	a := newAgent(id, "")
	if err := s.CreateAgent(ctx(t), a, h); err != nil {
		t.Fatalf("CreateAgent(%s): %v", id, err)
	}
	return a
}

func mustStart(t *testing.T, s store.Store, agentID, runID, owner string, ttl time.Duration) *store.Run {
	t.Helper()
	r := &store.Run{ID: runID, AgentID: agentID, Owner: owner, OnDisconnect: agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE}
	if err := s.StartRun(ctx(t), r, ttl); err != nil {
		t.Fatalf("StartRun(%s): %v", runID, err)
	}
	return r
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

func sameMessages(t *testing.T, got, want []*agentv1.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("history has %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("message %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func testAgents(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	a := newAgent("a1", "acme")
	if err := s.CreateAgent(c, a, []*agentv1.Message{history.User("hi")}); err != nil {
		t.Fatal(err)
	}
	if a.Version == 0 {
		t.Error("CreateAgent set no version")
	}
	wantErr(t, s.CreateAgent(c, newAgent("a1", ""), nil), store.ErrExists, "second CreateAgent")
	_, err := s.GetAgent(c, "nope")
	wantErr(t, err, store.ErrNotFound, "GetAgent(nope)")
	_, err = s.AgentVersion(c, "nope")
	wantErr(t, err, store.ErrNotFound, "AgentVersion(nope)")
	if v, err := s.AgentVersion(c, "a1"); err != nil || v != a.Version {
		t.Errorf("AgentVersion = %d, %v; want CreateAgent's %d", v, err, a.Version)
	}

	got, err := s.GetAgent(c, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Tenant != "acme" || got.HistoryLength != 1 || got.Version != a.Version || got.RunID != "" {
		t.Errorf("GetAgent = tenant %q, history %d, version %d, run %q", got.Tenant, got.HistoryLength, got.Version, got.RunID)
	}
	if !proto.Equal(got.Spec, a.Spec) || !proto.Equal(got.Usage, a.Usage) {
		t.Errorf("spec or usage changed: %v %v", got.Spec, got.Usage)
	}
	if len(got.Secrets) != 1 || got.Secrets[0] != "config.api_key" {
		t.Errorf("secrets %v", got.Secrets)
	}
	if !got.Created.Equal(a.Created) {
		t.Errorf("created %v, want %v", got.Created, a.Created)
	}

	got.Spec.Config.Model = proto.String("m2")
	got.Secrets = nil
	got.Updated = got.Updated.Add(time.Second)
	v, err := s.UpdateAgent(c, got)
	if err != nil {
		t.Fatal(err)
	}
	if v <= a.Version {
		t.Errorf("UpdateAgent version %d, not above %d", v, a.Version)
	}
	if av, err := s.AgentVersion(c, "a1"); err != nil || av != v {
		t.Errorf("AgentVersion after UpdateAgent = %d, %v; want %d", av, err, v)
	}
	again, _ := s.GetAgent(c, "a1")
	if again.Spec.GetConfig().GetModel() != "m2" || len(again.Secrets) != 0 || again.Version != v || !again.Updated.Equal(got.Updated) {
		t.Errorf("after UpdateAgent: model %q, secrets %v, version %d (want %d)", again.Spec.GetConfig().GetModel(), again.Secrets, again.Version, v)
	}
	_, err = s.UpdateAgent(c, newAgent("nope", ""))
	wantErr(t, err, store.ErrNotFound, "UpdateAgent(nope)")
	if n, err := s.CountAgents(c); err != nil || n != 1 {
		t.Errorf("CountAgents = %d, %v", n, err)
	}
}

func testListAgents(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	for i := range 7 {
		tenant := "t1"
		if i%2 == 1 {
			tenant = "t2"
		}
		if err := s.CreateAgent(c, newAgent(fmt.Sprintf("ag%02d", i), tenant), nil); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	q := store.AgentQuery{AnyTenant: true, Limit: 3}
	for {
		page, err := s.ListAgents(c, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			ids = append(ids, a.ID)
		}
		if len(page) < 3 {
			break
		}
		q.After = page[len(page)-1].ID
	}
	if fmt.Sprint(ids) != "[ag00 ag01 ag02 ag03 ag04 ag05 ag06]" {
		t.Errorf("pages gave %v", ids)
	}
	t2, err := s.ListAgents(c, store.AgentQuery{Tenant: "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(t2) != 3 || t2[0].ID != "ag01" {
		t.Errorf("tenant t2 lists %d agents", len(t2))
	}
	none, _ := s.ListAgents(c, store.AgentQuery{})
	if len(none) != 0 {
		t.Errorf("the default tenant lists %d agents of other tenants", len(none))
	}
}

func testHistory(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	first := []*agentv1.Message{history.User("add 2 and 3")}
	a := mustCreate(t, s, "h1", first...)
	msgs, v, err := s.History(c, "h1")
	if err != nil {
		t.Fatal(err)
	}
	sameMessages(t, msgs, first)
	if v != a.Version {
		t.Errorf("History version %d, want %d", v, a.Version)
	}

	step := []*agentv1.Message{
		history.Assistant(history.Text("sure"), history.ToolCall("c1", "add", `{"a":2,"b":3}`)),
	}
	usage := &agentv1.Usage{InputTokens: 10, OutputTokens: 4, TotalTokens: 14, CacheReadTokens: 2}
	v2, err := s.AppendHistory(c, "h1", 1, step, usage, true)
	if err != nil {
		t.Fatal(err)
	}
	if v2 <= v {
		t.Errorf("AppendHistory version %d, not above %d", v2, v)
	}
	_, err = s.AppendHistory(c, "h1", 1, []*agentv1.Message{history.User("late")}, nil, true)
	wantErr(t, err, store.ErrConflict, "AppendHistory at a stale position")
	_, err = s.AppendHistory(c, "nope", 0, step, nil, true)
	wantErr(t, err, store.ErrNotFound, "AppendHistory(nope)")

	results := []*agentv1.Message{history.ToolText("c1", "add", "5"), history.AssistantText("5")}
	if _, err := s.AppendHistory(c, "h1", 2, results, nil, false); err != nil { // not waiting for the disk: read back all the same
		t.Fatal(err)
	}
	msgs, _, _ = s.History(c, "h1")
	sameMessages(t, msgs, append(append(first, step...), results...))
	got, _ := s.GetAgent(c, "h1")
	if got.HistoryLength != 4 || !proto.Equal(got.Usage, usage) {
		t.Errorf("agent after appends: history %d, usage %v", got.HistoryLength, got.Usage)
	}

	repl := []*agentv1.Message{history.User("start over")}
	v3, err := s.ReplaceHistory(c, "h1", repl)
	if err != nil {
		t.Fatal(err)
	}
	msgs, v4, _ := s.History(c, "h1")
	sameMessages(t, msgs, repl)
	if v3 != v4 {
		t.Errorf("ReplaceHistory version %d, History says %d", v3, v4)
	}
	if av, err := s.AgentVersion(c, "h1"); err != nil || av != v3 {
		t.Errorf("AgentVersion after ReplaceHistory = %d, %v; want %d", av, err, v3)
	}
	if _, err := s.AppendHistory(c, "h1", 1, []*agentv1.Message{history.AssistantText("ok")}, nil, true); err != nil {
		t.Fatalf("append after replace: %v", err)
	}
	if _, err := s.ReplaceHistory(c, "h1", nil); err != nil {
		t.Fatal(err)
	}
	if msgs, _, _ := s.History(c, "h1"); len(msgs) != 0 {
		t.Errorf("emptied history holds %d", len(msgs))
	}
}

func testDeleteAgent(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "d1", history.User("x"))
	mustCreate(t, s, "d2")
	mustStart(t, s, "d1", "run_d1", "r1", time.Minute)
	mustStart(t, s, "d2", "run_d2", "r1", time.Minute)
	ev := &agentv1.Event{Seq: 1, RunId: "run_d1", Kind: &agentv1.Event_RunStarted{RunStarted: &agentv1.RunStartedEvent{AgentId: "d1"}}}
	if err := s.AppendEvents(c, []*agentv1.Event{ev}); err != nil {
		t.Fatal(err)
	}
	if err := s.AskPermission(c, &store.Permission{RunID: "run_d1", CallID: "c1", ToolName: "shell"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAgent(c, "d1"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.DeleteAgent(c, "d1"), store.ErrNotFound, "second DeleteAgent")
	_, err := s.GetAgent(c, "d1")
	wantErr(t, err, store.ErrNotFound, "GetAgent after delete")
	_, err = s.GetRun(c, "run_d1")
	wantErr(t, err, store.ErrNotFound, "GetRun of a deleted agent's run")
	if _, err := s.GetRun(c, "run_d2"); err != nil {
		t.Errorf("another agent's run went too: %v", err)
	}
	// The id is free again, with nothing of the old agent.
	mustCreate(t, s, "d1")
	if msgs, _, _ := s.History(c, "d1"); len(msgs) != 0 {
		t.Errorf("a new agent with a deleted one's id has %d messages", len(msgs))
	}
}

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

func event(run string, seq int64, text string) *agentv1.Event {
	return &agentv1.Event{Seq: seq, RunId: run, Time: timestamppb.New(time.Unix(1700000000, seq)),
		Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Step: 1, Delta: &agentv1.ModelDeltaEvent_Text{Text: text}}}}
}

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

func testPermissions(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "p")
	mustStart(t, s, "p", "run_p", "x", time.Minute)
	for _, id := range []string{"c1", "c2"} {
		if err := s.AskPermission(c, &store.Permission{RunID: "run_p", CallID: id, ToolName: "shell", Arguments: `{"command":"ls"}`}); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, s.AskPermission(c, &store.Permission{RunID: "run_p", CallID: "c1"}), store.ErrExists, "asking twice")
	p, err := s.AnswerPermission(c, "run_p", "c1", true, "")
	if err != nil || !p.Answered || !p.Allow || p.ToolName != "shell" {
		t.Fatalf("AnswerPermission = %+v, %v", p, err)
	}
	p, err = s.AnswerPermission(c, "run_p", "c1", false, "too late")
	wantErr(t, err, store.ErrConflict, "answering twice")
	if p == nil || !p.Allow {
		t.Errorf("the conflict does not carry the first answer: %+v", p)
	}
	_, err = s.AnswerPermission(c, "run_p", "c9", true, "")
	wantErr(t, err, store.ErrNotFound, "answering no request")
	all, err := s.Permissions(c, "run_p")
	if err != nil || len(all) != 2 || all[0].CallID != "c1" || all[1].CallID != "c2" || all[1].Answered || all[1].Arguments != `{"command":"ls"}` {
		t.Fatalf("Permissions = %+v, %v", all, err)
	}
	if err := s.FinishRun(c, "run_p", agentv1.RunState_RUN_STATE_STOPPED, nil, &agentv1.RunError{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.AnswerPermission(c, "run_p", "c2", true, "")
	wantErr(t, err, store.ErrConflict, "answering a request of an ended run")
}

// listen collects notices until the test ends.
type listener struct {
	mu  sync.Mutex
	got []store.Notice
	ch  chan struct{}
}

func listen(t *testing.T, s store.Store) *listener {
	l := &listener{ch: make(chan struct{}, 1)}
	c, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		close(ready)
		_ = s.Listen(c, func(n store.Notice) {
			l.mu.Lock()
			l.got = append(l.got, n)
			l.mu.Unlock()
			select {
			case l.ch <- struct{}{}:
			default:
			}
		})
	}()
	<-ready
	t.Cleanup(func() { cancel(); <-done })
	// Listen may take a moment to subscribe: send probes until one arrives.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = s.Notify(context.Background(), store.Notice{Kind: store.NoticeAgent, AgentID: "probe"})
		if l.find(func(n store.Notice) bool { return n.AgentID == "probe" }, 50*time.Millisecond) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatal("Listen never delivered a notice")
		}
	}
}

// find waits up to d for a notice matching ok.
func (l *listener) find(ok func(store.Notice) bool, d time.Duration) bool {
	deadline := time.After(d)
	for {
		l.mu.Lock()
		for _, n := range l.got {
			if ok(n) {
				l.mu.Unlock()
				return true
			}
		}
		l.mu.Unlock()
		select {
		case <-l.ch:
		case <-deadline:
			return false
		}
	}
}

func (l *listener) want(t *testing.T, what string, ok func(store.Notice) bool) {
	t.Helper()
	if !l.find(ok, 10*time.Second) {
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Fatalf("no notice of %s; got %+v", what, l.got)
	}
}

func testNotices(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	l := listen(t, s)
	if err := s.Notify(c, store.Notice{Kind: store.NoticeStop, RunID: "run_n", Text: "stopped"}); err != nil {
		t.Fatal(err)
	}
	l.want(t, "stop", func(n store.Notice) bool {
		return n.Kind == store.NoticeStop && n.RunID == "run_n" && n.Text == "stopped"
	})
	mustCreate(t, s, "n")
	mustStart(t, s, "n", "run_n", "x", time.Minute)
	if err := s.AppendEvents(c, []*agentv1.Event{event("run_n", 1, "a"), event("run_n", 2, "b")}); err != nil {
		t.Fatal(err)
	}
	l.want(t, "events", func(n store.Notice) bool {
		return n.Kind == store.NoticeEvents && n.RunID == "run_n" && n.Seq == 2
	})
	if err := s.FinishRun(c, "run_n", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
		t.Fatal(err)
	}
	l.want(t, "run ended", func(n store.Notice) bool { return n.Kind == store.NoticeRunEnded && n.RunID == "run_n" })
	l.want(t, "lease released", func(n store.Notice) bool { return n.Kind == store.NoticeLease && n.AgentID == "n" })
}

func testConcurrentAppends(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	const agents, steps = 8, 10
	for i := range agents {
		mustCreate(t, s, fmt.Sprint("c", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for i := range agents {
		wg.Go(func() {
			id := fmt.Sprint("c", i)
			run := "run_" + id
			if err := s.StartRun(c, &store.Run{ID: run, AgentID: id, Owner: "x"}, time.Minute); err != nil {
				errs <- err
				return
			}
			for k := range steps {
				if _, err := s.AppendHistory(c, id, 2*k, []*agentv1.Message{history.User("q"), history.AssistantText("a")}, nil, true); err != nil {
					errs <- err
					return
				}
				if err := s.AppendEvents(c, []*agentv1.Event{event(run, int64(k+1), "x")}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range agents {
		msgs, _, err := s.History(c, fmt.Sprint("c", i))
		if err != nil || len(msgs) != 2*steps {
			t.Fatalf("agent %d: %d messages, %v", i, len(msgs), err)
		}
	}
}

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

// Bench measures what one model step costs a driver: a model response
// appended to the history with the usage totals, and the step's events
// (a request, ten deltas, the response) appended to the run's log.
func Bench(b *testing.B, s store.Store) {
	ctx := context.Background()
	if err := s.CreateAgent(ctx, newAgent("bench", ""), nil); err != nil {
		b.Fatal(err)
	}
	if err := s.StartRun(ctx, &store.Run{ID: "run_bench", AgentID: "bench", Owner: "x"}, time.Hour); err != nil {
		b.Fatal(err)
	}
	msg := history.Assistant(history.Text("a short answer of a few words"), history.ToolCall("c", "add", `{"a":2,"b":3}`))
	usage := &agentv1.Usage{InputTokens: 100, OutputTokens: 20}
	var seq int64
	steps := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := s.AppendHistory(ctx, "bench", i, []*agentv1.Message{msg}, usage, true); err != nil {
			b.Fatal(err)
		}
		evs := make([]*agentv1.Event, 12)
		for k := range evs {
			seq++
			evs[k] = event("run_bench", seq, "delta")
		}
		if err := s.AppendEvents(ctx, evs); err != nil {
			b.Fatal(err)
		}
		steps = append(steps, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(steps)
	b.ReportMetric(float64(steps[len(steps)/2].Microseconds())/1000, "step-p50-ms")
	b.ReportMetric(float64(steps[len(steps)*99/100].Microseconds())/1000, "step-p99-ms")
}
