package fakemodel

import (
	"encoding/json"
	"net/http"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Anthropic serves the Anthropic Messages API.
func (protocols) Anthropic() encoder { return anthropicEncoder{} }

// anthropicEncoder writes Anthropic Messages replies: a thinking block (with
// its signature when the turn has a ReasoningSignature), a text block, then
// one tool_use block per call. Usage.Input is split into input_tokens,
// cache_read_input_tokens and cache_creation_input_tokens; a stream reports
// the input counts in message_start and the output count in message_delta, as
// the API does. A stream error is an "error" event.
type anthropicEncoder struct{}

const anthropicID = "msg_fake"

func (anthropicEncoder) protocol() provider.Protocol { return provider.ProtocolAnthropic }

func (anthropicEncoder) match(path string) bool { return path == "/messages" }

func (anthropicEncoder) streaming(req *Request) bool {
	var b bool
	req.Field("stream", &b)
	return b
}

// anthropicStopReason maps a neutral finish reason to a stop_reason.
func anthropicStopReason(t Turn) string {
	switch r := t.finish(); r {
	case provider.FinishStop:
		return "end_turn"
	case provider.FinishLength:
		return "max_tokens"
	case provider.FinishToolCalls:
		return "tool_use"
	case provider.FinishContentFilter:
		return "refusal"
	default:
		return r
	}
}

// argsObject is a tool call's arguments as a JSON object ({} when they are not one).
func argsObject(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	return json.RawMessage(`{}`)
}

// anthropicUsage is the usage object; withInput adds the input counts.
func anthropicUsage(u *Usage, withInput bool) map[string]any {
	if u == nil {
		u = &Usage{}
	}
	m := map[string]any{"output_tokens": u.Output}
	if withInput {
		m["input_tokens"] = u.Input - u.CacheRead - u.CacheWrite
		m["cache_read_input_tokens"] = u.CacheRead
		m["cache_creation_input_tokens"] = u.CacheWrite
	}
	if u.Reasoning > 0 {
		m["output_tokens_details"] = map[string]any{"thinking_tokens": u.Reasoning}
	}
	return m
}

func anthropicErrorBody(typ, message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}}
}

func (anthropicEncoder) reply(req *Request, t Turn) ([]byte, error) {
	if t.StreamError != nil {
		return []byte(mustJSON(anthropicErrorBody(t.StreamError.Type, t.StreamError.Message))), nil
	}
	content := []any{}
	if t.Reasoning != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": t.Reasoning, "signature": t.ReasoningSignature})
	}
	if text := t.fullText(); text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i, tc := range t.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": t.callID(i), "name": tc.Name, "input": argsObject(tc.Arguments)})
	}
	return []byte(mustJSON(map[string]any{
		"id":            anthropicID,
		"type":          "message",
		"role":          "assistant",
		"model":         requestModel(req),
		"content":       content,
		"stop_reason":   anthropicStopReason(t),
		"stop_sequence": nil,
		"usage":         anthropicUsage(t.Usage, true),
	})), nil
}

func (anthropicEncoder) events(req *Request, t Turn) []Event {
	var out []Event
	add := func(fields map[string]any) {
		out = append(out, Event{Name: fields["type"].(string), Data: mustJSON(fields)})
	}
	startUsage := anthropicUsage(t.Usage, true)
	startUsage["output_tokens"] = 1
	add(map[string]any{"type": "message_start", "message": map[string]any{
		"id": anthropicID, "type": "message", "role": "assistant", "model": requestModel(req),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}})
	add(map[string]any{"type": "ping"})
	index := 0
	block := func(start map[string]any, deltas ...map[string]any) {
		add(map[string]any{"type": "content_block_start", "index": index, "content_block": start})
		for _, d := range deltas {
			add(map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		}
		add(map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if t.Reasoning != "" {
		deltas := []map[string]any{{"type": "thinking_delta", "thinking": t.Reasoning}}
		if t.ReasoningSignature != "" {
			deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": t.ReasoningSignature})
		}
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, deltas...)
	}
	if chunks := t.text(); len(chunks) > 0 {
		var deltas []map[string]any
		for _, s := range chunks {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": s})
		}
		block(map[string]any{"type": "text", "text": ""}, deltas...)
	}
	for i, tc := range t.ToolCalls {
		deltas := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
		for _, piece := range splitArgs(tc.Arguments) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": piece})
		}
		block(map[string]any{"type": "tool_use", "id": t.callID(i), "name": tc.Name, "input": map[string]any{}}, deltas...)
	}
	if t.StreamError != nil {
		add(anthropicErrorBody(t.StreamError.Type, t.StreamError.Message))
		return out
	}
	add(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStopReason(t), "stop_sequence": nil},
		"usage": anthropicUsage(t.Usage, false)})
	add(map[string]any{"type": "message_stop"})
	return out
}

func (anthropicEncoder) errorBody(status int, message string) []byte {
	return []byte(mustJSON(anthropicErrorBody(anthropicErrorType(status), message)))
}

// anthropicErrorType is the error type Anthropic sends with status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}
