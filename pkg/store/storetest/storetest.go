// Package storetest is the conformance suite every store driver passes:
// agents, histories, runs and leases, events, permission requests and
// notices, the vault's credentials, with the semantics pkg/store documents. A driver's test calls
// Run with a Harness that opens fresh stores.
package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

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
		{"TakeOver", testTakeOver},
		{"ListRuns", testListRuns},
		{"RunTree", testRunTree},
		{"Events", testEvents},
		{"EventsWithEnds", testEventsWithEnds},
		{"DeleteEvents", testDeleteEvents},
		{"EventBytes", testEventBytes},
		{"TrimEvents", testTrimEvents},
		{"Permissions", testPermissions},
		{"Notices", testNotices},
		{"ConcurrentAppends", testConcurrentAppends},
		{"Credentials", testCredentials},
		{"CredentialIsolation", testCredentialIsolation},
		{"ConcurrentCredentials", testConcurrentCredentials},
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

func event(run string, seq int64, text string) *agentv1.Event {
	return &agentv1.Event{Seq: seq, RunId: run, Time: timestamppb.New(time.Unix(1700000000, seq)),
		Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{Step: 1, Delta: &agentv1.ModelDeltaEvent_Text{Text: text}}}}
}
