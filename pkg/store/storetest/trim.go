package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// appendSized stores n events of a run, each with text of size bytes, and
// returns the size of their encoded form.
func appendSized(t *testing.T, s store.Store, run string, from int64, n, size int) int64 {
	t.Helper()
	var evs []*agentv1.Event
	var sum int64
	for i := range n {
		ev := event(run, from+int64(i), strings.Repeat("x", size))
		evs = append(evs, ev)
		sum += int64(proto.Size(ev))
	}
	if err := s.AppendEvents(ctx(t), evs); err != nil {
		t.Fatal(err)
	}
	return sum
}

// testEventBytes: a run reports the size of its stored events, in GetRun
// and ListRuns, and 0 once they were swept.
func testEventBytes(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	mustCreate(t, s, "a")
	mustStart(t, s, "a", "run_1", "x", time.Minute)
	if r, _ := s.GetRun(c, "run_1"); r.EventBytes != 0 {
		t.Errorf("a new run's event bytes: %d", r.EventBytes)
	}
	want := appendSized(t, s, "run_1", 1, 3, 100)
	want += appendSized(t, s, "run_1", 4, 1, 5000)
	if r, err := s.GetRun(c, "run_1"); err != nil || r.EventBytes != want {
		t.Errorf("GetRun: %d event bytes, want %d (%v)", r.EventBytes, want, err)
	}
	if rs, err := s.ListRuns(c, store.RunQuery{AgentID: "a"}); err != nil || len(rs) != 1 || rs[0].EventBytes != want {
		t.Errorf("ListRuns: %v, %v; want %d event bytes", rs, err, want)
	}
	if err := s.FinishRun(c, "run_1", agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteEvents(c, time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.GetRun(c, "run_1"); !r.Purged || r.EventBytes != 0 {
		t.Errorf("a swept run: purged %v, %d event bytes", r.Purged, r.EventBytes)
	}
}

// testTrimEvents: retention by size deletes the events of ended runs over
// the bound per run, then of the runs that ended first while all runs'
// events hold more than the total; never a running run's.
func testTrimEvents(t *testing.T, h Harness) {
	s := open(t, h)
	c := ctx(t)
	sizes := map[string]int64{}
	for _, r := range []struct {
		id       string
		n, bytes int
		end      bool
	}{
		{"run_1", 2, 100, true},  // ended first, small
		{"run_2", 3, 1000, true}, // over 2,000 bytes
		{"run_3", 2, 100, true},  // ended last, small
		{"run_4", 3, 1000, false},
	} {
		agent := "agent_" + r.id
		mustCreate(t, s, agent)
		mustStart(t, s, agent, r.id, "x", time.Minute)
		sizes[r.id] = appendSized(t, s, r.id, 1, r.n, r.bytes)
		if r.end {
			if err := s.FinishRun(c, r.id, agentv1.RunState_RUN_STATE_SUCCEEDED, &agentv1.RunResultEvent{}, nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond) // ended in this order
		}
	}
	kept := func(want ...string) {
		t.Helper()
		for _, id := range []string{"run_1", "run_2", "run_3", "run_4"} {
			r, err := s.GetRun(c, id)
			if err != nil {
				t.Fatal(err)
			}
			evs, _ := s.Events(c, id, 0, 0)
			has := len(evs) > 0
			if has != slices.Contains(want, id) || has == r.Purged || has != (r.EventBytes == sizes[id]) || !has && r.EventBytes != 0 {
				t.Errorf("%s: %d events, purged %v, %d event bytes; want kept: %v", id, len(evs), r.Purged, r.EventBytes, slices.Contains(want, id))
			}
		}
	}
	tests := []struct {
		name          string
		perRun, total int64
		deleted       int64
		kept          []string
	}{
		{"no bounds", 0, 0, 0, []string{"run_1", "run_2", "run_3", "run_4"}},
		{"per run: the ended run over it", 2000, 0, 3, []string{"run_1", "run_3", "run_4"}},
		{"in all: the runs that ended first", 0, sizes["run_3"] + sizes["run_4"], 2, []string{"run_3", "run_4"}},
		{"in all: never a running run", 0, 1, 2, []string{"run_4"}},
		{"nothing more to delete", 1, 1, 0, []string{"run_4"}},
	}
	for _, tt := range tests {
		n, err := s.TrimEvents(c, tt.perRun, tt.total)
		if err != nil || n != tt.deleted {
			t.Errorf("%s: TrimEvents = %d, %v; want %d deleted", tt.name, n, err, tt.deleted)
		}
		kept(tt.kept...)
	}
}
