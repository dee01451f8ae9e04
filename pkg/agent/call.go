package agent

import (
	"context"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Call is what the engine tells a tool about the call it runs, through the
// call's context (CallFrom). An in-process tool of a layer above uses it to
// take part in the run: the server's agent tool starts a child run under
// the calling run, within its budget, and puts the child's events into the
// calling run's stream.
type Call struct {
	// AgentID and RunID name the calling run; ToolCallID is the model's id
	// of the call; Step its round.
	AgentID, RunID, ToolCallID string
	Step                       int
	// Budget is the calling run's budget (never nil).
	Budget *Budget
	emit   *emitter
}

// Emit puts an event of a child run into the calling run's stream,
// numbered with the run's own events. It must not be called after the
// tool call returned.
func (c *Call) Emit(ev *agentv1.ChildRunEvent) {
	c.emit.emit(&agentv1.Event{Kind: &agentv1.Event_Child{Child: ev}})
}

type callKey struct{}

// CallFrom returns the call a tool's context belongs to, or nil outside a
// run's tool call (e.g. ExecuteTool).
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

func withCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}
