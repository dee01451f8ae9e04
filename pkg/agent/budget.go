package agent

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Budget counts what one run spends (tokens, model requests, tool calls,
// wall time, cost, child runs) and holds the limits set for it. The budget
// of a child run has its parent run's as parent, so every limit counts what
// the whole subtree under its run spent: a send's budget is a budget of
// the run tree it roots. The nodes of one tree share one lock, so that
// parallel runs of the tree never both take the last model request.
//
// A run checks its budget and every ancestor's: before each model round
// (tokens, cost and requests already reached end it), before each tool call
// (once any limit is reached, calls are not run: each gets a failed result
// saying so, and the run ends after the round), and
// its context ends when the earliest wall time of the chain passes. A run
// that reaches a limit ends normally, with END_REASON_BUDGET and a
// BudgetExceededEvent naming the limit; its history stays whole.
type Budget struct {
	mu     *sync.Mutex // the tree's
	parent *Budget
	limits *agentv1.Budget // nil: none

	// Guarded by mu.
	runID     string
	start     time.Time
	own, tree spend
}

// spend is what a run (own) or its subtree (tree) spent.
type spend struct {
	in, out, requests, calls, children int64
	cost                               float64
}

// Price is what a model's tokens cost, in a currency per million tokens.
type Price struct {
	Input, Output float64
}

// NewBudget returns the budget of a run: limits (nil or empty: none of its
// own) under parent's (nil for a root run).
func NewBudget(limits *agentv1.Budget, parent *Budget) *Budget {
	b := &Budget{parent: parent, limits: limits}
	if parent != nil {
		b.mu = parent.mu
	} else {
		b.mu = &sync.Mutex{}
	}
	return b
}

// BudgetError says which limit a run tree reached. A run ending for it is
// not an error (END_REASON_BUDGET); a child run refused for it is.
type BudgetError struct {
	Limit agentv1.BudgetLimit
	// RunID is the run whose budget holds the limit.
	RunID string
	// Max is the limit, Used what its tree used (tokens, requests, calls,
	// seconds or currency).
	Max, Used float64
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the budget of run %s is spent: %s %s of %s", e.RunID, limitName(e.Limit),
		strconv.FormatFloat(e.Used, 'g', -1, 64), strconv.FormatFloat(e.Max, 'g', -1, 64))
}

// Proto is the error as the event a run emits when it ends for it.
func (e *BudgetError) Proto() *agentv1.BudgetExceededEvent {
	return &agentv1.BudgetExceededEvent{Limit: e.Limit, BudgetRunId: e.RunID, Max: e.Max, Used: e.Used}
}

// limitName is a limit as the errors and results name it: "model requests".
func limitName(l agentv1.BudgetLimit) string {
	switch l {
	case agentv1.BudgetLimit_BUDGET_LIMIT_INPUT_TOKENS:
		return "input tokens"
	case agentv1.BudgetLimit_BUDGET_LIMIT_OUTPUT_TOKENS:
		return "output tokens"
	case agentv1.BudgetLimit_BUDGET_LIMIT_MODEL_REQUESTS:
		return "model requests"
	case agentv1.BudgetLimit_BUDGET_LIMIT_TOOL_CALLS:
		return "tool calls"
	case agentv1.BudgetLimit_BUDGET_LIMIT_WALL_TIME:
		return "wall time (seconds)"
	case agentv1.BudgetLimit_BUDGET_LIMIT_COST:
		return "cost"
	}
	return "limit"
}

// bind makes b the budget of run id, starting now (once).
func (b *Budget) bind(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runID == "" {
		b.runID, b.start = id, time.Now()
	}
}

