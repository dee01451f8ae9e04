package pending

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// An elicitation request is kept as a permission request whose call id is
// the elicitation's id and whose arguments are its event; its answer as
// the decision's Allow (accepted) and Reason (the answer, elicitAnswer).

// elicitAnswer is the stored form of an elicitation's answer.
type elicitAnswer struct {
	Action   string          `json:"action"`
	Content  json.RawMessage `json:"content,omitempty"`
	TimedOut bool            `json:"timed_out,omitempty"`
}

// encodeElicitation returns the stored form of an answer: the Allow and
// Reason of its decision.
func encodeElicitation(a hostreq.ElicitationAnswer) (allow bool, reason string, err error) {
	w := elicitAnswer{Action: a.Action.String(), TimedOut: a.TimedOut}
	accept := a.Action == agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT
	if accept && a.Content != nil {
		if w.Content, err = protojson.Marshal(a.Content); err != nil {
			return false, "", err
		}
	}
	b, err := json.Marshal(w)
	return accept, string(b), err
}

// decodeElicitation reads a stored answer; anything else is a cancel.
func decodeElicitation(d agent.Decision) hostreq.ElicitationAnswer {
	cancel := hostreq.ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL}
	var w elicitAnswer
	if json.Unmarshal([]byte(d.Reason), &w) != nil {
		return cancel
	}
	a := hostreq.ElicitationAnswer{Action: agentv1.ElicitationAction(agentv1.ElicitationAction_value[w.Action]), TimedOut: w.TimedOut}
	if a.Action == agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT {
		a.Content = &structpb.Struct{}
		if len(w.Content) > 0 && protojson.Unmarshal(w.Content, a.Content) != nil {
			return cancel
		}
	}
	if a.Action == agentv1.ElicitationAction_ELICITATION_ACTION_UNSPECIFIED {
		return cancel
	}
	return a
}

// Elicit is the engine's elicitation hook (agent.SendOptions.OnElicit): it
// waits for RespondElicitation on any replica, or the permission timeout,
// which cancels the request.
func (r *Requests) Elicit(ctx context.Context, req hostreq.ElicitationRequest) hostreq.ElicitationAnswer {
	_, timedOut, _ := encodeElicitation(hostreq.ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL, TimedOut: true})
	d, ok := r.replica.Await(ctx, req.RunID, req.ID, timedOut)
	if !ok {
		return hostreq.ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL}
	}
	a := decodeElicitation(d)
	if a.TimedOut {
		r.log.Info("elicitation not answered within the permission timeout: cancelled", "run", req.RunID, "elicitation", req.ID)
	}
	return a
}

// RespondElicitation answers a run's elicitation request: the content of
// an accepting answer gets the schema's defaults and is checked against
// it. found checks that the run is one the caller may answer.
func (r *Requests) RespondElicitation(ctx context.Context, req *agentv1.RespondElicitationRequest, found func(ctx context.Context, run string) error) (*agentv1.RespondElicitationResponse, error) {
	var vs []apierr.Violation
	if req.GetRunId() == "" {
		vs = append(vs, apierr.Violation{Field: "run_id", Description: "required"})
	}
	if req.GetElicitationId() == "" {
		vs = append(vs, apierr.Violation{Field: "elicitation_id", Description: "required"})
	}
	accept := req.GetAction() == agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT
	switch req.GetAction() {
	case agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT, agentv1.ElicitationAction_ELICITATION_ACTION_DECLINE, agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL:
	default:
		vs = append(vs, apierr.Violation{Field: "action", Description: "required: ACCEPT, DECLINE or CANCEL"})
	}
	if !accept && len(req.GetContent().GetFields()) > 0 {
		vs = append(vs, apierr.Violation{Field: "content", Description: "only an ACCEPT carries content"})
	}
	if len(vs) > 0 {
		return nil, apierr.Invalid(vs...)
	}
	run, id := req.GetRunId(), req.GetElicitationId()
	if err := found(ctx, run); err != nil {
		return nil, err
	}
	if !hostreq.IsElicitation(id) {
		return nil, elicitationStatus(store.ErrNotFound, run, id)
	}
	p, err := r.find(ctx, run, id)
	if err != nil {
		return nil, elicitationStatus(err, run, id)
	}
	asked := storedElicitation(p)
	if asked == nil {
		return nil, elicitationStatus(store.ErrNotFound, run, id)
	}
	a := hostreq.ElicitationAnswer{Action: req.GetAction()}
	if accept {
		if a.Content, err = elicitedContent(asked.GetRequestedSchema(), req.GetContent()); err != nil {
			return nil, apierr.InvalidField("content", "%v", err)
		}
	}
	allow, reason, err := encodeElicitation(a)
	if err != nil {
		return nil, apierr.InvalidField("content", "%v", err)
	}
	if err := r.replica.Answer(ctx, run, id, allow, reason); err != nil {
		return nil, elicitationStatus(err, run, id)
	}
	return &agentv1.RespondElicitationResponse{Content: a.Content}, nil
}

// storedElicitation is the request p keeps, or nil when it cannot be read.
func storedElicitation(p *store.Permission) *agentv1.ElicitationRequestEvent {
	e := &agentv1.ElicitationRequestEvent{}
	if protojson.Unmarshal([]byte(p.Arguments), e) != nil {
		return nil
	}
	return e
}

// elicitedContent is content with the schema's defaults filled into the
// fields it leaves out (SEP-1034), checked against the schema.
func elicitedContent(schema, content *structpb.Struct) (*structpb.Struct, error) {
	out := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for k, v := range content.GetFields() {
		out.Fields[k] = v
	}
	for name, prop := range schema.GetFields()["properties"].GetStructValue().GetFields() {
		if def, ok := prop.GetStructValue().GetFields()["default"]; ok {
			if _, set := out.Fields[name]; !set {
				out.Fields[name] = def
			}
		}
	}
	const url = "urn:agentcore:elicitation"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, schema.AsMap()); err != nil {
		return out, nil // a schema this validator cannot read: the tool checks what it gets
	}
	sch, err := c.Compile(url)
	if err != nil {
		return out, nil
	}
	if err := sch.Validate(out.AsMap()); err != nil {
		return nil, fmt.Errorf("does not match the requested schema: %w", err)
	}
	return out, nil
}

// elicitationStatus maps the store's refusal of an answer to elicitation
// request id of run run to a status.
func elicitationStatus(err error, run, id string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_ELICITATION_NOT_FOUND, "run %q has no elicitation request %q", run, id)
	case errors.Is(err, store.ErrConflict):
		return apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_ELICITATION_ANSWERED,
			"the elicitation request %q of run %q was answered already (or cancelled for want of an answer), or its run ended", id, run)
	}
	return apierr.Store(err)
}
