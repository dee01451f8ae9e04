package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// at walks a decoded JSON value by object keys and array indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// body builds a request and returns it as decoded JSON.
func body(t *testing.T, cfg provider.Config, tools []*schema.ToolInfo, input []*schema.Message, opts ...model.Option) (map[string]any, error) {
	t.Helper()
	cfg.Model = "claude-test"
	b, err := buildRequest(cfg, provider.ApplyOptions(cfg, tools, opts...), input, false)
	if err != nil {
		return nil, err
	}
	return adaptertest.Decode(t, b), nil
}

func TestRequestOptions(t *testing.T) {
	user := []*schema.Message{schema.UserMessage("hi")}
	tools := adaptertest.Tools()
	maxOut, temp := 1000, 0.5
	objectSchema := map[string]any{"type": "object", "properties": map[string]any{
		"total": map[string]any{"type": "number"},
		"items": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "string"}}}},
		"extra": map[string]any{"type": "object", "additionalProperties": true},
	}}
	tests := []struct {
		name  string
		cfg   provider.Config
		tools []*schema.ToolInfo
		opts  []model.Option
		want  map[string]any // JSON path (dot separated) → value; nil value means absent
	}{
		{"no tool choice", provider.Config{}, tools, nil, map[string]any{"tool_choice": nil, "max_tokens": 4096.0}},
		{"auto", provider.Config{ToolChoice: "auto"}, tools, nil, map[string]any{"tool_choice": adaptertest.JSON(`{"type":"auto"}`)}},
		{"required", provider.Config{ToolChoice: "required"}, tools, nil, map[string]any{"tool_choice": adaptertest.JSON(`{"type":"any"}`)}},
		{"none", provider.Config{ToolChoice: "none"}, tools, nil, map[string]any{"tool_choice": adaptertest.JSON(`{"type":"none"}`)}},
		{"one tool", provider.Config{ToolChoice: "weather"}, tools, nil, map[string]any{"tool_choice": adaptertest.JSON(`{"type":"tool","name":"weather"}`)}},
		{"choice without tools", provider.Config{ToolChoice: "required"}, nil, nil, map[string]any{"tool_choice": nil, "tools": nil}},
		{"omitted choice", provider.Config{ToolChoice: "required", OmitToolChoice: true}, tools, nil, map[string]any{"tool_choice": nil}},
		{"eino options win", provider.Config{ToolChoice: "auto", Params: provider.Params{Temperature: &temp}}, tools,
			[]model.Option{model.WithTemperature(0.25), model.WithMaxTokens(55), model.WithTopP(0.5), model.WithStop([]string{"x"}),
				model.WithToolChoice(schema.ToolChoiceForced, "screenshot")},
			map[string]any{"temperature": 0.25, "max_tokens": 55.0, "top_p": 0.5, "stop_sequences": []any{"x"},
				"tool_choice": adaptertest.JSON(`{"type":"tool","name":"screenshot"}`)}},
		{"seed and penalties are not sent", provider.Config{Params: provider.Params{Seed: new(int64), PresencePenalty: &temp, FrequencyPenalty: &temp}}, nil, nil,
			map[string]any{"seed": nil, "presence_penalty": nil, "frequency_penalty": nil}},
		{"thinking budget", provider.Config{Params: provider.Params{MaxOutputTokens: &maxOut, Temperature: &temp},
			VendorOptions: map[string]any{"thinking": map[string]any{"type": "enabled", "budgetTokens": 2048.0}}}, nil, nil,
			map[string]any{"max_tokens": 3048.0, "temperature": nil, "thinking": adaptertest.JSON(`{"type":"enabled","budget_tokens":2048}`)}},
		{"adaptive thinking", provider.Config{Params: provider.Params{Temperature: &temp},
			VendorOptions: map[string]any{"thinking": map[string]any{"type": "adaptive"}, "sendReasoning": true}}, nil, nil,
			map[string]any{"max_tokens": 4096.0, "temperature": nil, "thinking": adaptertest.JSON(`{"type":"adaptive"}`), "send_reasoning": nil}},
		{"effort and parallel tool use", provider.Config{ToolChoice: "auto",
			VendorOptions: map[string]any{"effort": "low", "disableParallelToolUse": true, "metadata": map[string]any{"userId": "u"}}}, tools, nil,
			map[string]any{"output_config": adaptertest.JSON(`{"effort":"low"}`), "tool_choice": adaptertest.JSON(`{"type":"auto","disable_parallel_tool_use":true}`),
				"metadata": adaptertest.JSON(`{"user_id":"u"}`), "effort": nil}},
		{"parallel tool use without a choice", provider.Config{VendorOptions: map[string]any{"disableParallelToolUse": true}}, tools, nil,
			map[string]any{"tool_choice": adaptertest.JSON(`{"type":"auto","disable_parallel_tool_use":true}`)}},
		{"structured output", provider.Config{Output: &provider.Output{Kind: provider.OutputObject, Schema: objectSchema}}, nil, nil,
			map[string]any{
				"output_config.format.type":                                               "json_schema",
				"output_config.format.schema.additionalProperties":                        false,
				"output_config.format.schema.properties.items.items.additionalProperties": false,
				"output_config.format.schema.properties.extra.additionalProperties":       true,
			}},
		{"json without a schema", provider.Config{Output: &provider.Output{Kind: provider.OutputJSON}}, nil, nil, map[string]any{"output_config": nil}},
		{"cache retention 24h", provider.Config{Cache: provider.Cache{Enabled: true, Retention: "24h"}}, nil, nil,
			map[string]any{"messages.0.content.0.cache_control": adaptertest.JSON(`{"type":"ephemeral","ttl":"1h"}`)}},
		{"cache retention 30s", provider.Config{Cache: provider.Cache{Enabled: true, Retention: "30s"}}, nil, nil,
			map[string]any{"messages.0.content.0.cache_control": adaptertest.JSON(`{"type":"ephemeral","ttl":"5m"}`)}},
		{"cache retention unparsable", provider.Config{Cache: provider.Cache{Enabled: true, Retention: "forever"}}, nil, nil,
			map[string]any{"messages.0.content.0.cache_control": adaptertest.JSON(`{"type":"ephemeral","ttl":"forever"}`)}},
		{"cache without retention", provider.Config{Cache: provider.Cache{Enabled: true, Body: map[string]any{"x": 1.0}}}, nil, nil,
			map[string]any{"messages.0.content.0.cache_control": adaptertest.JSON(`{"type":"ephemeral"}`), "x": 1.0, "system": nil}},
		{"cache off", provider.Config{Cache: provider.Cache{Retention: "1h", Body: map[string]any{"x": 1.0}}}, nil, nil,
			map[string]any{"messages.0.content.0.cache_control": nil, "x": nil}},
		{"body replaces ours", provider.Config{Body: map[string]any{"max_tokens": 9.0, "model": "other"}}, nil, nil,
			map[string]any{"max_tokens": 9.0, "model": "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := body(t, tt.cfg, tt.tools, user, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.want {
				var steps []any
				for _, s := range strings.Split(path, ".") {
					if n, ok := index(s); ok {
						steps = append(steps, n)
					} else {
						steps = append(steps, s)
					}
				}
				if v := at(got, steps...); !reflect.DeepEqual(v, want) {
					t.Errorf("%s = %#v, want %#v", path, v, want)
				}
			}
		})
	}
}

