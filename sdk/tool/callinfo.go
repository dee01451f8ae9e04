package tool

import "context"

// Call describes the call a handler runs, as the host sent it.
type Call struct {
	// ID is the model's tool-call id; may be empty.
	ID string
	// IdempotencyKey is the same for every execution of this call, also
	// when agent-server runs it again after a crash cut it off ("RUN/CALL").
	// A tool with side effects keeps the keys it acted on and answers a key
	// it has seen with its first result, so that its effect happens once.
	// Empty outside a run (toolhost, a test).
	IdempotencyKey string
	// Attempt is 1 for a call's first execution and 2 or more when
	// agent-server runs it again after a crash (an earlier execution may or
	// may not have had its effect); 0 outside a run.
	Attempt int
}

type callInfoKey struct{}

// CallInfo returns the call a handler's ctx belongs to (the zero Call
// outside a handler).
func CallInfo(ctx context.Context) Call {
	c, _ := ctx.Value(callInfoKey{}).(Call)
	return c
}
