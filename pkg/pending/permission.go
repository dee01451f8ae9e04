package pending

import (
	"context"

	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/store"
)

// AnswerPermission answers a run's permission request (RespondPermission,
// or an answer on the run's stream) and hands the answer to the run.
// Requests of the other kinds are not found by it.
func (r *Requests) AnswerPermission(ctx context.Context, run, call string, allow bool, reason string) error {
	if hostreq.IsElicitation(call) {
		return apierr.Answer(store.ErrNotFound, run, call)
	}
	if err := r.replica.Answer(ctx, run, call, allow, reason); err != nil {
		return apierr.Answer(err, run, call)
	}
	return nil
}
