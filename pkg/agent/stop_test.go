package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// hangCall runs a shell command that prints its plugin's and its own pid,
// then sleeps as that pid.
var hangCall = fakemodel.ToolCall{ID: "hang", Name: "shell", Arguments: `{"command":"echo pids $PPID $$; exec sleep 60"}`}

// pidsOf waits for the hang call's output and returns the pids it printed.
func pidsOf(t *testing.T, rec *recorder) []int {
	t.Helper()
	ev := rec.wait(t, func(e *agentv1.Event) bool { return strings.Contains(e.GetToolOutput().GetData(), "pids ") })
	var a, b int
	if _, err := fmt.Sscanf(strings.TrimSpace(ev.GetToolOutput().GetData()), "pids %d %d", &a, &b); err != nil {
		t.Fatalf("output %q: %v", ev.GetToolOutput().GetData(), err)
	}
	return []int{a, b}
}

// gone reports whether a process no longer runs (a zombie waiting for its
// reaper counts as gone).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func checkGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestLatestSendWins(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "shell") })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{hangCall}})
	rec := newRecorder()
	old := sendAsync(s, agent.SendOptions{Input: input("old task"), OnEvent: rec.add})
	pids := pidsOf(t, rec)

	srv.Push(fakemodel.Turn{Text: "new task done"})
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input("new task")})
	if err != nil || res.Text != "new task done" {
		t.Fatalf("new send: %v, %v", res, err)
	}
	o := receive(t, old)
	if !isAborted(o.err, agent.ErrReplaced) {
		t.Fatalf("old send returned %v, %v; want aborted (replaced)", o.res, o.err)
	}
	checkGone(t, pids)

	h := s.History()
	if err := history.Validate(h); err != nil {
		t.Fatal(err)
	}
	got := history.RenderWith(h, history.English())
	if !strings.HasPrefix(got, "user: old task\nassistant: [call shell") ||
		!strings.Contains(got, "tool: [shell error] tool \"shell\" was stopped: "+agent.ErrReplaced.Error()) ||
		!strings.HasSuffix(got, "user: new task\nassistant: new task done") {
		t.Fatalf("history:\n%s", got)
	}
	// The old run's events end with its cut-off result; no result event.
	kinds := rec.kinds()
	if kinds[len(kinds)-1] != "tool_result" {
		t.Fatalf("old run's events: %v", kinds)
	}
}

func TestStop(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "shell") })
	if stopped, err := s.Stop(context.Background()); stopped || err != nil {
		t.Fatalf("Stop on an idle session = %v, %v", stopped, err)
	}
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{hangCall}})
	rec := newRecorder()
	ch := sendAsync(s, agent.SendOptions{Input: input("wait"), OnEvent: rec.add})
	pids := pidsOf(t, rec)
	if st := s.State(); !st.Running || st.RunID == "" {
		t.Fatalf("state while running: %+v", st)
	}
	stopped, err := s.Stop(context.Background())
	if !stopped || err != nil {
		t.Fatalf("Stop = %v, %v", stopped, err)
	}
	// Stop returned after the run fully stopped: the process is dead, the
	// send has its answer, the session is idle and its history complete.
	checkGone(t, pids[:1])
	select {
	case o := <-ch:
		if !isAborted(o.err, agent.ErrStopped) {
			t.Fatalf("send returned %v", o.err)
		}
	default:
		t.Fatal("Stop returned before the send did")
	}
	checkGone(t, pids)
	if st := s.State(); st.Running || st.HistoryLength != 3 {
		t.Fatalf("state after Stop: %+v", st)
	}
	if err := history.Validate(s.History()); err != nil {
		t.Fatal(err)
	}
}

