package agent_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
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

// chatEvents are chat completion chunks, then [DONE].
func chatEvents(data ...string) []fakemodel.Event {
	var out []fakemodel.Event
	for _, d := range data {
		out = append(out, fakemodel.Event{Data: d})
	}
	return append(out, fakemodel.Event{Data: "[DONE]"})
}

// TestCustomToolCallKeptVerbatim: a custom (freeform) tool call takes free
// text, in both OpenAI protocols. Its input stays verbatim in the history
// (as one JSON string) and goes back verbatim; it gets its tool_call and
// tool_result events like any call. The custom tool is offered the way a
// user offers one, in provider.body's tools list.
func TestCustomToolCallKeptVerbatim(t *testing.T) {
	const sql = `SELECT * FROM users WHERE name = "O'Brien" AND age > 25`
	tests := []struct {
		name     string
		protocol agentv1.Protocol
		tool     map[string]any // the custom tool, in the protocol's tools list
		events   []fakemodel.Event
		// sentBack finds the call and its result in the next request.
		sentBack func(req map[string]any) (input, callID, resultID any)
	}{
		{
			name:     "responses",
			protocol: agentv1.Protocol_PROTOCOL_RESPONSES,
			tool:     map[string]any{"type": "custom", "name": "write_sql"},
			events: responsesEvents(
				`{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`,
				`{"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sql","name":"write_sql","input":""}}`,
				`{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":"SELECT * FROM users WHERE name = \"O'Brien\""}`,
				`{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":" AND age > 25"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_sql","name":"write_sql","input":"SELECT * FROM users WHERE name = \"O'Brien\" AND age > 25","status":"completed"}}`,
				`{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}}`,
			),
			sentBack: func(req map[string]any) (input, callID, resultID any) {
				for _, it := range req["input"].([]any) {
					switch m := it.(map[string]any); m["type"] {
					case "custom_tool_call":
						input, callID = m["input"], m["call_id"]
					case "custom_tool_call_output":
						resultID = m["call_id"]
					}
				}
				return input, callID, resultID
			},
		},
		{
			name:     "chat",
			protocol: agentv1.Protocol_PROTOCOL_CHAT,
			tool:     map[string]any{"type": "custom", "custom": map[string]any{"name": "write_sql"}},
			events: chatEvents(
				`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_sql","type":"custom","custom":{"name":"write_sql","input":""}}]}}]}`,
				`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":"SELECT * FROM users WHERE name = \"O'Brien\""}}]}}]}`,
				`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":" AND age > 25"}}]}}]}`,
				`{"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
			),
			sentBack: func(req map[string]any) (input, callID, resultID any) {
				for _, msg := range req["messages"].([]any) {
					m := msg.(map[string]any)
					switch m["role"] {
					case "assistant":
						for _, c := range asSlice(m["tool_calls"]) {
							if tc := c.(map[string]any); tc["type"] == "custom" {
								custom, _ := tc["custom"].(map[string]any)
								input, callID = custom["input"], tc["id"]
							}
						}
					case "tool":
						resultID = m["tool_call_id"]
					}
				}
				return input, callID, resultID
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := structpb.NewStruct(map[string]any{"tools": []any{tt.tool}})
			if err != nil {
				t.Fatal(err)
			}
			s, srv := newSession(t, func(o *agent.Options) {
				o.Config.Protocol = tt.protocol
				o.Config.Provider = &agentv1.ProviderOptions{Body: body}
				o.Tools = pick(t, "add")
			})
			srv.Push(fakemodel.Turn{Events: tt.events}, fakemodel.Turn{Text: "done"})
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
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			in, callID, resultID := tt.sentBack(reqs[1].JSON())
			if in != sql || callID != "call_sql" || resultID != "call_sql" {
				t.Fatalf("sent back input %q for call %v, result for %v; request %v", in, callID, resultID, reqs[1].JSON())
			}
		})
	}
}

// TestProviderRunCallNotRun: xAI's server-side search surfaces as a
// completed custom_tool_call naming no tool the request offered. The agent
// does not run it, emits no tool_call for it, and the run ends with the
// answer after one model request (hand-written fixture, see MANIFEST.tsv).
func TestProviderRunCallNotRun(t *testing.T) {
	data, err := os.ReadFile("../llm/testdata/fixtures/openai/responses/xai-server-side-search.chunks.txt")
	if err != nil {
		t.Fatal(err)
	}
	events, err := fakemodel.ChunkEvents(data, true)
	if err != nil {
		t.Fatal(err)
	}
	s, srv := newSession(t, func(o *agent.Options) {
		o.Config.Protocol = agentv1.Protocol_PROTOCOL_RESPONSES
		o.Tools = pick(t, "add")
	})
	srv.Push(fakemodel.Turn{Events: events})
	rec := newRecorder()
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("what shipped in Rust 2024?"), OnEvent: rec.add}); err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.all() {
		if e.GetToolCall() != nil || e.GetToolResult() != nil {
			t.Errorf("event %v for a call xAI ran itself", e)
		}
	}
	h := s.History()
	if err := history.Validate(h); err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || !strings.HasPrefix(h[1].GetParts()[0].GetText(), "Rust 2024 shipped with Rust 1.85") {
		t.Fatalf("history %v", h)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
