package chat

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestStreamMatchesGenerate plays the same scripted answer streaming and
// not, and checks both give the same message.
func TestStreamMatchesGenerate(t *testing.T) {
	tests := []struct {
		name string
		turn fakemodel.Turn
		want adaptertest.Want
	}{
		{
			name: "text with cache and reasoning usage",
			turn: fakemodel.Turn{TextChunks: []string{"Hel", "lo ", "there"},
				Usage: &fakemodel.Usage{Input: 1200, Output: 40, CacheRead: 1024, CacheWrite: 100, Reasoning: 12}},
			want: adaptertest.Want{Text: "Hello there", Finish: "stop", Raw: "stop",
				Input: 1200, Output: 40, CacheRead: 1024, CacheWrite: 100, ReasoningTokens: 12},
		},
		{
			name: "reasoning and two tool calls",
			turn: fakemodel.Turn{Reasoning: "I should add.", Text: "Adding.",
				ToolCalls: []fakemodel.ToolCall{{ID: "call_a", Name: "add", Arguments: `{"a":1,"b":2}`}, {ID: "call_b", Name: "now", Arguments: `{}`}},
				Usage:     &fakemodel.Usage{Input: 10, Output: 5}},
			want: adaptertest.Want{Reasoning: "I should add.", Text: "Adding.", Finish: "tool_calls", Raw: "tool_calls", Input: 10, Output: 5,
				Calls: []adaptertest.Call{{ID: "call_a", Name: "add", Args: map[string]any{"a": 1.0, "b": 2.0}}, {ID: "call_b", Name: "now", Args: map[string]any{}}}},
		},
		{
			name: "length, no usage",
			turn: fakemodel.Turn{Text: "cut", FinishReason: "length"},
			want: adaptertest.Want{Text: "cut", Finish: "length", Raw: "length"},
		},
		{
			name: "unknown finish reason",
			turn: fakemodel.Turn{Text: "x", FinishReason: "insufficient_system_resource"},
			want: adaptertest.Want{Text: "x", Finish: "other", Raw: "insufficient_system_resource"},
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
			reqs := srv.Requests()
			if !reqs[0].Stream || reqs[1].Stream {
				t.Errorf("stream flags: %v, %v", reqs[0].Stream, reqs[1].Stream)
			}
		})
	}
}

