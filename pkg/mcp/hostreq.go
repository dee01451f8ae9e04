//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 (SEP-2577), but servers of the versions before still sample, during the twelve months of deprecation at least.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	"github.com/agentcore/agentcore/sdk/tool"
)

// A server's elicitation/create and sampling/createMessage during a call
// go to the plugin's host (sdk/tool's Elicit and Sample on the running
// call's context): agent-server asks the person behind the run, or its
// model. Outside a call, or through a host that answers none, they fail.

// errNoCall answers a server's request that came while no call ran on its
// connection: there is no run to ask.
var errNoCall = errors.New("no tool call is running on this connection, so there is no one to ask")

// callContext returns the running call's context, ending also when the
// server's request is cancelled, or an error when no call runs.
func (s *sink) callContext(req context.Context) (context.Context, context.CancelFunc, error) {
	s.mu.Lock()
	call := s.call
	s.mu.Unlock()
	if call == nil {
		return nil, nil, errNoCall
	}
	ctx, cancel := context.WithCancel(call)
	stop := context.AfterFunc(req, cancel)
	return ctx, func() { stop(); cancel() }, nil
}

// elicit answers a server's elicitation/create with the host's answer.
func (s *sink) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	if p.Mode != "" && p.Mode != "form" {
		return nil, fmt.Errorf("elicitation mode %q is not supported (only form)", p.Mode)
	}
	schema := []byte(`{"type":"object","properties":{}}`)
	if p.RequestedSchema != nil {
		var err error
		if schema, err = json.Marshal(p.RequestedSchema); err != nil {
			return nil, fmt.Errorf("requested schema: %w", err)
		}
	}
	ctx, cancel, err := s.callContext(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	e, err := tool.Elicit(ctx, p.Message, schema)
	if err != nil {
		return nil, err
	}
	switch e.Action {
	case pluginv1.ElicitAction_ELICIT_ACTION_ACCEPT:
		content := map[string]any{} // never nil: the SDK applies the schema's defaults to it
		if len(e.Content) > 0 {
			if err := json.Unmarshal(e.Content, &content); err != nil {
				return nil, fmt.Errorf("the host's answer is not a JSON object: %w", err)
			}
		}
		return &sdk.ElicitResult{Action: "accept", Content: content}, nil
	case pluginv1.ElicitAction_ELICIT_ACTION_DECLINE:
		return &sdk.ElicitResult{Action: "decline"}, nil
	default:
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
}

// sample answers a server's sampling/createMessage with the host's model.
func (s *sink) sample(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	p := req.Params
	sr := &pluginv1.SampleRequest{SystemPrompt: p.SystemPrompt, MaxTokens: uint32(max(min(p.MaxTokens, 1<<31), 0)), StopSequences: p.StopSequences}
	if p.Temperature != 0 {
		sr.Temperature = &p.Temperature
	}
	if mp := p.ModelPreferences; mp != nil {
		for _, h := range mp.Hints {
			if h != nil && h.Name != "" {
				sr.ModelHints = append(sr.ModelHints, h.Name)
			}
		}
	}
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		sr.Messages = append(sr.Messages, &pluginv1.SampleMessage{Role: string(m.Role), Content: contentParts([]sdk.Content{m.Content})})
	}
	ctx, cancel, err := s.callContext(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	res, err := tool.Sample(ctx, sr)
	if err != nil {
		return nil, err
	}
	out := &sdk.CreateMessageResult{Model: res.GetModel(), Role: "assistant", StopReason: res.GetStopReason()}
	var text string
	for _, c := range res.GetContent() {
		text += c.GetText()
	}
	out.Content = &sdk.TextContent{Text: text}
	return out, nil
}
