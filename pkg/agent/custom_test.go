package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// responsesEvents names each Responses API event after its type.
func responsesEvents(data ...string) []fakemodel.Event {
	var out []fakemodel.Event
	for _, d := range data {
		typ := d[strings.Index(d, `"type":"`)+8:]
		out = append(out, fakemodel.Event{Name: typ[:strings.IndexByte(typ, '"')], Data: d})
	}
	return out
}

// TestCustomToolCallKeptVerbatim: a Responses custom (freeform) tool call
// takes free text. Its input stays verbatim in the history (as one JSON
// string) and goes back verbatim; it gets its tool_call and tool_result
// events like any call.
func TestCustomToolCallKeptVerbatim(t *testing.T) {
	const sql = `SELECT * FROM users WHERE name = "O'Brien" AND age > 25`
	s, srv := newSession(t, func(o *agent.Options) {
		o.Config.Protocol = agentv1.Protocol_PROTOCOL_RESPONSES
		o.Tools = pick(t, "add")
	})
	srv.Push(fakemodel.Turn{Events: responsesEvents(
		`{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sql","name":"write_sql","input":""}}`,
		`{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":"SELECT * FROM users WHERE name = \"O'Brien\""}`,
		`{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":" AND age > 25"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sql","name":"write_sql","input":"SELECT * FROM users WHERE name = \"O'Brien\" AND age > 25","status":"completed"}}`,
		`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`,
	)}, fakemodel.Turn{Text: "done"})
	rec := newRecorder()
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("query"), OnEvent: rec.add}); err != nil {
		t.Fatal(err)
	}
	h := s.History()
	if err := history.Validate(h); err != nil {
		t.Fatal(err)
	}
	call := h[1].GetParts()[0].GetToolCall()
	if call.GetArguments() != `"SELECT * FROM users WHERE name = \"O'Brien\" AND age > 25"` || call.GetProviderData()["openai.type"] != "custom" {
		t.Fatalf("stored call %v", call)
	}
	var calls, results int
	for _, e := range rec.all() {
		if c := e.GetToolCall(); c != nil && c.GetToolCallId() == "call_sql" {
			calls++
		}
		if r := e.GetToolResult(); r != nil && r.GetToolCallId() == "call_sql" {
			results++
		}
	}
	if calls != 1 || results != 1 {
		t.Errorf("%d tool_call and %d tool_result events, want 1 each", calls, results)
	}
	sent := srv.Requests()[1].JSON["input"].([]any)
	var item, output map[string]any
	for _, it := range sent {
		switch m := it.(map[string]any); m["type"] {
		case "custom_tool_call":
			item = m
		case "custom_tool_call_output":
			output = m
		}
	}
	if item == nil || item["input"] != sql || item["call_id"] != "call_sql" || output == nil || output["call_id"] != "call_sql" {
		t.Fatalf("sent back %v", sent)
	}
}
