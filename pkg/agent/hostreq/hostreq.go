// Package hostreq answers what a tool call of a run asks its host while it
// runs (tool.HostHandler): the person behind the run (an elicitation, an
// event on the run's stream answered from outside), or the run's model
// (sampling, under the run's permission mode and budget).
package hostreq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The id of a request the run makes on a call's behalf is the call's id, a
// marker of its kind and a random part (a call run again after a crash
// asks anew, never finding the answer its first execution got). The
// markers are safe in a URL's path, where HTTP clients answer them.
const (
	elicitMarker   = "~elicit-"
	samplingMarker = "~sample-"
)

// IsElicitation reports whether id names an elicitation request (an
// ElicitationRequestEvent's elicitation_id), not a tool call's permission
// request.
func IsElicitation(id string) bool { return strings.Contains(id, elicitMarker) }

// newID returns the id of a request of call callID of the kind marker.
func newID(callID, marker string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return callID + marker + hex.EncodeToString(b[:])
}

// ElicitationRequest is a tool call's request for input from the person
// behind the run. The run has just emitted its ElicitationRequestEvent.
type ElicitationRequest struct {
	RunID, ToolCallID, ToolName string
	// ID is the request's elicitation_id, the one to answer.
	ID      string
	Message string
	// Schema is the form's JSON Schema.
	Schema *structpb.Struct
}

// ElicitationAnswer answers an ElicitationRequest.
type ElicitationAnswer struct {
	Action agentv1.ElicitationAction
	// Content is the accepted form (ACCEPT only).
	Content *structpb.Struct
	// TimedOut says no one answered in time (Action is CANCEL).
	TimedOut bool
}

// ElicitFunc waits for the answer to an elicitation request. It is called
// on the tool call's goroutines (a call may ask several at once) and must
// return once ctx is done.
type ElicitFunc func(ctx context.Context, req ElicitationRequest) ElicitationAnswer

// CredentialFunc answers an MCP host process's request for its server's
// OAuth credential (tool.HostHandler.Credential).
type CredentialFunc = func(ctx context.Context, source string, req *pluginv1.CredentialRequest) (*pluginv1.CredentialResponse, error)

// Call is a tool call of a run, and what of the run answers its requests.
type Call struct {
	RunID, ToolCallID, ToolName string
	// Emit puts an event on the run's stream.
	Emit func(*agentv1.Event)
	// OnElicit answers elicitation requests; nil: no one can.
	OnElicit ElicitFunc
	// Ask asks permission for a sampling request (id, the request as JSON)
	// and waits for the answer; nil when the run's permission mode lets the
	// tool sample without asking.
	Ask func(ctx context.Context, id, args string) (allow bool, reason string)
	// Config is the run's model config; a sampling request overrides its
	// system prompt and generation parameters in a copy.
	Config *llm.Config
	// Chat asks the model of req.Config within the run's budget (refused
	// with a *tool.HostError) and counts the response's usage in the run's.
	Chat func(ctx context.Context, req llm.Request) (*llm.Result, error)
	// Source is the calling tool's (tool.Spec.Source): an MCP server's
	// definition may name the profile that answers its sampling requests.
	Source string
	// Profile resolves a profile's model config as the run's own would be
	// (the tenant's rights checked); nil: no profiles here.
	Profile func(name string) (*llm.Config, error)
	// Redact hides secrets in a model error's message (nil: none).
	Redact func(string) string
	// Credential answers credential requests; nil: refused.
	Credential CredentialFunc
}

// Handler returns what answers the call's host requests.
func (c *Call) Handler() *tool.HostHandler {
	return &tool.HostHandler{Elicit: c.elicit, Sample: c.sample, Credential: c.Credential}
}

// elicit asks the person behind the run, through OnElicit, with an
// ElicitationRequestEvent before and an ElicitationResultEvent after; the
// answer's content goes to the tool only.
func (c *Call) elicit(ctx context.Context, req *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error) {
	if c.OnElicit == nil {
		return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED, Message: "this run has no one to answer an elicitation"}
	}
	schema := &structpb.Struct{}
	if s := req.GetRequestedSchemaJson(); s != "" {
		if err := protojson.Unmarshal([]byte(s), schema); err != nil {
			return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID, Message: fmt.Sprintf("the requested schema is not a JSON object: %v", err)}
		}
	}
	id := newID(c.ToolCallID, elicitMarker)
	c.Emit(&agentv1.Event{Kind: &agentv1.Event_ElicitationRequest{ElicitationRequest: &agentv1.ElicitationRequestEvent{
		ElicitationId: id, ToolCallId: c.ToolCallID, ToolName: c.ToolName, Message: req.GetMessage(), RequestedSchema: schema,
	}}})
	a := c.OnElicit(ctx, ElicitationRequest{RunID: c.RunID, ToolCallID: c.ToolCallID, ToolName: c.ToolName, ID: id, Message: req.GetMessage(), Schema: schema})
	if ctx.Err() != nil || a.Action == agentv1.ElicitationAction_ELICITATION_ACTION_UNSPECIFIED {
		a = ElicitationAnswer{Action: agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL, TimedOut: a.TimedOut && ctx.Err() == nil}
	}
	c.Emit(&agentv1.Event{Kind: &agentv1.Event_ElicitationResult{ElicitationResult: &agentv1.ElicitationResultEvent{
		ElicitationId: id, Action: a.Action, TimedOut: a.TimedOut,
	}}})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return elicitResponse(a)
}

// elicitResponse is the plugin protocol's form of an answer.
func elicitResponse(a ElicitationAnswer) (*pluginv1.ElicitResponse, error) {
	res := &pluginv1.ElicitResponse{}
	switch a.Action {
	case agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT:
		res.Action, res.ContentJson = pluginv1.ElicitAction_ELICIT_ACTION_ACCEPT, "{}"
		if a.Content != nil {
			b, err := protojson.Marshal(a.Content)
			if err != nil {
				return nil, err
			}
			res.ContentJson = string(b)
		}
	case agentv1.ElicitationAction_ELICITATION_ACTION_DECLINE:
		res.Action = pluginv1.ElicitAction_ELICIT_ACTION_DECLINE
	default:
		res.Action = pluginv1.ElicitAction_ELICIT_ACTION_CANCEL
	}
	return res, nil
}
