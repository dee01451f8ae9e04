package fakemodel

import (
	"net/http"
	"strings"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Gemini serves the Gemini API.
func (protocols) Gemini() encoder { return geminiEncoder{} }

// geminiEncoder writes Gemini generateContent replies: a thought part, the
// text, then one functionCall part per call (with an id only when the
// scripted call has one, as Gemini gives none). A ReasoningSignature goes on
// the first functionCall part, or else on the last text part (an empty one
// when streaming, as Gemini sends it). Usage.Input is promptTokenCount
// (Gemini counts cached tokens in it), CacheRead cachedContentTokenCount,
// Reasoning thoughtsTokenCount and the rest of Output candidatesTokenCount;
// Gemini has no cache write count. A stream error is an {"error":…} chunk.
type geminiEncoder struct{}

const geminiResponseID = "resp_fake_gemini"

func (geminiEncoder) protocol() provider.Protocol { return provider.ProtocolGemini }

func (geminiEncoder) match(path string) bool {
	i := strings.Index(path, "/models/")
	return i >= 0 && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent"))
}

func (geminiEncoder) streaming(req *Request) bool {
	return strings.HasSuffix(req.Path, ":streamGenerateContent")
}

// geminiFinishReason maps a neutral finish reason to a finishReason.
func geminiFinishReason(t Turn) string {
	switch r := t.finish(); r {
	case provider.FinishStop, provider.FinishToolCalls:
		return "STOP"
	case provider.FinishLength:
		return "MAX_TOKENS"
	case provider.FinishContentFilter:
		return "SAFETY"
	default:
		return r
	}
}

func geminiUsage(u *Usage) map[string]any {
	m := map[string]any{
		"promptTokenCount":     u.Input,
		"candidatesTokenCount": u.Output - u.Reasoning,
		"totalTokenCount":      u.Input + u.Output,
	}
	if u.CacheRead > 0 {
		m["cachedContentTokenCount"] = u.CacheRead
	}
	if u.Reasoning > 0 {
		m["thoughtsTokenCount"] = u.Reasoning
	}
	return m
}

// geminiCalls returns the turn's functionCall parts, the signature on the
// first.
func geminiCalls(t Turn) []any {
	var out []any
	for i, tc := range t.ToolCalls {
		fc := map[string]any{"name": tc.Name, "args": argsObject(tc.Arguments)}
		if tc.ID != "" {
			fc["id"] = tc.ID
		}
		p := map[string]any{"functionCall": fc}
		if i == 0 && t.ReasoningSignature != "" {
			p["thoughtSignature"] = t.ReasoningSignature
		}
		out = append(out, p)
	}
	return out
}

// geminiResponse wraps parts in a GenerateContentResponse; finish and usage
// are left out when empty.
func geminiResponse(req *Request, parts []any, finish string, u *Usage) map[string]any {
	cand := map[string]any{"index": 0}
	if len(parts) > 0 {
		cand["content"] = map[string]any{"role": "model", "parts": parts}
	}
	if finish != "" {
		cand["finishReason"] = finish
	}
	r := map[string]any{"candidates": []any{cand}, "modelVersion": geminiModel(req), "responseId": geminiResponseID}
	if u != nil {
		r["usageMetadata"] = geminiUsage(u)
	}
	return r
}

// geminiModel is the model name in the request path.
func geminiModel(req *Request) string {
	name := req.Path[strings.Index(req.Path, "/models/")+len("/models/"):]
	name, _, _ = strings.Cut(name, ":")
	return name
}

// geminiErrorBody is Google's error object.
func geminiErrorBody(code int, status, message string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": message, "status": status}}
}

func (geminiEncoder) reply(req *Request, t Turn) ([]byte, error) {
	if t.StreamError != nil {
		return []byte(mustJSON(geminiErrorBody(googleCode(t.StreamError.Type), t.StreamError.Type, t.StreamError.Message))), nil
	}
	var parts []any
	if t.Reasoning != "" {
		parts = append(parts, map[string]any{"text": t.Reasoning, "thought": true})
	}
	if text := t.fullText(); text != "" || (len(t.ToolCalls) == 0 && t.ReasoningSignature != "") {
		p := map[string]any{"text": text}
		if len(t.ToolCalls) == 0 && t.ReasoningSignature != "" {
			p["thoughtSignature"] = t.ReasoningSignature
		}
		parts = append(parts, p)
	}
	parts = append(parts, geminiCalls(t)...)
	usage := t.Usage
	if usage == nil {
		usage = &Usage{}
	}
	return []byte(mustJSON(geminiResponse(req, parts, geminiFinishReason(t), usage))), nil
}

func (geminiEncoder) events(req *Request, t Turn) []Event {
	var out []Event
	add := func(r map[string]any) { out = append(out, Event{Data: mustJSON(r)}) }
	if t.Reasoning != "" {
		add(geminiResponse(req, []any{map[string]any{"text": t.Reasoning, "thought": true}}, "", nil))
	}
	for _, s := range t.text() {
		add(geminiResponse(req, []any{map[string]any{"text": s}}, "", nil))
	}
	if calls := geminiCalls(t); len(calls) > 0 {
		add(geminiResponse(req, calls, "", nil))
	}
	if t.StreamError != nil {
		add(geminiErrorBody(googleCode(t.StreamError.Type), t.StreamError.Type, t.StreamError.Message))
		return out
	}
	var last []any
	if len(t.ToolCalls) == 0 && t.ReasoningSignature != "" {
		last = []any{map[string]any{"text": "", "thoughtSignature": t.ReasoningSignature}}
	}
	usage := t.Usage
	if usage == nil {
		usage = &Usage{}
	}
	add(geminiResponse(req, last, geminiFinishReason(t), usage))
	return out
}

func (geminiEncoder) errorBody(status int, message string) []byte {
	return []byte(mustJSON(geminiErrorBody(status, googleStatus(status), message)))
}

// googleStatus is the google.rpc status name Google sends with an HTTP status.
func googleStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

// googleCode is the HTTP status of a google.rpc status name.
func googleCode(status string) int {
	for _, code := range []int{400, 401, 403, 404, 429, 503, 504, 500} {
		if googleStatus(code) == status {
			return code
		}
	}
	return http.StatusInternalServerError
}
