package hostreq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/tool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// sample answers with the run's model, or the profile the server's
// definition names: after asking, when the permission mode asks for the
// calling tool. The request's system prompt replaces the config's; its
// limits override the config's parameters.
func (c *Call) sample(ctx context.Context, req *pluginv1.SampleRequest) (*pluginv1.SampleResponse, error) {
	msgs, err := sampleMessages(req.GetMessages())
	if err != nil {
		return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID, Message: err.Error()}
	}
	if c.Ask != nil {
		args, _ := protojson.Marshal(req)
		allow, reason := c.Ask(ctx, newID(c.ToolCallID, samplingMarker), string(args))
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !allow {
			msg := "the user did not allow the tool to use the model"
			if reason != "" {
				msg += ": " + reason
			}
			return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED, Message: msg}
		}
	}
	cfg, err := c.samplingConfig()
	if err != nil {
		return nil, err
	}
	cfg.System, cfg.Output = req.GetSystemPrompt(), nil
	params := cfg.Provider.Params
	if n := req.GetMaxTokens(); n > 0 {
		m := int(n)
		params.MaxOutputTokens = &m
	}
	if req.Temperature != nil {
		t := req.GetTemperature()
		params.Temperature = &t
	}
	if len(req.GetStopSequences()) > 0 {
		params.Stop = req.GetStopSequences()
	}
	cfg.Provider.Params = params
	out, err := c.Chat(ctx, llm.Request{Config: &cfg, System: cfg.System, Messages: msgs})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if he := (*tool.HostError)(nil); errors.As(err, &he) { // over the budget
			return nil, he
		}
		msg := "the model's request failed: " + err.Error()
		if c.Redact != nil {
			msg = c.Redact(msg)
		}
		return nil, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_FAILED, Message: msg}
	}
	stop := "endTurn"
	if out.FinishReason == "length" {
		stop = "maxTokens"
	}
	return &pluginv1.SampleResponse{Role: "assistant", Model: cfg.Model, StopReason: stop,
		Content: []*pluginv1.ContentPart{{Part: &pluginv1.ContentPart_Text{Text: out.Text}}}}, nil
}

// samplingConfig is a copy of the config that answers the call's sampling
// requests: the profile the server's definition names, else the run's.
func (c *Call) samplingConfig() (llm.Config, error) {
	name, err := mcp.SamplingProfile(c.Source)
	if err != nil {
		return llm.Config{}, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_FAILED, Message: "reading the server's definition for its sampling profile: " + err.Error()}
	}
	if name == "" {
		return *c.Config, nil
	}
	if c.Profile == nil {
		return llm.Config{}, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED, Message: fmt.Sprintf("the server samples with profile %s, and this host has no profiles", name)}
	}
	cfg, err := c.Profile(name)
	if err != nil {
		return llm.Config{}, &tool.HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_FAILED, Message: fmt.Sprintf("the server's sampling profile %s: %v", name, err)}
	}
	return *cfg, nil
}

// sampleMessages turns a sampling request's messages into history
// messages: text, images and files.
func sampleMessages(in []*pluginv1.SampleMessage) ([]*agentv1.Message, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("a sampling request needs at least one message")
	}
	out := make([]*agentv1.Message, 0, len(in))
	for i, m := range in {
		var parts []*agentv1.Part
		for _, c := range m.GetContent() {
			switch p := c.GetPart().(type) {
			case *pluginv1.ContentPart_Text:
				parts = append(parts, history.Text(p.Text))
			case *pluginv1.ContentPart_File:
				f := &agentv1.FilePart{MediaType: p.File.GetMediaType(), Filename: p.File.GetFilename()}
				if u := p.File.GetUrl(); u != "" {
					f.Source = &agentv1.FilePart_Url{Url: u}
				} else {
					f.Source = &agentv1.FilePart_Data{Data: p.File.GetData()}
				}
				if strings.HasPrefix(f.GetMediaType(), "image/") {
					parts = append(parts, history.Image(f))
				} else {
					parts = append(parts, history.File(f))
				}
			}
		}
		switch m.GetRole() {
		case "user":
			out = append(out, history.UserParts(parts...))
		case "assistant":
			out = append(out, history.Assistant(parts...))
		default:
			return nil, fmt.Errorf("message %d: role %q is neither user nor assistant", i, m.GetRole())
		}
	}
	return out, nil
}
