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
