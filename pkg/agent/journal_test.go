package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// bookJournal keeps what the session tells it, as a store would, and can
// be told to fail.
type bookJournal struct {
	mu      sync.Mutex
	history []*agentv1.Message
	usage   *agentv1.Usage
	calls   []string
	// failAt makes the n-th Append fail (1-based); 0 never.
	failAt  int
	appends int
	begin   func() (*agent.Snapshot, error)
}

func (j *bookJournal) Begin(ctx context.Context, r agent.JournalRun) (*agent.Snapshot, error) {
	j.mu.Lock()
	j.calls = append(j.calls, fmt.Sprintf("begin compaction=%v", r.Compaction))
	begin := j.begin
	j.mu.Unlock()
	if begin != nil {
		return begin()
	}
	return nil, nil
}

func (j *bookJournal) Append(ctx context.Context, runID string, at int, msgs []*agentv1.Message, usage *agentv1.Usage, durable bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appends++
	if j.appends == j.failAt {
		return errors.New("disk full")
	}
	if at != len(j.history) {
		return fmt.Errorf("append at %d to %d messages", at, len(j.history))
	}
	j.history = append(j.history, msgs...)
	j.usage = proto.Clone(usage).(*agentv1.Usage)
	j.calls = append(j.calls, fmt.Sprintf("append %d+%d%s", at, len(msgs), map[bool]string{true: " durable"}[durable]))
	return nil
}

func (j *bookJournal) Replace(ctx context.Context, runID string, msgs []*agentv1.Message) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.history = append([]*agentv1.Message(nil), msgs...)
	j.calls = append(j.calls, fmt.Sprintf("replace %d", len(msgs)))
	return nil
}

func (j *bookJournal) End(r agent.JournalRun, res *agent.Result, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, fmt.Sprintf("end ok=%v", err == nil && res != nil))
}

func (j *bookJournal) log() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.calls, "; ")
}

func TestJournalGetsEveryStepInOrder(t *testing.T) {
	j := &bookJournal{}
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add"); o.Journal = j })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("c1")}, Usage: &fakemodel.Usage{Input: 10, Output: 2}})
	srv.Push(fakemodel.Turn{Text: "5", Usage: &fakemodel.Usage{Input: 20, Output: 1}})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("add 2 and 3")}); err != nil {
		t.Fatal(err)
	}
	if got, want := j.log(), "begin compaction=false; append 0+1; append 1+1; append 2+1 durable; append 3+1 durable; end ok=true"; got != want {
		t.Fatalf("journal calls:\n%s\nwant:\n%s", got, want)
	}
	if history.Render(j.history) != history.Render(s.History()) {
		t.Fatalf("journal and session differ:\n%s\n---\n%s", history.Render(j.history), history.Render(s.History()))
	}
	if !proto.Equal(j.usage, s.Usage()) || j.usage.GetInputTokens() != 30 {
		t.Fatalf("journal usage %v, session %v", j.usage, s.Usage())
	}
}

// releasingJournal is a bookJournal that records Release, which returns
// fail.
type releasingJournal struct {
	bookJournal
	fail error
}

func (j *releasingJournal) Release() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, "release")
	return j.fail
}

// A journal that holds writes back is told to send them before a tool
// runs, and not for a call that runs no tool.
func TestJournalReleaseBeforeAToolRuns(t *testing.T) {
	j := &releasingJournal{}
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add"); o.Journal = j })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c0", Name: "no_such_tool", Arguments: "{}"}}})
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("c1")}})
	srv.Push(fakemodel.Turn{Text: "5"})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("add 2 and 3")}); err != nil {
		t.Fatal(err)
	}
	want := "begin compaction=false; append 0+1; append 1+1; append 2+1 durable; append 3+1; release; append 4+1 durable; append 5+1 durable; end ok=true"
	if got := j.log(); got != want {
		t.Fatalf("journal calls:\n%s\nwant:\n%s", got, want)
	}
}

