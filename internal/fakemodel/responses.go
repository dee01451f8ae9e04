package fakemodel

import (
	"fmt"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Responses serves the OpenAI Responses API.
func (protocols) Responses() encoder { return responsesEncoder{} }

// responsesEncoder writes OpenAI Responses replies: a reasoning item (with
// encrypted_content when the turn has a ReasoningSignature), a message item,
// then one function_call item per tool call; length and content_filter
// finish as response.incomplete; a stream error is an "error" event followed
// by response.failed.
type responsesEncoder struct{}

const responsesID = "resp_fake"

func (responsesEncoder) protocol() provider.Protocol { return provider.ProtocolResponses }

func (responsesEncoder) match(path string) bool { return path == "/responses" }

func (responsesEncoder) streaming(req *Request) bool {
	var b bool
	req.Field("stream", &b)
	return b
}

// items are a turn's output items, in the order the stream sends them.
type responsesItems struct {
	reasoning map[string]any // nil when the turn has no reasoning
	message   map[string]any // nil when the turn has no text
	calls     []map[string]any
}

func responsesOutput(t Turn) responsesItems {
	var it responsesItems
	if t.Reasoning != "" {
		it.reasoning = map[string]any{
			"id":      "rs_fake",
			"type":    "reasoning",
			"summary": []any{map[string]any{"type": "summary_text", "text": t.Reasoning}},
		}
		if t.ReasoningSignature != "" {
			it.reasoning["encrypted_content"] = t.ReasoningSignature
		}
	}
	if text := t.fullText(); text != "" {
		it.message = map[string]any{
			"id":      "msg_fake",
			"type":    "message",
			"status":  "completed",
			"role":    "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}},
		}
	}
	for i, tc := range t.ToolCalls {
		it.calls = append(it.calls, map[string]any{
			"id":        fmt.Sprintf("fc_fake_%d", i),
			"type":      "function_call",
			"status":    "completed",
			"call_id":   t.callID(i),
			"name":      tc.Name,
			"arguments": tc.Arguments,
		})
	}
	return it
}

func (it responsesItems) list() []any {
	var out []any
	if it.reasoning != nil {
		out = append(out, it.reasoning)
	}
	if it.message != nil {
		out = append(out, it.message)
	}
	for _, c := range it.calls {
		out = append(out, c)
	}
	if out == nil {
		out = []any{}
	}
	return out
}

// response is the response object in its final state.
func (responsesEncoder) response(req *Request, t Turn, output []any) map[string]any {
	r := map[string]any{
		"id":                 responsesID,
		"object":             "response",
		"created_at":         fakeCreated,
		"status":             "completed",
		"model":              requestModel(req),
		"output":             output,
		"error":              nil,
		"incomplete_details": nil,
		"usage":              nil,
	}
	switch {
	case t.StreamError != nil:
		r["status"] = "failed"
		r["error"] = map[string]any{"code": t.StreamError.Type, "message": t.StreamError.Message}
	case t.finish() == provider.FinishLength:
		r["status"] = "incomplete"
		r["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
	case t.finish() == provider.FinishContentFilter:
		r["status"] = "incomplete"
		r["incomplete_details"] = map[string]any{"reason": "content_filter"}
	}
	if t.Usage != nil && t.StreamError == nil {
		r["usage"] = map[string]any{
			"input_tokens":          t.Usage.Input,
			"input_tokens_details":  map[string]any{"cached_tokens": t.Usage.CacheRead},
			"output_tokens":         t.Usage.Output,
			"output_tokens_details": map[string]any{"reasoning_tokens": t.Usage.Reasoning},
			"total_tokens":          t.Usage.Input + t.Usage.Output,
		}
	}
	return r
}

func (e responsesEncoder) reply(req *Request, t Turn) ([]byte, error) {
	return []byte(mustJSON(e.response(req, t, responsesOutput(t).list()))), nil
}

// responsesStream builds the events of one stream, numbering them.
type responsesStream struct {
	out []Event
	seq int
}

func (s *responsesStream) add(typ string, fields map[string]any) {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	s.out = append(s.out, Event{Name: typ, Data: mustJSON(fields)})
}

func (e responsesEncoder) events(req *Request, t Turn) []Event {
	var s responsesStream
	started := e.response(req, Turn{}, []any{})
	started["status"] = "in_progress"
	s.add("response.created", map[string]any{"response": started})
	s.add("response.in_progress", map[string]any{"response": started})

	it := responsesOutput(t)
	idx := 0
	if r := it.reasoning; r != nil {
		added := map[string]any{"id": r["id"], "type": "reasoning", "summary": []any{}}
		if ec, ok := r["encrypted_content"]; ok {
			added["encrypted_content"] = ec
		}
		s.add("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		part := map[string]any{"item_id": r["id"], "output_index": idx, "summary_index": 0}
		s.add("response.reasoning_summary_part.added", with(part, "part", map[string]any{"type": "summary_text", "text": ""}))
		s.add("response.reasoning_summary_text.delta", with(part, "delta", t.Reasoning))
		s.add("response.reasoning_summary_text.done", with(part, "text", t.Reasoning))
		s.add("response.reasoning_summary_part.done", with(part, "part", map[string]any{"type": "summary_text", "text": t.Reasoning}))
		s.add("response.output_item.done", map[string]any{"output_index": idx, "item": r})
		idx++
	}
	if m := it.message; m != nil {
		s.add("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{
			"id": m["id"], "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		part := map[string]any{"item_id": m["id"], "output_index": idx, "content_index": 0}
		s.add("response.content_part.added", with(part, "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}}))
		for _, d := range t.text() {
			s.add("response.output_text.delta", with(part, "delta", d))
		}
		s.add("response.output_text.done", with(part, "text", t.fullText()))
		s.add("response.content_part.done", with(part, "part", map[string]any{"type": "output_text", "text": t.fullText(), "annotations": []any{}}))
		s.add("response.output_item.done", map[string]any{"output_index": idx, "item": m})
		idx++
	}
	for _, c := range it.calls {
		added := with(c, "arguments", "")
		added["status"] = "in_progress"
		s.add("response.output_item.added", map[string]any{"output_index": idx, "item": added})
		for _, piece := range splitArgs(c["arguments"].(string)) {
			s.add("response.function_call_arguments.delta", map[string]any{"item_id": c["id"], "output_index": idx, "delta": piece})
		}
		s.add("response.function_call_arguments.done", map[string]any{"item_id": c["id"], "output_index": idx, "arguments": c["arguments"]})
		s.add("response.output_item.done", map[string]any{"output_index": idx, "item": c})
		idx++
	}
	final := e.response(req, t, it.list())
	switch {
	case t.StreamError != nil:
		s.add("error", map[string]any{"code": t.StreamError.Type, "message": t.StreamError.Message, "param": nil})
		s.add("response.failed", map[string]any{"response": final})
	case final["status"] == "incomplete":
		s.add("response.incomplete", map[string]any{"response": final})
	default:
		s.add("response.completed", map[string]any{"response": final})
	}
	return s.out
}

// with returns a copy of m with key set to v.
func with(m map[string]any, key string, v any) map[string]any {
	c := make(map[string]any, len(m)+1)
	for k, x := range m {
		c[k] = x
	}
	c[key] = v
	return c
}

func (responsesEncoder) errorBody(status int, message string) []byte {
	return []byte(mustJSON(chatErrorBody(openAIErrorType(status), message)))
}