func index(s string) (int, bool) {
	if len(s) != 1 || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	return int(s[0] - '0'), true
}

func TestRequestMessages(t *testing.T) {
	str := func(s string) *string { return &s }
	file := func(mime string, data, url *string) schema.MessageInputPart {
		return schema.MessageInputPart{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
			MessagePartCommon: schema.MessagePartCommon{MIMEType: mime, Base64Data: data, URL: url}, Name: "f"}}
	}
	userParts := func(parts ...schema.MessageInputPart) []*schema.Message {
		return []*schema.Message{{Role: schema.User, UserInputMultiContent: parts}}
	}
	thinking := func(data string) map[string]any {
		return map[string]any{provider.ExtraReasoningData: map[string]string{reasoningKey: data}}
	}
	tests := []struct {
		name      string
		input     []*schema.Message
		reasoning bool
		cache     bool
		want      string // the messages as JSON; "" when an error is wanted
		system    string // the system as JSON, when set
	}{
		{"system in the middle is user text",
			[]*schema.Message{schema.SystemMessage("a"), schema.SystemMessage("b"), schema.UserMessage("u"), schema.SystemMessage("note")}, false, false,
			`[{"role":"user","content":[{"type":"text","text":"u"},{"type":"text","text":"note"}]}]`,
			`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`},
		{"text file as a text document", userParts(file("text/plain", str("aGVsbG8="), nil)), false, false,
			`[{"role":"user","content":[{"type":"document","title":"f","source":{"type":"text","media_type":"text/plain","data":"hello"}}]}]`, ""},
		{"pdf inline", userParts(file("", nil, str("data:application/pdf;base64,JVBE"))), false, false,
			`[{"role":"user","content":[{"type":"document","title":"f","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]`, ""},
		{"image by URL", userParts(schema.MessageInputPart{Type: schema.ChatMessagePartTypeImageURL, Image: &schema.MessageInputImage{
			MessagePartCommon: schema.MessagePartCommon{URL: str("https://x/a.png")}}}), false, false,
			`[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/a.png"}}]}]`, ""},
		{"audio is refused", userParts(file("audio/wav", str("AA"), nil)), false, false, "", ""},
		{"video is refused", userParts(schema.MessageInputPart{Type: schema.ChatMessagePartTypeVideoURL, Video: &schema.MessageInputVideo{
			MessagePartCommon: schema.MessagePartCommon{URL: str("https://x/v.mp4")}}}), false, false, "", ""},
		{"zip is refused", userParts(file("application/zip", str("AA"), nil)), false, false, "", ""},
		{"inline image without a type is refused", userParts(schema.MessageInputPart{Type: schema.ChatMessagePartTypeImageURL, Image: &schema.MessageInputImage{
			MessagePartCommon: schema.MessagePartCommon{Base64Data: str("AA")}}}), false, false, "", ""},
		{"broken arguments are kept as text",
			[]*schema.Message{{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{ID: "c", Function: schema.FunctionCall{Name: "f", Arguments: `{"a":`}}}}}, false, false,
			`[{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{"raw_arguments":"{\"a\":"}}]}]`, ""},
		{"reasoning without a signature is dropped",
			[]*schema.Message{{Role: schema.Assistant, Content: "x", ReasoningContent: "r"}}, true, false,
			`[{"role":"assistant","content":[{"type":"text","text":"x"}]}]`, ""},
		{"reasoning split by lengths",
			[]*schema.Message{{Role: schema.Assistant, Content: "x", ReasoningContent: "onetwo", Extra: thinking(`[{"signature":"s1","length":3},{"signature":"s2","length":3}]`)}}, true, false,
			`[{"role":"assistant","content":[{"type":"thinking","thinking":"one","signature":"s1"},{"type":"thinking","thinking":"two","signature":"s2"},{"type":"text","text":"x"}]}]`, ""},
		{"changed reasoning with one signature is sent whole",
			[]*schema.Message{{Role: schema.Assistant, Content: "x", ReasoningContent: "edited", Extra: thinking(`[{"signature":"s1","length":3}]`)}}, true, false,
			`[{"role":"assistant","content":[{"type":"thinking","thinking":"edited","signature":"s1"},{"type":"text","text":"x"}]}]`, ""},
		{"reasoning not sent without SendReasoning",
			[]*schema.Message{{Role: schema.Assistant, Content: "x", ReasoningContent: "one", Extra: thinking(`[{"signature":"s1","length":3}]`)}}, false, false,
			`[{"role":"assistant","content":[{"type":"text","text":"x"}]}]`, ""},
		{"cache breakpoint skips thinking",
			[]*schema.Message{schema.UserMessage("u"), {Role: schema.Assistant, ReasoningContent: "one", Extra: thinking(`[{"signature":"s1","length":3}]`), Content: "x"}}, true, true,
			`[{"role":"user","content":[{"type":"text","text":"u"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"one","signature":"s1"},{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]`, ""},
		{"empty messages are skipped",
			[]*schema.Message{schema.UserMessage("u"), {Role: schema.Assistant}, schema.UserMessage("v")}, false, false,
			`[{"role":"user","content":[{"type":"text","text":"u"},{"type":"text","text":"v"}]}]`, ""},
		{"tool results go first in their turn",
			[]*schema.Message{{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{ID: "c", Function: schema.FunctionCall{Name: "f"}}}},
				schema.UserMessage("wait"), {Role: schema.Tool, ToolCallID: "c", Content: "r"}}, false, false,
			`[{"role":"assistant","content":[{"type":"tool_use","id":"c","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"r"},{"type":"text","text":"wait"}]}]`, ""},
		{"failed tool result carries is_error",
			[]*schema.Message{{Role: schema.Tool, ToolCallID: "c", Content: "boom", Extra: map[string]any{provider.ExtraToolError: true}}}, false, false,
			`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"boom","is_error":true}]}]`, ""},
		{"tool result without content",
			[]*schema.Message{{Role: schema.Tool, ToolCallID: "c"}}, false, false,
			`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"c"}]}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := body(t, provider.Config{SendReasoning: tt.reasoning, Cache: provider.Cache{Enabled: tt.cache}}, nil, tt.input)
			if tt.want == "" {
				adaptertest.ErrorKind(t, err, provider.KindRequest)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			adaptertest.EqualJSON(t, "messages", got["messages"], tt.want)
			if tt.system != "" {
				adaptertest.EqualJSON(t, "system", got["system"], tt.system)
			}
		})
	}
}

// TestReasoningRoundTrip checks that thinking blocks from a response go back
// exactly, signatures included, when reasoning is sent, and with the
// redacted block from a recorded stream.
func TestReasoningRoundTrip(t *testing.T) {
	srv := fakemodel.StartTB(t)
	m, err := New(provider.Config{BaseURL: srv.URL, Model: "claude-test", SendReasoning: true})
	if err != nil {
		t.Fatal(err)
	}
	redacted := fakemodel.SSE(
		fakemodel.Event{Name: "message_start", Data: `{"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}`},
		fakemodel.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`},
		fakemodel.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"first"}}`},
		fakemodel.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-a"}}`},
		fakemodel.Event{Name: "content_block_stop", Data: `{"type":"content_block_stop","index":0}`},
		fakemodel.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`},
		fakemodel.Event{Name: "content_block_stop", Data: `{"type":"content_block_stop","index":1}`},
		fakemodel.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":"","signature":""}}`},
		fakemodel.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":2,"delta":{"type":"thinking_delta","thinking":"second"}}`},
		fakemodel.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":2,"delta":{"type":"signature_delta","signature":"sig-b"}}`},
		fakemodel.Event{Name: "content_block_stop", Data: `{"type":"content_block_stop","index":2}`},
		fakemodel.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_9","name":"weather","input":{}}}`},
		fakemodel.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Oslo\"}"}}`},
		fakemodel.Event{Name: "content_block_stop", Data: `{"type":"content_block_stop","index":3}`},
		fakemodel.Event{Name: "message_delta", Data: `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`},
		fakemodel.Event{Name: "message_stop", Data: `{"type":"message_stop"}`},
	)
	srv.Push(fakemodel.Turn{Raw: redacted}, fakemodel.Turn{Text: "done"})
	msg := adaptertest.Stream(t, m, []*schema.Message{schema.UserMessage("weather?")})
	if msg.ReasoningContent != "firstsecond" {
		t.Fatalf("reasoning = %q", msg.ReasoningContent)
	}
	next := []*schema.Message{schema.UserMessage("weather?"), msg, schema.ToolMessage("sunny", "toolu_9", schema.WithToolName("weather"))}
	adaptertest.Generate(t, m, next)
	reqs := srv.Requests()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []any  `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &req); err != nil {
		t.Fatal(err)
	}
	want := adaptertest.JSON(`[
		{"type":"thinking","thinking":"first","signature":"sig-a"},
		{"type":"redacted_thinking","data":"opaque"},
		{"type":"thinking","thinking":"second","signature":"sig-b"},
		{"type":"tool_use","id":"toolu_9","name":"weather","input":{"city":"Oslo"}}]`)
	if len(req.Messages) != 3 || !reflect.DeepEqual(any(req.Messages[1].Content), want) {
		t.Errorf("assistant turn sent back = %+v", req.Messages)
	}
}
