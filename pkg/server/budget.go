package server

import (
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

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
