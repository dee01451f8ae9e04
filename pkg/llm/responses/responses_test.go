package responses

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/internal/goldentest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies")

func TestStreamMatchesGenerate(t *testing.T) {
	tests := []struct {
		name string
		turn fakemodel.Turn
		want adaptertest.Want
	}{
		{
			name: "reasoning, text, tool calls, cached usage",
			turn: fakemodel.Turn{Reasoning: "Add first.", ReasoningSignature: "gAAAA-enc", TextChunks: []string{"Let me ", "add."},
				ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`}, {ID: "call_2", Name: "now", Arguments: ""}},
				Usage:     &fakemodel.Usage{Input: 2000, Output: 50, CacheRead: 1536, Reasoning: 20}},
			want: adaptertest.Want{Reasoning: "Add first.", Text: "Let me add.", Finish: "tool_calls", Raw: "completed",
				Input: 2000, Output: 50, CacheRead: 1536, ReasoningTokens: 20,
				Calls: []adaptertest.Call{{ID: "call_1", Name: "add", Args: map[string]any{"a": 1.0, "b": 2.0}}, {ID: "call_2", Name: "now", Args: map[string]any{}}}},
		},
		{
			name: "length",
			turn: fakemodel.Turn{Text: "cut", FinishReason: "length", Usage: &fakemodel.Usage{Input: 5, Output: 1}},
			want: adaptertest.Want{Text: "cut", Finish: "length", Raw: "max_output_tokens", Input: 5, Output: 1},
		},
		{
			name: "content filter",
			turn: fakemodel.Turn{Text: "no", FinishReason: "content_filter"},
			want: adaptertest.Want{Text: "no", Finish: "content_filter", Raw: "content_filter"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(tt.turn, tt.turn)
			m := newTestModel(t, srv.URL)
			streamed := adaptertest.Stream(t, m, hello)
			whole := adaptertest.Generate(t, m, hello)
			adaptertest.Check(t, streamed, tt.want)
			adaptertest.Check(t, whole, tt.want)
			if !reflect.DeepEqual(streamed, whole) {
				t.Errorf("stream and generate differ:\n stream %+v\n whole  %+v", streamed, whole)
			}
		})
	}
}

// TestReasoningRoundTrip sends a response's reasoning items back in the next
// request when SendReasoning is set, and not otherwise.
func TestReasoningRoundTrip(t *testing.T) {
	for _, send := range []bool{true, false} {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{Reasoning: "Think.", ReasoningSignature: "gAAAA-enc", ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "f", Arguments: `{}`}}},
			fakemodel.Turn{Text: "done"})
		m, err := New(provider.Config{BaseURL: srv.URL, Model: "o-test", SendReasoning: send})
		if err != nil {
			t.Fatal(err)
		}
		first := adaptertest.Stream(t, m, hello)
		history := append(append([]*schema.Message{}, hello...), first, schema.ToolMessage("ok", "call_1"))
		adaptertest.Generate(t, m, history)
		body := srv.Requests()[1].JSON()
		input := body["input"].([]any)
		want := []string{"message", "function_call", "function_call_output"}
		if send {
			want = []string{"message", "reasoning", "function_call", "function_call_output"}
		}
		var got []string
		for _, it := range input {
			got = append(got, it.(map[string]any)["type"].(string))
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("send=%v: input items %v, want %v", send, got, want)
		}
		if send {
			r := input[1].(map[string]any)
			summary := r["summary"].([]any)[0].(map[string]any)
			if r["id"] != "rs_fake" || r["encrypted_content"] != "gAAAA-enc" || summary["text"] != "Think." {
				t.Errorf("reasoning item %v", r)
			}
			if !reflect.DeepEqual(body["include"], []any{"reasoning.encrypted_content"}) {
				t.Errorf("include = %v", body["include"])
			}
		}
	}
}

// TestCustomToolRoundTrip replays the recorded custom tool call and sends it
// back as a custom_tool_call with its output.
func TestCustomToolRoundTrip(t *testing.T) {
	srv := fakemodel.StartTB(t)
	rec := readRecording(t, "openai-custom-tool.1.chunks.txt")[0]
	srv.Push(fakemodel.Turn{Events: rec.events}, fakemodel.Turn{Text: "ok"})
	m := newCustomModel(t, srv.URL, "write_sql")
	first := adaptertest.Stream(t, m, hello)
	history := append(append([]*schema.Message{}, hello...), first, schema.ToolMessage("42 rows", "call_custom_sql_001"))
	adaptertest.Generate(t, m, history)
	input := srv.Requests()[1].JSON()["input"].([]any)
	call, out := input[1].(map[string]any), input[2].(map[string]any)
	if call["type"] != "custom_tool_call" || call["input"] != "SELECT * FROM users WHERE age > 25" || call["call_id"] != "call_custom_sql_001" {
		t.Errorf("call item %v", call)
	}
	if out["type"] != "custom_tool_call_output" || out["output"] != "42 rows" {
		t.Errorf("output item %v", out)
	}
}

// TestDeltaCatchUp checks that a stream whose deltas are missing, or which
// sends only its terminal event, still gives the whole answer.
func TestDeltaCatchUp(t *testing.T) {
	full := fakemodel.Turn{Reasoning: "Why not.", Text: "Hello world", ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "f", Arguments: `{"x":1}`}}}
	srv := fakemodel.StartTB(t)
	srv.Handle(func(*fakemodel.Request) fakemodel.Turn { return full })
	m := newTestModel(t, srv.URL)
	want := adaptertest.Generate(t, m, hello)
	all := encodedEvents(t, srv.URL)
	tests := []struct {
		name string
		keep func(name string) bool
	}{
		{"no deltas", func(n string) bool { return !strings.HasSuffix(n, ".delta") }},
		{"only the terminal event", func(n string) bool { return n == "response.completed" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []fakemodel.Event
			for _, e := range all {
				if tt.keep(e.Name) {
					events = append(events, e)
				}
			}
			srv.Push(fakemodel.Turn{Events: events})
			got := adaptertest.Stream(t, m, hello)
			if got.Content != want.Content || got.ReasoningContent != want.ReasoningContent || !reflect.DeepEqual(got.ToolCalls, want.ToolCalls) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

// encodedEvents returns the events the server streams for its next turn.
func encodedEvents(t *testing.T, url string) []fakemodel.Event {
	t.Helper()
	resp, err := http.Post(url+"/responses", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	r := sse.NewReader(context.Background(), resp.Body)
	defer r.Close()
	var out []fakemodel.Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fakemodel.Event{Name: e.Type, Data: string(e.Data)})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		turn      fakemodel.Turn
		stream    bool
		timeout   time.Duration
		kind      provider.Kind
		retryable bool
		message   string // the error's message, when set
	}{
		{name: "401", turn: fakemodel.Turn{Status: 401}, kind: provider.KindAuth},
		{name: "429 stream", turn: fakemodel.Turn{Status: 429, Header: http.Header{"Retry-After": {"1"}}}, stream: true, kind: provider.KindLimit, retryable: true},
		{name: "503", turn: fakemodel.Turn{Status: 503}, kind: provider.KindServer, retryable: true},
		{name: "error event", turn: fakemodel.Turn{Text: "a", StreamError: &fakemodel.StreamError{Type: "server_error", Message: "x"}}, stream: true, kind: provider.KindServer, retryable: true},
		{name: "failed response body", turn: fakemodel.Turn{StreamError: &fakemodel.StreamError{Type: "rate_limit_exceeded", Message: "x"}}, kind: provider.KindLimit, retryable: true},
		{name: "not JSON", turn: fakemodel.Turn{Raw: []byte("<html>")}, kind: provider.KindUnknown},
		{name: "unfinished body", turn: fakemodel.Turn{Raw: []byte(`{"status":"in_progress","output":[]}`)}, kind: provider.KindUnknown},
		{name: "event not JSON", turn: fakemodel.Turn{Raw: []byte("event: x\ndata: {oops\n\n")}, stream: true, kind: provider.KindUnknown,
			message: `stream event 1 ("x") is not JSON; its data begins "{oops"`},
		// The error names the event that broke: its number, its name and
		// the start of its data.
		{name: "a cut event after good ones", stream: true, kind: provider.KindUnknown,
			turn: fakemodel.Turn{Raw: fakemodel.SSE(
				fakemodel.Event{Name: "response.created", Data: `{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}`},
				fakemodel.Event{Name: "response.output_text.delta", Data: `{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"a"}`},
				fakemodel.Event{Name: "response.output_text.delta", Data: `{"type":"response.output_text.delta","output_ind`})},
			message: `stream event 3 ("response.output_text.delta") is not JSON; its data begins "{\"type\":\"response.output"…`},
		{name: "stream without terminal event", turn: fakemodel.Turn{Text: "abc", CutAfter: 6}, stream: true, kind: provider.KindUnknown},
		{name: "stalled stream and the caller's deadline", turn: fakemodel.Turn{Text: "abc", StallAfter: 4}, stream: true, timeout: 200 * time.Millisecond, kind: provider.KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(tt.turn)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			err := adaptertest.RunErr(ctx, newTestModel(t, srv.URL), tt.stream, hello)
			pe := adaptertest.ErrorKind(t, err, tt.kind)
			if pe.Retryable != tt.retryable {
				t.Errorf("retryable = %v (%v)", pe.Retryable, pe)
			}
			if tt.message != "" && pe.Message != tt.message {
				t.Errorf("message %q\nwant    %q", pe.Message, tt.message)
			}
		})
	}
}

func TestGoldenRequests(t *testing.T) {
	temp, topP, maxOut, seed := 0.2, 0.9, 512, int64(7)
	tests := []struct {
		name   string
		cfg    provider.Config
		stream bool
	}{
		{
			name: "cache-on", stream: true,
			cfg: provider.Config{SendReasoning: true,
				Cache: provider.Cache{Enabled: true, Key: "agent:conversation-1", Retention: "24h", Body: map[string]any{"cache_namespace": "agent"}}},
		},
		{
			name: "cache-off",
			cfg:  provider.Config{Cache: provider.Cache{Enabled: false, Key: "agent:conversation-1", Retention: "24h", Body: map[string]any{"cache_namespace": "agent"}}},
		},
		{
			name: "provider-body", stream: true,
			cfg: provider.Config{
				Params:     provider.Params{Temperature: &temp, TopP: &topP, MaxOutputTokens: &maxOut, Stop: []string{"END"}, Seed: &seed},
				ToolChoice: "lookup",
				Output: &provider.Output{Kind: provider.OutputObject, Name: "answer", Description: "The answer card.",
					Schema: map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}}},
				VendorOptions: map[string]any{"reasoningEffort": "low", "reasoningSummary": "auto", "textVerbosity": "low", "store": false, "include": []any{"message.output_text.logprobs"},
					"strictJsonSchema": true, "systemMessageMode": "developer", "forceReasoning": true},
				Headers: map[string]string{"X-App": "example"},
				Body:    map[string]any{"custom_field": true, "temperature": 0.7},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(fakemodel.Turn{Text: "ok"})
			cfg := tt.cfg
			cfg.BaseURL, cfg.APIKey, cfg.Model = srv.URL+"/v1", "sk-secret", "gpt-test"
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			conv := goldentest.Conversation()
			// A system notice later in the conversation stays in place.
			conv = append(conv[:len(conv)-1], schema.SystemMessage("Note: the user is on mobile."), conv[len(conv)-1])
			tm, _ := m.WithTools(goldentest.Tools())
			adaptertest.Run(t, tm, tt.stream, conv)
			req := srv.Requests()[0]
			if req.Path != "/v1/responses" || req.Header.Get("Authorization") != "Bearer sk-secret" {
				t.Errorf("path %s auth %q", req.Path, req.Header.Get("Authorization"))
			}
			for k, v := range cfg.Headers {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s = %q", k, got)
				}
			}
			adaptertest.Golden(t, "request-"+tt.name, req.Body, *update)
		})
	}
}
