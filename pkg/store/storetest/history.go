package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