func TestBusyPolicies(t *testing.T) {
	s, srv := newSession(t, nil)
	srv.Push(fakemodel.Turn{Text: "first", Delay: 300 * time.Millisecond})
	rec := newRecorder()
	first := sendAsync(s, agent.SendOptions{Input: input("one"), OnEvent: rec.add})
	rec.wait(t, func(e *agentv1.Event) bool { return e.GetModelRequest() != nil })

	_, err := s.Send(context.Background(), agent.SendOptions{Input: input("rejected"), Busy: agentv1.BusyPolicy_BUSY_POLICY_REJECT})
	if !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("reject policy: %v", err)
	}
	if err := s.SetHistory(nil); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("SetHistory while running: %v", err)
	}

	srv.Push(fakemodel.Turn{Text: "second"})
	queued := sendAsync(s, agent.SendOptions{Input: input("two"), Busy: agentv1.BusyPolicy_BUSY_POLICY_QUEUE})
	// A queued send that gives up leaves the queue.
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := s.Send(ctx, agent.SendOptions{Input: input("never"), Busy: agentv1.BusyPolicy_BUSY_POLICY_QUEUE})
		gaveUp <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); s.State().Waiting != 2; {
		if time.Now().After(deadline) {
			t.Fatalf("waiting sends: %d", s.State().Waiting)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-gaveUp; !isAborted(err, context.Canceled) {
		t.Fatalf("cancelled queued send: %v", err)
	}

	if o := receive(t, first); o.err != nil || o.res.Text != "first" {
		t.Fatalf("first send: %v, %v", o.res, o.err)
	}
	if o := receive(t, queued); o.err != nil || o.res.Text != "second" {
		t.Fatalf("queued send: %v, %v", o.res, o.err)
	}
	want := "user: one\nassistant: first\nuser: two\nassistant: second"
	if got := history.RenderWith(s.History(), history.English()); got != want {
		t.Fatalf("history:\n%s", got)
	}
}

func TestCloseEndsRunAndLaterSends(t *testing.T) {
	s, srv := newSession(t, nil)
	srv.Push(fakemodel.Turn{Text: "slow", Delay: 10 * time.Second})
	rec := newRecorder()
	ch := sendAsync(s, agent.SendOptions{Input: input("one"), OnEvent: rec.add})
	rec.wait(t, func(e *agentv1.Event) bool { return e.GetModelRequest() != nil })
	if stopped, err := s.Close(context.Background()); !stopped || err != nil {
		t.Fatalf("Close = %v, %v", stopped, err)
	}
	if o := receive(t, ch); !isAborted(o.err, agent.ErrClosed) {
		t.Fatalf("running send: %v", o.err)
	}
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("two")}); !isAborted(err, agent.ErrClosed) {
		t.Fatalf("send after Close: %v", err)
	}
	// Nothing half-written: the model's answer never came.
	if got := history.Render(s.History()); got != "user: one" {
		t.Fatalf("history: %s", got)
	}
}

func TestContextDeadlineIsTimeout(t *testing.T) {
	s, srv := newSession(t, nil)
	srv.Push(fakemodel.Turn{Text: "slow", Delay: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := s.Send(ctx, agent.SendOptions{Input: input("hurry")})
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

// TestCloseIdle: CloseIdle leaves a session with a run active alone, and
// closes an idle one (a later send fails ErrClosed), once.
func TestCloseIdle(t *testing.T) {
	s, srv := newSession(t, nil)
	srv.Push(fakemodel.Turn{Text: "slow", Delay: 300 * time.Millisecond})
	rec := newRecorder()
	ch := sendAsync(s, agent.SendOptions{Input: input("one"), OnEvent: rec.add})
	rec.wait(t, func(e *agentv1.Event) bool { return e.GetModelRequest() != nil })
	if s.CloseIdle() {
		t.Fatal("CloseIdle closed a session with a run active")
	}
	if o := receive(t, ch); o.err != nil || o.res.Text != "slow" {
		t.Fatalf("the run: %v, %v", o.res, o.err)
	}
	if !s.CloseIdle() {
		t.Fatal("CloseIdle left an idle session open")
	}
	if s.CloseIdle() {
		t.Fatal("CloseIdle closed a closed session again")
	}
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("two")}); !isAborted(err, agent.ErrClosed) {
		t.Fatalf("send after CloseIdle: %v", err)
	}
}
