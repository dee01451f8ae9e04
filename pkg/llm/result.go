package llm

import (
	"encoding/json"
	"strings"

	"github.com/cloudwego/eino/schema"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/texttool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// result turns the response message into a Result.
func (c *Client) result(cfg *Config, tools []Tool, msg *schema.Message, text, readText bool) (*Result, error) {
	res := &Result{Reasoning: msg.ReasoningContent, TextProtocol: text}
	res.ResponseModel, _ = msg.Extra[provider.ExtraResponseModel].(string)
	if msg.ResponseMeta != nil {
		res.FinishReason = msg.ResponseMeta.FinishReason
	}
	res.Usage = usageOf(msg)
	var parts []*agentv1.Part
	data := provider.StringMap(msg.Extra[provider.ExtraReasoningData])
	if msg.ReasoningContent != "" || len(data) > 0 {
		parts = append(parts, &agentv1.Part{Kind: &agentv1.Part_Reasoning{Reasoning: &agentv1.ReasoningPart{Text: msg.ReasoningContent, ProviderData: data}}})
	}
	var calls []*agentv1.Part
	for _, tc := range msg.ToolCalls {
		part := &agentv1.ToolCallPart{Id: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if part.Id == "" {
			part.Id = c.newID()
		}
		if d := provider.StringMap(tc.Extra[provider.ExtraToolCallData]); len(d) > 0 {
			part.ProviderData = copyMap(d)
		}
		if strings.TrimSpace(part.Arguments) == "" {
			part.Arguments = "{}"
		}
		if problem := argumentsProblem(part); problem != "" {
			res.InvalidToolCalls = append(res.InvalidToolCalls, InvalidToolCall{
				ID: part.Id, Name: part.Name, Arguments: part.Arguments,
				Feedback: "The arguments of your call to " + part.Name + " are not a valid JSON object (" + problem + "). Call the tool again with valid JSON arguments.",
			})
		} else {
			res.ToolCalls = append(res.ToolCalls, part)
		}
		calls = append(calls, &agentv1.Part{Kind: &agentv1.Part_ToolCall{ToolCall: part}})
	}
	res.Text = msg.Content
	if readText && strings.TrimSpace(msg.Content) != "" {
		reply := texttool.Parse(msg.Content, tools, texttool.Options{Loose: text})
		res.Text = reply.Text
		for _, call := range reply.Calls {
			part := &agentv1.ToolCallPart{Id: c.newID(), Name: call.Name, Arguments: call.Arguments}
			if call.Invalid() {
				part.Arguments = call.Raw
				res.InvalidToolCalls = append(res.InvalidToolCalls, InvalidToolCall{ID: part.Id, Name: call.Name, Arguments: call.Raw, Feedback: call.Feedback()})
			} else {
				res.ToolCalls = append(res.ToolCalls, part)
			}
			calls = append(calls, &agentv1.Part{Kind: &agentv1.Part_ToolCall{ToolCall: part}})
		}
		if len(reply.Calls) > 0 {
			res.TextProtocol = true
			if res.FinishReason == "" || res.FinishReason == provider.FinishStop {
				res.FinishReason = provider.FinishToolCalls
			}
		}
	}
	if res.Text != "" {
		parts = append(parts, &agentv1.Part{Kind: &agentv1.Part_Text{Text: res.Text}})
	}
	parts = append(parts, calls...)
	res.Message = &agentv1.Message{
		Role:         agentv1.Role_ROLE_ASSISTANT,
		Parts:        parts,
		CreateTime:   timestamppb.New(c.now()),
		Usage:        res.Usage,
		FinishReason: res.FinishReason,
	}
	if cfg.Output != nil && len(calls) == 0 {
		out, err := ParseOutput(cfg.Output, res.Text)
		if err != nil {
			return res, err
		}
		res.Output = out
	}
	return res, nil
}

// argumentsProblem says why a native call's arguments cannot be run, or ""
// when they can: a JSON object, or, for a call to a custom (freeform) tool,
// the JSON string holding the model's free text.
func argumentsProblem(c *agentv1.ToolCallPart) string {
	if provider.IsFreeform(c.GetProviderData()) {
		var s string
		if json.Unmarshal([]byte(c.GetArguments()), &s) == nil {
			return ""
		}
	}
	return objectProblem(c.GetArguments())
}

// objectProblem says why text is not a JSON object, or "" when it is one.
func objectProblem(text string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	if obj == nil {
		return "null is not an object"
	}
	return ""
}

// usageOf reads the normalised usage of a response.
func usageOf(msg *schema.Message) *agentv1.Usage {
	u := &agentv1.Usage{}
	if msg.ResponseMeta != nil && msg.ResponseMeta.Usage != nil {
		t := msg.ResponseMeta.Usage
		u.InputTokens = int64(t.PromptTokens)
		u.OutputTokens = int64(t.CompletionTokens)
		u.TotalTokens = int64(t.TotalTokens)
		u.CacheReadTokens = int64(t.PromptTokenDetails.CachedTokens)
		u.ReasoningTokens = int64(t.CompletionTokensDetails.ReasoningTokens)
	}
	u.CacheWriteTokens = toInt64(msg.Extra[provider.ExtraCacheWriteTokens])
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}
