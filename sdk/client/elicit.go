package client

import (
	"context"
	"sync"

	"google.golang.org/protobuf/types/known/structpb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Elicited answers an elicitation request (a tool asking the person behind
// the run for input).
type Elicited struct {
	Action agentv1.ElicitationAction
	// Content is the form's values (Accept only); fields left out get the
	// schema's defaults.
	Content map[string]any
}

// Accept returns the answer that submits the form with content.
func Accept(content map[string]any) Elicited {
	return Elicited{Action: agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT, Content: content}
}

// DeclineElicitation returns the answer that refuses the request.
func DeclineElicitation() Elicited {
	return Elicited{Action: agentv1.ElicitationAction_ELICITATION_ACTION_DECLINE}
}

// CancelElicitation returns the answer that dismisses the request.
func CancelElicitation() Elicited {
	return Elicited{Action: agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL}
}

// RespondElicitation answers a run's elicitation request from any
// connection; it returns the values the tool got (with Accept: content
// with the schema's defaults filled in).
func (c *Client) RespondElicitation(ctx context.Context, runID, elicitationID string, e Elicited) (map[string]any, error) {
	req := &agentv1.RespondElicitationRequest{RunId: runID, ElicitationId: elicitationID, Action: e.Action}
	if e.Content != nil {
		s, err := structpb.NewStruct(e.Content)
		if err != nil {
			return nil, &Error{Message: "elicitation content: " + err.Error()}
		}
		req.Content = s
	}
	resp, err := c.api.RespondElicitation(ctx, req)
	if err != nil {
		return nil, asError(err)
	}
	return resp.GetContent().AsMap(), nil
}

// elicit hands an event's elicitation request (the run's own or a child
// run's) to cb.OnElicitation on a goroutine of asks, and sends its answer
// with RespondElicitation unless ctx ended first (the request then waits
// for another answer, or the server's permission timeout).
func (c *Client) elicit(ctx context.Context, asks *sync.WaitGroup, cb *Callbacks, e *agentv1.Event) {
	run, req := e.GetRunId(), e.GetElicitationRequest()
	if ch := e.GetChild(); ch != nil && ch.GetEvent().GetElicitationRequest() != nil {
		run, req = ch.GetRunId(), ch.GetEvent().GetElicitationRequest()
	}
	if req == nil || cb.OnElicitation == nil {
		return
	}
	answer := cb.OnElicitation
	asks.Go(func() {
		e := answer(ctx, req)
		if ctx.Err() != nil {
			return
		}
		// An answer given already (elsewhere, or before a reconnection) is refused: fine.
		_, _ = c.RespondElicitation(ctx, run, req.GetElicitationId(), e)
	})
}
