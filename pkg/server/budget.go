package server

import (
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// checkBudget checks a budget's limits (field is where it sits): counts
// not negative, a wall time positive.
func checkBudget(b *agentv1.Budget, field string) error {
	if b == nil {
		return nil
	}
	var vs []Violation
	for _, c := range []struct {
		name string
		set  bool
		v    float64
	}{
		{"input_tokens", b.InputTokens != nil, float64(b.GetInputTokens())},
		{"output_tokens", b.OutputTokens != nil, float64(b.GetOutputTokens())},
		{"model_requests", b.ModelRequests != nil, float64(b.GetModelRequests())},
		{"tool_calls", b.ToolCalls != nil, float64(b.GetToolCalls())},
		{"cost", b.Cost != nil, b.GetCost()},
	} {
		if c.set && c.v < 0 {
			vs = append(vs, Violation{Field: field + "." + c.name, Description: "must not be negative"})
		}
	}
	if w := b.GetWallTime(); w != nil && (w.CheckValid() != nil || w.AsDuration() <= 0) {
		vs = append(vs, Violation{Field: field + ".wall_time", Description: "must be a positive duration"})
	}
	if len(vs) > 0 {
		return invalid(vs...)
	}
	return nil
}

// rootBudget is the budget of a root run: the send's limits, else the
// agent's, else the tenant's.
func rootBudget(send *agentv1.Budget, sess *session, t *auth.Tenant) *agent.Budget {
	limits := send
	if !agent.Limited(limits) {
		sess.mu.Lock()
		limits = sess.budget
		sess.mu.Unlock()
	}
	if !agent.Limited(limits) && t != nil {
		limits = t.Budget
	}
	return agent.NewBudget(limits, nil)
}

// price is the sessions' agent.Options.Price: the server's prices by
// profile and model.
func (s *Server) price(profile, model string) (agent.Price, bool) {
	p, ok := s.cfg.Profile(profile)
	if !ok {
		return agent.Price{}, false
	}
	pr, ok := p.Price(model)
	return agent.Price{Input: pr.Input, Output: pr.Output}, ok
}