// TestGatewayShapes replays stream shapes gateways send that OpenAI does not.
func TestGatewayShapes(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		want   adaptertest.Want
	}{
		{
			name: "reasoning field, tool call without index, content as parts, no [DONE] after finish",
			events: []string{
				`{"choices":[{"index":0,"delta":{"reasoning":"hmm"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"A"}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_cache_hit_tokens":4}}`,
			},
			want: adaptertest.Want{Reasoning: "hmm", Text: "A", Finish: "tool_calls", Raw: "stop", Input: 7, Output: 3, CacheRead: 4,
				Calls: []adaptertest.Call{{ID: "c1", Name: "f", Args: map[string]any{"x": 1.0}}}},
		},
		{
			name: "tool call without id gets one; ids repeated on every piece",
			events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"g","arguments":"{"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"g","arguments":"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				`[DONE]`,
			},
			want: adaptertest.Want{Finish: "tool_calls", Raw: "tool_calls",
				Calls: []adaptertest.Call{{Name: "f", Args: map[string]any{}}, {ID: "c2", Name: "g", Args: map[string]any{}}}},
		},
		{
			name: "keep-alive comments and a second choice are ignored",
			events: []string{
				`{"choices":[{"index":0,"delta":{"content":"one"}},{"index":1,"delta":{"content":"two"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
				`[DONE]`,
			},
			want: adaptertest.Want{Text: "one", Finish: "stop", Raw: "stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			var raw []byte
			for _, e := range tt.events {
				raw = append(raw, ": keep-alive\n\n"...)
				raw = append(raw, fakemodel.SSE(fakemodel.Event{Data: e})...)
			}
			srv.Push(fakemodel.Turn{Raw: raw})
			msg := adaptertest.Stream(t, newTestModel(t, srv.URL), hello)
			adaptertest.Check(t, msg, tt.want)
		})
	}
}

func TestErrors(t *testing.T) {
	message := func(want string) func(*testing.T, *provider.Error) {
		return func(t *testing.T, e *provider.Error) {
			if e.Message != want {
				t.Errorf("message %q\nwant    %q", e.Message, want)
			}
		}
	}
	text := fakemodel.Turn{TextChunks: []string{"a", "b", "c"}}
	cut, stall := text, text
	cut.CutAfter = 2
	stall.StallAfter = 2
	tests := []struct {
		name      string
		turn      fakemodel.Turn
		stream    bool
		timeout   time.Duration
		kind      provider.Kind
		retryable bool
		check     func(t *testing.T, e *provider.Error)
	}{
		{name: "401", turn: fakemodel.Turn{Status: 401}, kind: provider.KindAuth},
		{name: "403 stream", turn: fakemodel.Turn{Status: 403}, stream: true, kind: provider.KindAuth},
		{name: "429 with Retry-After", turn: fakemodel.Turn{Status: 429, Header: http.Header{"Retry-After": {"3"}}}, stream: true,
			kind: provider.KindLimit, retryable: true,
			check: func(t *testing.T, e *provider.Error) {
				if e.RetryAfter != 3*time.Second || e.Status != 429 {
					t.Errorf("RetryAfter %v status %d", e.RetryAfter, e.Status)
				}
			}},
		{name: "500", turn: fakemodel.Turn{Status: 500}, kind: provider.KindServer, retryable: true},
		{name: "408", turn: fakemodel.Turn{Status: 408}, kind: provider.KindTimeout, retryable: true},
		{name: "404", turn: fakemodel.Turn{Status: 404, ErrorBody: `{"error":{"message":"no such model","code":"model_not_found"}}`}, kind: provider.KindRequest,
			check: func(t *testing.T, e *provider.Error) {
				if e.Code != "model_not_found" || e.Message != "no such model" {
					t.Errorf("code %q message %q", e.Code, e.Message)
				}
			}},
		{name: "200 with an error body", turn: fakemodel.Turn{StreamError: &fakemodel.StreamError{Type: "rate_limit_exceeded", Message: "slow"}},
			kind: provider.KindLimit, retryable: true},
		{name: "error chunk mid-stream", turn: fakemodel.Turn{Text: "partial", StreamError: &fakemodel.StreamError{Type: "server_error", Message: "boom"}},
			stream: true, kind: provider.KindServer, retryable: true},
		{name: "200 that is not JSON", turn: fakemodel.Turn{Raw: []byte("<html>gateway</html>"), RawContentType: "application/json"}, kind: provider.KindUnknown},
		{name: "200 without choices", turn: fakemodel.Turn{Raw: []byte(`{"id":"x"}`)}, kind: provider.KindUnknown},
		{name: "chunk that is not JSON", turn: fakemodel.Turn{Raw: []byte("data: {oops\n\n")}, stream: true, kind: provider.KindUnknown,
			check: message(`stream event 1 is not JSON; its data begins "{oops"`)},
		// The error names the chunk that broke: its number, its event name
		// when it has one, and the start of its data.
		{name: "a gateway's text after good chunks", stream: true, kind: provider.KindUnknown,
			turn: fakemodel.Turn{Raw: fakemodel.SSE(
				fakemodel.Event{Data: `{"choices":[{"index":0,"delta":{"content":"a"}}]}`},
				fakemodel.Event{Data: `{"choices":[{"index":0,"delta":{"content":"b"}}]}`},
				fakemodel.Event{Name: "error", Data: "upstream request timeout after 60s"})},
			check: message(`stream event 3 ("error") is not JSON; its data begins "upstream request timeout"…`)},
		{name: "stream without [DONE] or finish", turn: fakemodel.Turn{Raw: fakemodel.SSE(fakemodel.Event{Data: `{"choices":[{"index":0,"delta":{"content":"a"}}]}`})},
			stream: true, kind: provider.KindUnknown},
		{name: "connection cut mid-stream", turn: cut, stream: true, kind: provider.KindUnknown},
		{name: "stalled stream and the caller's deadline", turn: stall, stream: true, timeout: 200 * time.Millisecond, kind: provider.KindTimeout},
		{name: "slow headers and the caller's deadline", turn: fakemodel.Turn{Text: "x", Delay: time.Hour}, timeout: 200 * time.Millisecond, kind: provider.KindTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(tt.turn)
			m := newTestModel(t, srv.URL)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			var err error
			if tt.stream {
				_, err = adaptertest.Collect(ctx, m, hello)
			} else {
				_, err = m.Generate(ctx, hello)
			}
			pe := adaptertest.ErrorKind(t, err, tt.kind)
			if pe.Retryable != tt.retryable {
				t.Errorf("retryable = %v, want %v (%v)", pe.Retryable, tt.retryable, pe)
			}
			if tt.check != nil {
				tt.check(t, pe)
			}
		})
	}
}

func TestCancelledStream(t *testing.T) {
	srv := fakemodel.StartTB(t)
	srv.Push(fakemodel.Turn{TextChunks: []string{"a", "b"}, StallAfter: 2})
	ctx, cancel := context.WithCancel(context.Background())
	sr, err := newTestModel(t, srv.URL).Stream(ctx, hello)
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	if _, err := sr.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	for {
		_, err = sr.Recv()
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		t.Fatal("stream ended cleanly after cancel")
	}
	adaptertest.ErrorKind(t, err, provider.KindAborted)
}

func TestOptionsOverConfig(t *testing.T) {
	srv := fakemodel.StartTB(t)
	srv.Push(fakemodel.Turn{Text: "ok"})
	temp := 0.5
	m, err := New(provider.Config{BaseURL: srv.URL, Model: "gpt-test", ToolChoice: "auto", Params: provider.Params{Temperature: &temp}})
	if err != nil {
		t.Fatal(err)
	}
	tools := []*schema.ToolInfo{{Name: "a", Desc: "tool a"}, {Name: "b"}}
	tm, _ := m.WithTools(tools)
	adaptertest.Generate(t, tm, hello, model.WithTemperature(0.25), model.WithMaxTokens(64),
		model.WithToolChoice(schema.ToolChoiceForced, "b"), model.WithStop([]string{"END"}))
	body := srv.Requests()[0].JSON()
	if body["temperature"] != 0.25 || body["max_tokens"] != 64.0 || !reflect.DeepEqual(body["stop"], []any{"END"}) {
		t.Errorf("params %v %v %v", body["temperature"], body["max_tokens"], body["stop"])
	}
	want := map[string]any{"type": "function", "function": map[string]any{"name": "b"}}
	if !reflect.DeepEqual(body["tool_choice"], want) {
		t.Errorf("tool_choice = %v", body["tool_choice"])
	}
	if tools := body["tools"].([]any); len(tools) != 2 {
		t.Errorf("tools = %v", tools)
	}
	if m.tools != nil {
		t.Error("WithTools changed the original model")
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
}

func TestMaxTokensField(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://api.openai.com/v1", "max_completion_tokens"},
		{"https://my.openai.azure.com/openai/v1", "max_completion_tokens"},
		{"https://api.deepseek.com", "max_tokens"},
		{"http://127.0.0.1:8080/v1", "max_tokens"},
	}
	for _, tt := range tests {
		if got := maxTokensField(tt.url); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.url, got, tt.want)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	u := "https://example.com/a.mp3"
	tests := []struct {
		name string
		msg  *schema.Message
		want string
	}{
		{"video", &schema.Message{Role: schema.User, UserInputMultiContent: []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeFileURL,
			File: &schema.MessageInputFile{MessagePartCommon: schema.MessagePartCommon{URL: &u, MIMEType: "video/mp4"}}}}}, "video"},
		{"audio by URL", &schema.Message{Role: schema.User, UserInputMultiContent: []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeAudioURL,
			Audio: &schema.MessageInputAudio{MessagePartCommon: schema.MessagePartCommon{URL: &u}}}}}, "base64"},
		{"pdf by URL", &schema.Message{Role: schema.User, UserInputMultiContent: []schema.MessageInputPart{{Type: schema.ChatMessagePartTypeFileURL,
			File: &schema.MessageInputFile{MessagePartCommon: schema.MessagePartCommon{URL: &u, MIMEType: "application/pdf"}}}}}, "base64"},
		{"unknown role", &schema.Message{Role: "robot", Content: "x"}, "role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			_, err := newTestModel(t, srv.URL).Generate(context.Background(), []*schema.Message{tt.msg})
			pe := adaptertest.ErrorKind(t, err, provider.KindRequest)
			if !strings.Contains(pe.Message, tt.want) || pe.Retryable {
				t.Errorf("error %v, want it to mention %q", pe, tt.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
	if _, err := New(provider.Config{BaseURL: "http://x"}); err == nil {
		t.Error("New without Model succeeded")
	}
	if m, err := New(provider.Config{Model: "m"}); err != nil || m.cfg.BaseURL != DefaultBaseURL {
		t.Errorf("New without BaseURL: %v, %v", m, err)
	}
}

// TestSDKOptions checks the AI SDK switches among the vendor options: they
// change the request and are not sent as fields.
func TestSDKOptions(t *testing.T) {
	schemaOut := &provider.Output{Kind: provider.OutputObject, Schema: map[string]any{"type": "object"}}
	input := []*schema.Message{schema.SystemMessage("be brief"), schema.UserMessage("hi")}
	tests := []struct {
		name     string
		vendor   map[string]any
		roles    []any
		format   string
		strict   any
		leftOver string
	}{
		{"defaults", nil, []any{"system", "user"}, "json_schema", nil, ""},
		{"developer and strict", map[string]any{"systemMessageMode": "developer", "strictJsonSchema": true}, []any{"developer", "user"}, "json_schema", true, ""},
		{"remove and no structured outputs", map[string]any{"systemMessageMode": "remove", "structuredOutputs": false, "forceReasoning": true, "user": "u1"},
			[]any{"user"}, "json_object", nil, "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(fakemodel.Turn{Text: "{}"})
			m, err := New(provider.Config{BaseURL: srv.URL, Model: "m", Output: schemaOut, VendorOptions: tt.vendor})
			if err != nil {
				t.Fatal(err)
			}
			adaptertest.Generate(t, m, input)
			body := srv.Requests()[0].JSON()
			var roles []any
			for _, msg := range body["messages"].([]any) {
				roles = append(roles, msg.(map[string]any)["role"])
			}
			rf := body["response_format"].(map[string]any)
			var strict any
			if js, ok := rf["json_schema"].(map[string]any); ok {
				strict = js["strict"]
			}
			if !reflect.DeepEqual(roles, tt.roles) || rf["type"] != tt.format || strict != tt.strict {
				t.Errorf("roles %v format %v strict %v", roles, rf["type"], strict)
			}
			for _, k := range []string{"system_message_mode", "strict_json_schema", "structured_outputs", "force_reasoning"} {
				if _, ok := body[k]; ok {
					t.Errorf("%s sent as a field", k)
				}
			}
			if tt.leftOver != "" && body[tt.leftOver] == nil {
				t.Errorf("%s not sent", tt.leftOver)
			}
		})
	}
}
