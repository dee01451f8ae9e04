package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestBudgetEndsTheRun runs a model that calls add every round, spending
// 100 input and 10 output tokens a round, under each kind of limit, and
// checks the round the run ends at, the event naming the limit and what
// the result says was spent.
func TestBudgetEndsTheRun(t *testing.T) {
	round := fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("")}, Usage: &fakemodel.Usage{Input: 100, Output: 10}}
	tests := []struct {
		name   string
		budget *agentv1.Budget
		limit  agentv1.BudgetLimit
		// requests are the model requests made; calls the add calls run.
		requests, calls int64
	}{
		{"model requests", &agentv1.Budget{ModelRequests: proto.Int64(2)}, agentv1.BudgetLimit_BUDGET_LIMIT_MODEL_REQUESTS, 2, 2},
		// A limit reached by a response leaves its calls unrun.
		{"input tokens are reached by the third response", &agentv1.Budget{InputTokens: proto.Int64(250)}, agentv1.BudgetLimit_BUDGET_LIMIT_INPUT_TOKENS, 3, 2},
		{"output tokens", &agentv1.Budget{OutputTokens: proto.Int64(10)}, agentv1.BudgetLimit_BUDGET_LIMIT_OUTPUT_TOKENS, 1, 0},
		{"tool calls: the call past the limit does not run", &agentv1.Budget{ToolCalls: proto.Int64(1)}, agentv1.BudgetLimit_BUDGET_LIMIT_TOOL_CALLS, 2, 1},
		// 100 input tokens at 1 and 10 output at 10 per million: 0.0002 a round.
		{"cost", &agentv1.Budget{Cost: proto.Float64(0.0005)}, agentv1.BudgetLimit_BUDGET_LIMIT_COST, 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := newSession(t, func(o *agent.Options) {
				o.Tools = pick(t, "add")
				o.Price = func(profile, model string) (agent.Price, bool) {
					return agent.Price{Input: 1, Output: 10}, model == "test-model"
				}
			})
			srv.Handle(func(*fakemodel.Request) fakemodel.Turn { return round })
			var exceeded []*agentv1.BudgetExceededEvent
			res, err := s.Send(context.Background(), agent.SendOptions{
				Input: input("add forever"), Budget: agent.NewBudget(tt.budget, nil),
				OnEvent: func(e *agentv1.Event) {
					if b := e.GetBudgetExceeded(); b != nil {
						exceeded = append(exceeded, b)
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != agentv1.EndReason_END_REASON_BUDGET || len(exceeded) != 1 || exceeded[0].GetLimit() != tt.limit || exceeded[0].GetBudgetRunId() != res.RunID {
				t.Fatalf("reason %v, events %v", res.Reason, exceeded)
			}
			if got := int64(len(srv.Requests())); got != tt.requests || res.TreeUsage.GetModelRequests() != tt.requests || res.TreeUsage.GetToolCalls() != tt.calls {
				t.Errorf("%d requests, usage %v; want %d requests, %d calls", got, res.TreeUsage, tt.requests, tt.calls)
			}
			if res.RunUsage.GetOutputTokens() != 10*tt.requests || res.TreeUsage.GetCost() < 0.0002*float64(tt.requests)-1e-12 {
				t.Errorf("run usage %v", res.RunUsage)
			}
			// The history is whole: every call has its result, so a next send goes on.
			h := s.History()
			if last := h[len(h)-1]; last.GetRole() != agentv1.Role_ROLE_TOOL {
				t.Errorf("history ends with %v", last.GetRole())
			}
		})
	}
}

func TestBudgetWallTimeStopsTheTools(t *testing.T) {
	s, srv := newSession(t, func(o *agent.Options) { o.Tools = pick(t, "sleep") })
	srv.Push(fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "sleep", Arguments: `{"ms":20000}`}}})
	start := time.Now()
	res, err := s.Send(context.Background(), agent.SendOptions{
		Input: input("sleep"), Budget: agent.NewBudget(&agentv1.Budget{WallTime: durationpb.New(300 * time.Millisecond)}, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != agentv1.EndReason_END_REASON_BUDGET || time.Since(start) > 10*time.Second {
		t.Fatalf("reason %v after %v", res.Reason, time.Since(start))
	}
	h := s.History()
	if r := h[len(h)-1].GetParts()[0].GetToolResult(); !r.GetError() || !strings.Contains(r.GetOutput().GetText(), "stopped") {
		t.Errorf("the cut-off call's result: %v", r)
	}
}

func TestBudgetCountsAcrossTheTree(t *testing.T) {
	root := agent.NewBudget(&agentv1.Budget{ModelRequests: proto.Int64(2)}, nil)
	child := agent.NewBudget(nil, root)
	if err := root.StartChild(); err != nil {
		t.Fatal(err)
	}
	s, srv := newSession(t, nil)
	srv.Push(fakemodel.Turn{Text: "one", Usage: &fakemodel.Usage{Input: 5, Output: 1}}, fakemodel.Turn{Text: "two"})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("a"), Budget: child}); err != nil {
		t.Fatal(err)
	}
	run, tree := root.RunUsage()
	if tree.GetModelRequests() != 1 || tree.GetInputTokens() != 5 || tree.GetChildRuns() != 1 || run.GetModelRequests() != 0 {
		t.Fatalf("root: run %v, tree %v", run, tree)
	}
	if err := root.StartChild(); err != nil {
		t.Fatalf("one request is left: %v", err)
	}
	other := agent.NewBudget(nil, root)
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("b"), Budget: other}); err != nil {
		t.Fatal(err)
	}
	err := root.StartChild()
	if be, ok := err.(*agent.BudgetError); !ok || be.Limit != agentv1.BudgetLimit_BUDGET_LIMIT_MODEL_REQUESTS {
		t.Fatalf("a child with no request left: %v", err)
	}
}
