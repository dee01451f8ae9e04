package storetest

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
