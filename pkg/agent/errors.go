package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Causes of a run that ended early. A Send or Compact that ends for one of
// them returns an *llm.Error of kind aborted wrapping it, so errors.Is finds
// it and the server maps every abort the same way.
var (
	// ErrStopped: Stop was called.
	ErrStopped = errors.New("the run was stopped")
	// ErrReplaced: a newer Send or a Compact took over the session.
	ErrReplaced = errors.New("the run was replaced by a newer request to the same agent")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("the agent was closed")
)

// ErrBusy is returned when the session is running and the request cannot
// wait: a Send with the reject policy, or SetHistory during a run.
var ErrBusy = errors.New("the agent is running")

// ErrNothingToCompact is returned by Compact when no message follows the
// latest summary (or the history is empty): a summary would add nothing.
var ErrNothingToCompact = errors.New("nothing to compact: no message follows the latest summary")

// FieldViolation names one bad field of a request, in the shape of a
// google.rpc.BadRequest field violation.
type FieldViolation struct {
	// Field is the path of the field, named as in the proto request that
	// carries it: "input", "input[1].image", "config.max_steps",
	// "history.messages[3].parts[0].tool_call.arguments" (Send);
	// "history[3]…" (New, SetHistory); "agent_id".
	Field string
	// Description says what is wrong. It never repeats a secret.
	Description string
}

// ValidationError is a request the engine rejects before any model request:
// an invalid config, empty or malformed input, a malformed history. The
// server turns it into INVALID_ARGUMENT with a BadRequest listing
// Violations.
type ValidationError struct {
	Violations []FieldViolation
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Field + ": " + v.Description
	}
	return "invalid argument: " + strings.Join(parts, "; ")
}

// violations collects field violations.
type violations []FieldViolation

func (v *violations) add(field, format string, args ...any) {
	*v = append(*v, FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// addErr adds the violations of a config or history error, its history
// paths under prefix; other errors are returned.
func (v *violations) addErr(err error, prefix string) error {
	if err == nil {
		return nil // before the targets, which escape to the heap: three allocations a send
	}
	var ce *llm.ConfigError
	var he *history.ValidationError
	var ve *ValidationError
	switch {
	case errors.As(err, &ce):
		for _, f := range ce.Violations {
			*v = append(*v, FieldViolation{Field: f.Field, Description: f.Description})
		}
	case errors.As(err, &he):
		for _, h := range he.Violations {
			*v = append(*v, FieldViolation{Field: h.Path(prefix), Description: h.Description})
		}
	case errors.As(err, &ve):
		*v = append(*v, ve.Violations...)
	default:
		return err
	}
	return nil
}

// input adds the problems of a user message made of input parts, named
// "input[i]…".
func (v *violations) input(m *agentv1.Message) {
	var he *history.ValidationError
	if errors.As(history.Validate([]*agentv1.Message{m}), &he) {
		for _, hv := range he.Violations {
			v.add("input"+strings.TrimPrefix(hv.Field, "parts"), "%s", hv.Description)
		}
	}
}

func (v violations) err() error {
	if len(v) == 0 {
		return nil
	}
	return &ValidationError{Violations: v}
}

// aborted is the error of a run whose context ended: the model layer's
// aborted kind (timeout when the caller's deadline passed), wrapping the
// cause.
func aborted(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = context.Canceled
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &llm.Error{Kind: llm.KindTimeout, Message: "the caller's deadline passed", Err: cause}
	}
	return abortError(cause)
}

// abortError is an aborted model-layer error wrapping cause.
func abortError(cause error) error {
	return &llm.Error{Kind: llm.KindAborted, Message: cause.Error(), Err: cause}
}
