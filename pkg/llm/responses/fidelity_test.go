package responses

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestHandWrittenFixtures replays the recordings written from the API
// references (see the fixtures' MANIFEST.tsv), streaming and not.
func TestHandWrittenFixtures(t *testing.T) {
	weather := adaptertest.Want{
		Calls:  []adaptertest.Call{{ID: "call_hw_weather", Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
		Finish: "tool_calls", Raw: "completed", Input: 310, Output: 52, CacheRead: 128, ReasoningTokens: 16,
	}
	// xAI ran its x_keyword_search itself: a custom_tool_call naming no
	// custom tool the request offered is not a call for the client to run.
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
			// A custom call naming a custom tool the request offered is
			// the client's, its free text kept verbatim as one JSON string.
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
	m := newCustomModel(t, srv.URL, "patch")
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

// TestProviderRunCalls: a custom_tool_call is the client's only when it
// names a custom tool the request offered; one naming none is a call the
// provider ran itself (xAI's server-side tools), wherever it stands in the
// response. Function calls are always the client's. Each case is read as
// a stream and as a whole body.
func TestProviderRunCalls(t *testing.T) {
	const (
		search  = `{"type":"custom_tool_call","id":"ctc_s","call_id":"xs_1","name":"x_keyword_search","input":"{\"query\":\"rust\"}","status":"completed"}`
		running = `{"type":"custom_tool_call","id":"ctc_s","call_id":"xs_1","name":"x_keyword_search","input":"{\"query\":\"ru","status":"in_progress"}`
		patch   = `{"type":"custom_tool_call","id":"ctc_p","call_id":"call_patch","name":"patch","input":"*** Begin Patch\n\"x\"","status":"completed"}`
		weather = `{"type":"function_call","id":"fc_w","call_id":"call_w","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}`
		unknown = `{"type":"function_call","id":"fc_n","call_id":"call_n","name":"no_such_tool","arguments":"{}","status":"completed"}`
		message = `{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Rust 2024 shipped"}]}`
		cut     = `{"type":"message","id":"msg_1","role":"assistant","status":"incomplete","content":[{"type":"output_text","text":"Rust 2024 sh"}]}`
	)
	weatherCall := adaptertest.Call{ID: "call_w", Name: "get_weather", Args: map[string]any{"city": "Paris"}}
	patchCall := adaptertest.Call{ID: "call_patch", Name: "patch", Args: "*** Begin Patch\n\"x\""}
	tests := []struct {
		name   string
		items  []string
		status string // of the response: completed, or incomplete (max_output_tokens)
		want   adaptertest.Want
	}{
		{name: "a server-run call and nothing after it", items: []string{search}, status: "completed",
			want: adaptertest.Want{Finish: "stop", Raw: "completed"}},
		{name: "a server-run call then a client function call", items: []string{search, weather}, status: "completed",
			want: adaptertest.Want{Calls: []adaptertest.Call{weatherCall}, Finish: "tool_calls", Raw: "completed"}},
		{name: "a client function call then a server-run call", items: []string{weather, search}, status: "completed",
			want: adaptertest.Want{Calls: []adaptertest.Call{weatherCall}, Finish: "tool_calls", Raw: "completed"}},
		{name: "a server-run call then the answer", items: []string{search, message}, status: "completed",
			want: adaptertest.Want{Text: "Rust 2024 shipped", Finish: "stop", Raw: "completed"}},
		{name: "cut at max tokens after a server-run call", items: []string{search, cut}, status: "incomplete",
			want: adaptertest.Want{Text: "Rust 2024 sh", Finish: "length", Raw: "max_output_tokens"}},
		{name: "cut at max tokens while a server-run call runs", items: []string{running}, status: "incomplete",
			want: adaptertest.Want{Finish: "length", Raw: "max_output_tokens"}},
		{name: "a client custom call", items: []string{patch}, status: "completed",
			want: adaptertest.Want{Calls: []adaptertest.Call{patchCall}, Finish: "tool_calls", Raw: "completed"}},
		{name: "a server-run call, the answer, then a client custom call and a function call", items: []string{search, message, patch, weather}, status: "completed",
			want: adaptertest.Want{Text: "Rust 2024 shipped", Calls: []adaptertest.Call{patchCall, weatherCall}, Finish: "tool_calls", Raw: "completed"}},
		// The engine answers a call to a tool it does not have.
		{name: "a function call naming no offered tool", items: []string{search, unknown}, status: "completed",
			want: adaptertest.Want{Calls: []adaptertest.Call{{ID: "call_n", Name: "no_such_tool", Args: map[string]any{}}}, Finish: "tool_calls", Raw: "completed"}},
	}
	srv := fakemodel.StartTB(t)
	m := newCustomModel(t, srv.URL, "patch")
	for _, tt := range tests {
		output := "[" + strings.Join(tt.items, ",") + "]"
		resp := `{"id":"resp_1","status":"` + tt.status + `","output":` + output + `,"usage":{"input_tokens":3,"output_tokens":4}`
		if tt.status == "incomplete" {
			resp += `,"incomplete_details":{"reason":"max_output_tokens"}`
		}
		resp += "}"
		var evs []string
		evs = append(evs, `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`)
		for k, it := range tt.items {
			pos := strconv.Itoa(k)
			var item map[string]any
			if err := json.Unmarshal([]byte(it), &item); err != nil {
				t.Fatal(err)
			}
			var delta []byte
			if input, ok := item["input"].(string); ok {
				// A custom call's input streams in deltas after an empty start.
				item["input"], delta = "", mustJSON(input)
			}
			evs = append(evs, `{"type":"response.output_item.added","output_index":`+pos+`,"item":`+string(mustJSON(item))+`}`)
			if delta != nil {
				evs = append(evs, `{"type":"response.custom_tool_call_input.delta","output_index":`+pos+`,"item_id":"x","delta":`+string(delta)+`}`)
			}
			evs = append(evs, `{"type":"response.output_item.done","output_index":`+pos+`,"item":`+it+`}`)
		}
		evs = append(evs, `{"type":"response.`+tt.status+`","response":`+resp+`}`)
		tt.want.Input, tt.want.Output = 3, 4
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s stream=%v", tt.name, stream), func(t *testing.T) {
				if stream {
					srv.Push(fakemodel.Turn{Events: events(evs...)})
				} else {
					srv.Push(fakemodel.Turn{Raw: []byte(resp), RawContentType: "application/json"})
				}
				msg := adaptertest.Run(t, m, stream, hello)
				adaptertest.Check(t, msg, tt.want)
				for _, tc := range msg.ToolCalls {
					custom := provider.IsFreeform(provider.StringMap(tc.Extra[provider.ExtraToolCallData]))
					if custom != (tc.Function.Name == "patch") {
						t.Errorf("call %s: freeform mark %v", tc.Function.Name, custom)
					}
				}
			})
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestCustomToolsOffered reads the custom tools of a request's tools list.
func TestCustomToolsOffered(t *testing.T) {
	tests := []struct {
		name  string
		tools any
		want  []string
	}{
		{"none", nil, nil},
		{"ours: function tools", provider.Encoded(`[{"type":"function","name":"add"}]`), nil},
		{"a list from provider.Body", []any{
			map[string]any{"type": "function", "name": "add"},
			map[string]any{"type": "custom", "name": "patch", "format": map[string]any{"type": "grammar"}},
			map[string]any{"type": "web_search"},
			map[string]any{"type": "custom", "name": 7},
			"junk",
		}, []string{"patch"}},
		{"raw JSON", json.RawMessage(`[{"type":"custom","name":"write_sql"}]`), []string{"write_sql"}},
		{"not a list", map[string]any{"type": "custom", "name": "x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := customTools(tt.tools)
			var names []string
			for n := range got {
				names = append(names, n)
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Errorf("custom tools %v, want %v", names, tt.want)
			}
		})
	}
}
