package fakemodel

import (
	"net/http"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Chat serves OpenAI Chat Completions.
func (protocols) Chat() encoder { return chatEncoder{} }

// chatEncoder writes OpenAI Chat Completions replies. Reasoning goes in
// reasoning_content, as DeepSeek-style gateways send it; a cache write is
// reported as prompt_tokens_details.cache_write_tokens, a gateway extension
// (OpenAI reports none); the usage chunk is streamed only when the request
// set stream_options.include_usage, as OpenAI does.
type chatEncoder struct{}

const (
	chatID      = "chatcmpl-fake"
	fakeCreated = 1700000000
)

func (chatEncoder) protocol() provider.Protocol { return provider.ProtocolChat }

func (chatEncoder) match(path string) bool { return path == "/chat/completions" }

func (chatEncoder) streaming(req *Request) bool {
	var b bool
	req.Field("stream", &b)
	return b
}

func (chatEncoder) chunk(req *Request, choices []any, usage map[string]any) Event {
	c := map[string]any{
		"id":      chatID,
		"object":  "chat.completion.chunk",
		"created": fakeCreated,
		"model":   requestModel(req),
		"choices": choices,
	}
	if usage != nil {
		c["usage"] = usage
	}
	return Event{Data: mustJSON(c)}
}

func chatDelta(delta map[string]any, finish any) []any {
	return []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
}

func (e chatEncoder) events(req *Request, t Turn) []Event {
	out := []Event{e.chunk(req, chatDelta(map[string]any{"role": "assistant", "content": ""}, nil), nil)}
	if t.Reasoning != "" {
		out = append(out, e.chunk(req, chatDelta(map[string]any{"reasoning_content": t.Reasoning}, nil), nil))
	}
	for _, s := range t.text() {
		out = append(out, e.chunk(req, chatDelta(map[string]any{"content": s}, nil), nil))
	}
	for i, tc := range t.ToolCalls {
		first := map[string]any{"index": i, "id": t.callID(i), "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}
		out = append(out, e.chunk(req, chatDelta(map[string]any{"tool_calls": []any{first}}, nil), nil))
		for _, piece := range splitArgs(tc.Arguments) {
			d := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			out = append(out, e.chunk(req, chatDelta(map[string]any{"tool_calls": []any{d}}, nil), nil))
		}
	}
	if t.StreamError != nil {
		return append(out, Event{Data: mustJSON(chatErrorBody(t.StreamError.Type, t.StreamError.Message))})
	}
	out = append(out, e.chunk(req, chatDelta(map[string]any{}, t.finish()), nil))
	var opts struct {
		IncludeUsage bool `json:"include_usage"`
	}
	if req.Field("stream_options", &opts) && opts.IncludeUsage && t.Usage != nil {
		out = append(out, e.chunk(req, []any{}, chatUsage(t.Usage)))
	}
	return append(out, Event{Data: "[DONE]"})
}

func (chatEncoder) reply(req *Request, t Turn) ([]byte, error) {
	if t.StreamError != nil {
		return []byte(mustJSON(chatErrorBody(t.StreamError.Type, t.StreamError.Message))), nil
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if text := t.fullText(); text != "" || len(t.ToolCalls) == 0 {
		msg["content"] = text
	}
	if t.Reasoning != "" {
		msg["reasoning_content"] = t.Reasoning
	}
	if len(t.ToolCalls) > 0 {
		calls := make([]any, len(t.ToolCalls))
		for i, tc := range t.ToolCalls {
			calls[i] = map[string]any{"id": t.callID(i), "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
		}
		msg["tool_calls"] = calls
	}
	body := map[string]any{
		"id":      chatID,
		"object":  "chat.completion",
		"created": fakeCreated,
		"model":   requestModel(req),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": t.finish()}},
	}
	if t.Usage != nil {
		body["usage"] = chatUsage(t.Usage)
	}
	return []byte(mustJSON(body)), nil
}

func chatUsage(u *Usage) map[string]any {
	details := map[string]any{"cached_tokens": u.CacheRead}
	if u.CacheWrite > 0 {
		details["cache_write_tokens"] = u.CacheWrite
	}
	return map[string]any{
		"prompt_tokens":             u.Input,
		"completion_tokens":         u.Output,
		"total_tokens":              u.Input + u.Output,
		"prompt_tokens_details":     details,
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.Reasoning},
	}
}

// chatErrorBody is OpenAI's error object.
func chatErrorBody(typ, message string) map[string]any {
	return map[string]any{"error": map[string]any{"message": message, "type": typ, "param": nil, "code": typ}}
}

func (chatEncoder) errorBody(status int, message string) []byte {
	return []byte(mustJSON(chatErrorBody(openAIErrorType(status), message)))
}

// openAIErrorType is the error type OpenAI sends with status.
func openAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "invalid_api_key"
	case status == http.StatusForbidden:
		return "permission_denied"
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}
