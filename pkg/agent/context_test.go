package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/compact"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/window"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

const goal = "GOAL: rename every file under src/ to snake_case"

// compactionModel scripts srv: requests for model "cheap" are compactions
// answered with numbered summaries; others get the main turns in order.
func compactionModel(srv *fakemodel.Server, main ...fakemodel.Turn) {
	var mu sync.Mutex
	n, c := 0, 0
	srv.Handle(func(r *fakemodel.Request) fakemodel.Turn {
		mu.Lock()
		defer mu.Unlock()
		if r.JSON()["model"] == "cheap" {
			c++
			return fakemodel.Turn{
				TextChunks: []string{fmt.Sprintf("SUMMARY %d: ", c), goal + "; two files done."},
				Usage:      &fakemodel.Usage{Input: 1000, Output: 50},
			}
		}
		if n >= len(main) {
			return fakemodel.Turn{Status: 500, ErrorBody: "unscripted"}
		}
		n++
		return main[n-1]
	})
}

func TestCompactionOncePerRound(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Tools = pick(t, "add")
		// A system prompt larger than the budget: every round is over it,
		// even right after a compaction.
		o.Config.System = proto.String("You are a test agent. " + strings.Repeat("Be careful. ", 200))
		o.Config.MaxTokens = proto.Int64(500)
		o.Config.Compact = &agentv1.CompactConfig{Model: proto.String("cheap")}
	})
	compactionModel(srv,
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("a1")}, Usage: &fakemodel.Usage{Input: 10, Output: 1}},
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("a2")}, Usage: &fakemodel.Usage{Input: 10, Output: 1}},
		fakemodel.Turn{Text: "all renamed", Usage: &fakemodel.Usage{Input: 10, Output: 1}},
	)
	rec := newRecorder()
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input(goal), OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}

	// One compaction before each round, never two in a row, never a loop.
	var seq []string
	for _, r := range srv.Requests() {
		if r.JSON()["model"] == "cheap" {
			seq = append(seq, "C")
		} else {
			seq = append(seq, "M")
		}
	}
	if got := strings.Join(seq, ""); got != "CMCMCM" {
		t.Fatalf("requests %s, want CMCMCM", got)
	}

	// The compaction request asks to keep the goal and sees it, and never
	// carries tools or the task's output format.
	creq := srv.Requests()[0]
	msgs := messages(creq)
	if system(creq) != compact.Instructions || !strings.Contains(compact.Instructions, "original goal") {
		t.Fatalf("compaction system prompt:\n%s", system(creq))
	}
	if len(msgs) != 2 || !strings.Contains(text(msgs[1]["content"]), "user: "+goal) || creq.JSON()["tools"] != nil {
		t.Fatalf("compaction request %v", creq.JSON())
	}

	// The next main request has the summary in its system prompt.
	next := system(srv.Requests()[1])
	if !strings.Contains(next, window.DefaultSummaryPreamble) || !strings.Contains(next, "SUMMARY 1: "+goal) {
		t.Fatalf("system after compaction:\n%.2000s", next)
	}
	if sys := system(srv.Requests()[3]); !strings.Contains(sys, "SUMMARY 2") || strings.Contains(sys, "SUMMARY 1") {
		t.Fatalf("the latest summary is not the one sent:\n%.2000s", sys)
	}

	// History only grew: the goal is still there, with three summaries.
	h := s.History()
	if h[0].GetParts()[0].GetText() != goal {
		t.Fatal("the goal left the history")
	}
	summaries := 0
	for _, m := range h {
		if history.IsSummary(m) {
			summaries++
		}
	}
	if summaries != 3 {
		t.Fatalf("%d summaries in history", summaries)
	}

	// Events and usage: compactions are part of the send.
	var started, finished int
	var deltas string
	for _, e := range rec.all() {
		if c := e.GetCompactStarted(); c != nil {
			started++
			if c.GetManual() || c.GetTokens() < 500 {
				t.Errorf("compact started %v", c)
			}
		}
		if e.GetCompactFinished() != nil {
			finished++
		}
		deltas += e.GetCompactDelta().GetText()
	}
	if started != 3 || finished != 3 || !strings.Contains(deltas, "SUMMARY 3: "+goal) {
		t.Fatalf("compaction events: %d started, %d finished, deltas %q", started, finished, deltas)
	}
	if res.Usage.GetInputTokens() != 3*1000+3*10 || res.Steps != 3 {
		t.Fatalf("usage %v after %d steps", res.Usage, res.Steps)
	}
}

func TestCompactionNotNeeded(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Config.MaxTokens = proto.Int64(100_000) })
	srv.Push(fakemodel.Turn{Text: "short"})
	rec := newRecorder()
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("hi"), OnEvent: rec.add}); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
	if est := rec.all()[1].GetModelRequest().GetTokenEstimate(); est <= 0 {
		t.Fatalf("token estimate %d", est)
	}
}