// A call whose record cannot be stored does not run: the model learns so.
func TestJournalReleaseFailureRunsNoTool(t *testing.T) {
	j := &releasingJournal{fail: errors.New("disk full")}
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add"); o.Journal = j })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("c1")}})
	srv.Push(fakemodel.Turn{Text: "gave up"})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("add 2 and 3")}); err != nil {
		t.Fatal(err)
	}
	h := s.History()
	res := h[2].GetParts()[0].GetToolResult()
	if !res.GetError() || !strings.Contains(res.GetOutput().GetText(), "could not be stored, so the call did not run") {
		t.Fatalf("the call's result: %v", res)
	}
}

func TestJournalFailureEndsTheRunWithMemoryAsStored(t *testing.T) {
	j := &bookJournal{failAt: 2} // the model's answer cannot be saved
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "add"); o.Journal = j })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("c1")}})
	_, err := s.Send(context.Background(), agent.SendOptions{Input: input("add 2 and 3")})
	var je *agent.JournalError
	if !errors.As(err, &je) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("send: %v", err)
	}
	if len(s.History()) != 1 || len(j.history) != 1 {
		t.Fatalf("session holds %d messages, journal %d; want the input only in both", len(s.History()), len(j.history))
	}
	if !strings.HasSuffix(j.log(), "end ok=false") {
		t.Fatalf("journal calls: %s", j.log())
	}
}

func TestJournalBeginSnapshotAndBusy(t *testing.T) {
	j := &bookJournal{}
	s, srv := newSession(t, func(o *agent.Options) { o.Journal = j })
	stored := []*agentv1.Message{history.User("written by another replica"), history.AssistantText("noted")}
	j.begin = func() (*agent.Snapshot, error) {
		return &agent.Snapshot{History: stored, Usage: &agentv1.Usage{InputTokens: 7}}, nil
	}
	j.history = append(j.history, stored...)
	srv.Push(fakemodel.Turn{Text: "ok"})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("and now?")}); err != nil {
		t.Fatal(err)
	}
	if n := len(messages(srv.Requests()[0])); n != 4 { // system, the two stored, the input
		t.Fatalf("the request held %d messages, want 4", n)
	}
	if s.Usage().GetInputTokens() < 7 {
		t.Fatalf("usage %v does not start from the stored totals", s.Usage())
	}
	j.begin = func() (*agent.Snapshot, error) { return nil, agent.ErrBusy }
	before := j.log()
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("again")}); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("send when another process runs the agent: %v", err)
	}
	if after := j.log(); after != before+"; begin compaction=false" {
		t.Fatalf("a send that did not begin reached the journal: %s", after)
	}
}

func TestResumeGoesOnFromTheHistory(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Tools = pick(t, "add")
		o.History = []*agentv1.Message{
			history.User("add 2 and 3"),
			history.Assistant(history.ToolCall("c1", "add", `{"a":2,"b":3}`)),
			history.ToolError("c1", "add", "the server stopped before this call finished"),
		}
	})
	srv.Push(fakemodel.Turn{Text: "5"})
	res, err := s.Send(context.Background(), agent.SendOptions{Resume: true})
	if err != nil || res.Text != "5" {
		t.Fatalf("resume: %v, %v", res, err)
	}
	if msgs := messages(srv.Requests()[0]); msgs[len(msgs)-1]["role"] != "tool" {
		t.Fatalf("the resumed request does not end with the tool result: %v", msgs)
	}
	if _, err := s.Send(context.Background(), agent.SendOptions{Resume: true}); !errors.Is(err, agent.ErrNothingToResume) {
		t.Fatalf("resume after the model's answer: %v", err)
	}
	var ve *agent.ValidationError
	if _, err := s.Send(context.Background(), agent.SendOptions{Resume: true, Input: input("x")}); !errors.As(err, &ve) || ve.Violations[0].Field != "input" {
		t.Fatalf("resume with input: %v", err)
	}
}