// reached returns the first limit of the chain the tree already reached,
// counting next more model requests and tool calls. Called with mu held.
func (b *Budget) reached(requests, calls int64) *BudgetError {
	now := time.Now()
	for n := b; n != nil; n = n.parent {
		l := n.limits
		if l == nil {
			continue
		}
		t := n.tree
		check := []struct {
			set       bool
			limit     agentv1.BudgetLimit
			used, max float64
		}{
			{l.InputTokens != nil, agentv1.BudgetLimit_BUDGET_LIMIT_INPUT_TOKENS, float64(t.in), float64(l.GetInputTokens())},
			{l.OutputTokens != nil, agentv1.BudgetLimit_BUDGET_LIMIT_OUTPUT_TOKENS, float64(t.out), float64(l.GetOutputTokens())},
			{l.Cost != nil, agentv1.BudgetLimit_BUDGET_LIMIT_COST, t.cost, l.GetCost()},
			{l.ModelRequests != nil && requests > 0, agentv1.BudgetLimit_BUDGET_LIMIT_MODEL_REQUESTS, float64(t.requests + requests - 1), float64(l.GetModelRequests())},
			{l.ToolCalls != nil && calls > 0, agentv1.BudgetLimit_BUDGET_LIMIT_TOOL_CALLS, float64(t.calls + calls - 1), float64(l.GetToolCalls())},
			{l.WallTime != nil && !n.start.IsZero(), agentv1.BudgetLimit_BUDGET_LIMIT_WALL_TIME, now.Sub(n.start).Seconds(), l.GetWallTime().AsDuration().Seconds()},
		}
		for _, c := range check {
			if c.set && c.used >= c.max {
				return &BudgetError{Limit: c.limit, RunID: n.runID, Max: c.max, Used: c.used}
			}
		}
	}
	return nil
}

// take counts one more model request (or tool call) unless the chain
// reached a limit, which it returns.
func (b *Budget) take(request bool) *BudgetError {
	b.mu.Lock()
	defer b.mu.Unlock()
	var rq, calls int64
	if request {
		rq = 1
	} else {
		calls = 1
	}
	if e := b.reached(rq, calls); e != nil {
		return e
	}
	b.add(func(s *spend) { s.requests += rq; s.calls += calls })
	return nil
}

// add applies f to b's own spend and to the tree spend of b and every
// ancestor. Called with mu held.
func (b *Budget) add(f func(*spend)) {
	f(&b.own)
	for n := b; n != nil; n = n.parent {
		f(&n.tree)
	}
}

// spent counts a model response's tokens and their cost at price.
func (b *Budget) spent(u *agentv1.Usage, price Price) {
	in, out := u.GetInputTokens(), u.GetOutputTokens()
	cost := (float64(in)*price.Input + float64(out)*price.Output) / 1e6
	b.mu.Lock()
	defer b.mu.Unlock()
	b.add(func(s *spend) { s.in += in; s.out += out; s.cost += cost })
}

// StartChild counts a child run about to start under b's run, unless the
// tree has nothing left for it: a limit reached already, or no model
// request left (a child asks the model at least once). The error is a
// *BudgetError; the child must then not start.
func (b *Budget) StartChild() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.reached(1, 0); e != nil {
		return e
	}
	b.own.children++
	for n := b; n != nil; n = n.parent {
		n.tree.children++
	}
	return nil
}

// deadline is when the earliest wall time of the chain passes, with the
// error it ends the run with; zero when none is set.
func (b *Budget) deadline() (time.Time, *BudgetError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var at time.Time
	var why *BudgetError
	for n := b; n != nil; n = n.parent {
		if w := n.limits.GetWallTime(); w != nil && !n.start.IsZero() {
			if t := n.start.Add(w.AsDuration()); at.IsZero() || t.Before(at) {
				at = t
				why = &BudgetError{Limit: agentv1.BudgetLimit_BUDGET_LIMIT_WALL_TIME, RunID: n.runID,
					Max: w.AsDuration().Seconds(), Used: w.AsDuration().Seconds()}
			}
		}
	}
	return at, why
}

// Child reports whether b is the budget of a child run.
func (b *Budget) Child() bool { return b.parent != nil }

// RunUsage returns what b's run spent itself, and what it spent with its
// descendants.
func (b *Budget) RunUsage() (run, tree *agentv1.RunUsage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var wall time.Duration
	if !b.start.IsZero() {
		wall = time.Since(b.start)
	}
	return b.own.proto(wall), b.tree.proto(wall)
}

func (s spend) proto(wall time.Duration) *agentv1.RunUsage {
	return &agentv1.RunUsage{InputTokens: s.in, OutputTokens: s.out, ModelRequests: s.requests, ToolCalls: s.calls,
		Cost: s.cost, ChildRuns: s.children, WallTime: durationpb.New(wall)}
}

// Limited reports whether l sets any limit.
func Limited(l *agentv1.Budget) bool {
	return l != nil && (l.InputTokens != nil || l.OutputTokens != nil || l.ModelRequests != nil || l.ToolCalls != nil ||
		l.WallTime != nil || l.Cost != nil)
}