func TestManualCompact(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) {
		o.Config.Compact = &agentv1.CompactConfig{Model: proto.String("cheap")}
	})
	if _, err := s.Compact(context.Background(), nil); !errors.Is(err, agent.ErrNothingToCompact) {
		t.Fatalf("empty history: %v", err)
	}
	compactionModel(srv, fakemodel.Turn{Text: "slow", Delay: 10 * time.Second})
	rec := newRecorder()
	running := sendAsync(s, agent.SendOptions{Input: input(goal), OnEvent: rec.add})
	rec.wait(t, func(e *agentv1.Event) bool { return e.GetModelRequest() != nil })

	crec := newRecorder()
	summary, err := s.Compact(context.Background(), crec.add)
	if err != nil {
		t.Fatal(err)
	}
	if o := receive(t, running); !isAborted(o.err, agent.ErrReplaced) {
		t.Fatalf("running send: %v", o.err)
	}
	if summary != "SUMMARY 1: "+goal+"; two files done." {
		t.Fatalf("summary %q", summary)
	}
	h := s.History()
	if len(h) != 2 || !history.IsSummary(h[1]) || history.SummaryText(h[1]) != summary {
		t.Fatalf("history:\n%s", history.Render(h))
	}
	kinds := strings.Join(crec.kinds(), " ")
	if !strings.HasPrefix(kinds, "compact_started compact_delta") || !strings.HasSuffix(kinds, "compact_finished") {
		t.Fatalf("events %s", kinds)
	}
	if c := crec.all()[0].GetCompactStarted(); !c.GetManual() || c.GetTokens() <= 0 {
		t.Fatalf("started %v", c)
	}
	if _, err := s.Compact(context.Background(), nil); !errors.Is(err, agent.ErrNothingToCompact) {
		t.Fatalf("compacting a summary again: %v", err)
	}
	if u := s.Usage(); u.GetInputTokens() != 1000 {
		t.Fatalf("session usage %v", u)
	}
}

func TestSkills(t *testing.T) {
	skills := skill.New(skill.Skill{Name: "review-pr", Description: "Use when reviewing a pull request.", Body: "1. Run the tests."})
	tests := []struct {
		name   string
		skills *skill.Set
		system string
		tools  string
		result string
	}{
		{"injected, the skill tool wins over the plugin's", skills,
			"You are a test agent.\n\n" + skills.SystemText(), "add,skill", "1. Run the tests."},
		{"none: zero bytes added, the plugin's tool stays", nil,
			"You are a test agent.", "add,skill", "the plugin's skill tool ran"},
		{"an empty set is none", skill.New(),
			"You are a test agent.", "add,skill", "the plugin's skill tool ran"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) {
				o.Tools = pick(t, "add", "skill")
				o.Skills = tc.skills
			})
			srv.Push(
				fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "k", Name: "skill", Arguments: `{"name":"review-pr"}`}}},
				fakemodel.Turn{Text: "reviewed"},
			)
			if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("review my PR")}); err != nil {
				t.Fatal(err)
			}
			req := srv.Requests()[0]
			if got := system(req); got != tc.system {
				t.Fatalf("system:\n%q\nwant:\n%q", got, tc.system)
			}
			if got := strings.Join(toolNames(req), ","); got != tc.tools {
				t.Fatalf("tools %s", got)
			}
			if got := s.History()[2].GetParts()[0].GetToolResult().GetOutput().GetText(); got != tc.result {
				t.Fatalf("skill call returned %q", got)
			}
		})
	}
}

func TestZeroInjectionWithoutTools(t *testing.T) {
	s, srv := newSession(t, nil)
	srv.Push(fakemodel.Turn{Text: "hi"})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("hello")}); err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if got := system(req); got != "You are a test agent." || req.JSON()["tools"] != nil {
		t.Fatalf("system %q tools %v", got, req.JSON()["tools"])
	}
}

func TestPreview(t *testing.T) {
	s, _ := newSession(t, func(o *agent.Options) {
		o.Tools = pick(t, "add")
		o.Config.MaxTokens = proto.Int64(50)
		o.History = []*agentv1.Message{history.User("earlier"), history.AssistantText("ok")}
	})
	p, err := s.Preview(input(strings.Repeat("a long question ", 20)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 3 || p.System != "You are a test agent." || p.MaxTokens != 50 || !p.WouldCompact ||
		p.Tokens <= p.HistoryTokens || p.HistoryTokens <= 0 {
		t.Fatalf("preview %+v", p)
	}
	if len(s.History()) != 2 {
		t.Fatal("Preview changed the history")
	}
}
