package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
