package responses

import (
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestHandWrittenFixtures replays the recordings written from the API
// references (see the fixtures' MANIFEST.tsv), streaming and not.
func TestHandWrittenFixtures(t *testing.T) {
	weather := adaptertest.Want{
		Calls:  []adaptertest.Call{{ID: "call_hw_weather", Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
		Finish: "tool_calls", Raw: "completed", Input: 310, Output: 52, CacheRead: 128, ReasoningTokens: 16,
	}
	// xAI ran its x_keyword_search itself: a completed custom_tool_call
	// followed by the answer is not a call for the client to run.
	search := adaptertest.Want{
		Text:   "Rust 2024 shipped with Rust 1.85 [[1]](https://blog.rust-lang.org/2025/02/20/Rust-1.85.0/).",
		Finish: "stop", Raw: "completed", Input: 11716, Output: 2393, Total: 14109, CacheRead: 2048, ReasoningTokens: 1900,
	}
	tests := []struct {
		file string
		want adaptertest.Want
	}{
		{"hosted-tools-and-function-call.chunks.txt", weather},
		{"hosted-tools-and-function-call.json", weather},
		{"xai-server-side-search.chunks.txt", search},
		{"xai-server-side-search.json", search},
	}
	srv := fakemodel.StartTB(t)
	m := newTestModel(t, srv.URL)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			turn, stream := adaptertest.FixtureTurn(t, dir+tt.file, true)
			srv.Push(turn)
			adaptertest.Check(t, adaptertest.Run(t, m, stream, hello), tt.want)
		})
	}
}

// events names each event after its type.
func events(data ...string) []fakemodel.Event {
	var out []fakemodel.Event
	for _, d := range data {
		typ, err := provider.Type([]byte(d))
		if err != nil {
			panic(err)
		}
		out = append(out, fakemodel.Event{Name: typ, Data: d})
	}
	return out
}

const completed = `{"type":"response.completed","response":{"status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":4}}}`

// TestStreamShapes covers what the rules decide for shapes the recordings
// do not show.
func TestStreamShapes(t *testing.T) {
	tests := []struct {
		name   string
		events []fakemodel.Event
		want   adaptertest.Want
		custom bool
	}{
		{
			// Text and reasoning are keyed by position: a gateway giving
			// every event a new item_id must not split the text.
			name: "item ids rotated on every event",
			events: events(
				`{"type":"response.reasoning_summary_text.delta","item_id":"a1","output_index":0,"summary_index":0,"delta":"Think "}`,
				`{"type":"response.reasoning_summary_text.delta","item_id":"a2","output_index":0,"summary_index":0,"delta":"hard."}`,
				`{"type":"response.reasoning_summary_text.done","item_id":"a3","output_index":0,"summary_index":0,"text":"Think hard."}`,
				`{"type":"response.output_text.delta","item_id":"b1","output_index":1,"content_index":0,"delta":"Hel"}`,
				`{"type":"response.output_text.delta","item_id":"b2","output_index":1,"content_index":0,"delta":"lo"}`,
				`{"type":"response.output_text.done","item_id":"b3","output_index":1,"content_index":0,"text":"Hello"}`,
				completed),
			want: adaptertest.Want{Reasoning: "Think hard.", Text: "Hello", Finish: "stop", Raw: "completed", Input: 3, Output: 4},
		},
		{
			// A client custom call (nothing after it) is a call, its free
			// text kept verbatim as one JSON string.
			name: "a custom call the client runs",
			events: events(
				`{"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ct","call_id":"c1","name":"patch","input":""}}`,
				`{"type":"response.custom_tool_call_input.delta","output_index":0,"item_id":"ct","delta":"*** Begin Patch\n\"x\""}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","id":"ct","call_id":"c1","name":"patch","input":"*** Begin Patch\n\"x\"","status":"completed"}}`,
				completed),
			want:   adaptertest.Want{Calls: []adaptertest.Call{{ID: "c1", Name: "patch", Args: "*** Begin Patch\n\"x\""}}, Finish: "tool_calls", Raw: "completed", Input: 3, Output: 4},
			custom: true,
		},
		{
			// Calls keep their order when a custom call waits for the end.
			name: "a function call after a custom call",
			events: events(
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"custom_tool_call","call_id":"c1","name":"patch","input":"x","status":"completed"}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c2","name":"f","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"a\":1}"}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","call_id":"c2","name":"f","arguments":"{\"a\":1}","status":"completed"}}`,
				completed),
			want: adaptertest.Want{Calls: []adaptertest.Call{{ID: "c1", Name: "patch", Args: "x"}, {ID: "c2", Name: "f", Args: map[string]any{"a": 1.0}}},
				Finish: "tool_calls", Raw: "completed", Input: 3, Output: 4},
			custom: true,
		},
		{
			// An unknown item (arguments as an object) between two calls
			// costs neither.
			name: "an unknown item between function calls",
			events: events(
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"type":"mcp_call","id":"m","arguments":{"q":1},"output":{"x":[1]}}}`,
				`{"type":"response.mcp_call_arguments.delta","output_index":1,"item_id":"m","delta":{"q":1}}`,
				`{"type":"response.output_item.done","output_index":2,"item":{"type":"function_call","call_id":"c2","name":"g","arguments":{"b":true}}}`,
				completed),
			want: adaptertest.Want{Calls: []adaptertest.Call{{ID: "c1", Name: "f", Args: map[string]any{}}, {ID: "c2", Name: "g", Args: map[string]any{"b": true}}},
				Finish: "tool_calls", Raw: "completed", Input: 3, Output: 4},
		},
	}
	srv := fakemodel.StartTB(t)
	m := newTestModel(t, srv.URL)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.Push(fakemodel.Turn{Events: tt.events})
			msg := adaptertest.Stream(t, m, hello)
			adaptertest.Check(t, msg, tt.want)
			if len(msg.ToolCalls) > 0 && tt.custom != provider.IsFreeform(provider.StringMap(msg.ToolCalls[0].Extra[provider.ExtraToolCallData])) {
				t.Errorf("first call's freeform mark: %v", msg.ToolCalls[0].Extra)
			}
		})
	}
}

// TestSecondResponseCreated: two responses in one stream are a protocol
// violation, named in the error, never merged.
func TestSecondResponseCreated(t *testing.T) {
	srv := fakemodel.StartTB(t)
	created := `{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}`
	srv.Push(fakemodel.Turn{Events: events(created,
		`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a"}`, created, completed)})
	_, err := adaptertest.Collect(t.Context(), newTestModel(t, srv.URL), hello)
	pe := adaptertest.ErrorKind(t, err, provider.KindUnknown)
	if !strings.Contains(pe.Message, "response.created") {
		t.Errorf("error %v does not name the event", pe)
	}
}
