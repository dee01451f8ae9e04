package gemini

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// body builds a request and returns it as decoded JSON.
func body(t *testing.T, cfg provider.Config, tools []*schema.ToolInfo, input []*schema.Message, opts ...model.Option) (map[string]any, error) {
	t.Helper()
	b, err := buildRequest(cfg, provider.ApplyOptions(cfg, tools, opts...), input)
	if err != nil {
		return nil, err
	}
	return adaptertest.Decode(t, b), nil
}

func TestRequestOptions(t *testing.T) {
	user := []*schema.Message{schema.UserMessage("hi")}
	tools := adaptertest.Tools()
	penalty := 0.5
	schemaObj := map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}}
	tests := []struct {
		name  string
		cfg   provider.Config
		tools []*schema.ToolInfo
		opts  []model.Option
		want  map[string]string // top-level key → JSON ("" means absent)
	}{
		{"no choice", provider.Config{}, tools, nil, map[string]string{"toolConfig": ""}},
		{"auto", provider.Config{ToolChoice: "auto"}, tools, nil, map[string]string{"toolConfig": `{"functionCallingConfig":{"mode":"AUTO"}}`}},
		{"required", provider.Config{ToolChoice: "required"}, tools, nil, map[string]string{"toolConfig": `{"functionCallingConfig":{"mode":"ANY"}}`}},
		{"none", provider.Config{ToolChoice: "none"}, tools, nil, map[string]string{"toolConfig": `{"functionCallingConfig":{"mode":"NONE"}}`}},
		{"one tool", provider.Config{ToolChoice: "weather"}, tools, nil,
			map[string]string{"toolConfig": `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["weather"]}}`}},
		{"choice without tools", provider.Config{ToolChoice: "required"}, nil, nil, map[string]string{"toolConfig": "", "tools": ""}},
		{"eino options", provider.Config{ToolChoice: "auto", Params: provider.Params{PresencePenalty: &penalty, FrequencyPenalty: &penalty}}, tools,
			[]model.Option{model.WithTemperature(0.25), model.WithMaxTokens(55), model.WithTopP(0.5), model.WithStop([]string{"x"}), model.WithToolChoice(schema.ToolChoiceForbidden)},
			map[string]string{
				"generationConfig": `{"temperature":0.25,"maxOutputTokens":55,"topP":0.5,"stopSequences":["x"],"presencePenalty":0.5,"frequencyPenalty":0.5}`,
				"toolConfig":       `{"functionCallingConfig":{"mode":"NONE"}}`,
			}},
		{"structured output", provider.Config{Output: &provider.Output{Kind: provider.OutputObject, Schema: schemaObj}}, nil, nil,
			map[string]string{"generationConfig": `{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"total":{"type":"number"}}}}`}},
		{"json without a schema", provider.Config{Output: &provider.Output{Kind: provider.OutputJSON}}, nil, nil,
			map[string]string{"generationConfig": `{"responseMimeType":"application/json"}`}},
		{"vendor options", provider.Config{ToolChoice: "auto", VendorOptions: map[string]any{
			"thinkingConfig":    map[string]any{"thinkingBudget": 512.0},
			"generationConfig":  map[string]any{"candidateCount": 1.0},
			"retrievalConfig":   map[string]any{"languageCode": "en"},
			"cachedContent":     "cachedContents/abc",
			"labels":            map[string]any{"team": "a"},
			"structuredOutputs": false,
		}}, tools, nil, map[string]string{
			"generationConfig": `{"thinkingConfig":{"thinkingBudget":512},"candidateCount":1}`,
			"toolConfig":       `{"functionCallingConfig":{"mode":"AUTO"},"retrievalConfig":{"languageCode":"en"}}`,
			"cachedContent":    `"cachedContents/abc"`,
			"labels":           `{"team":"a"}`,
		}},
		{"cache sends nothing", provider.Config{Cache: provider.Cache{Enabled: true, Key: "k", Retention: "1h", Body: map[string]any{"x": 1.0}}}, nil, nil,
			map[string]string{"x": "", "generationConfig": ""}},
		{"body replaces ours", provider.Config{Body: map[string]any{"contents": []any{}}}, nil, nil, map[string]string{"contents": `[]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := body(t, tt.cfg, tt.tools, user, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range tt.want {
				v, ok := got[key]
				if want == "" {
					if ok {
						t.Errorf("%s = %v, want absent", key, v)
					}
					continue
				}
				adaptertest.EqualJSON(t, key, v, want)
			}
		})
	}
}

func TestRequestContents(t *testing.T) {
	str := func(s string) *string { return &s }
	file := func(mime string, data, url *string) schema.MessageInputPart {
		return schema.MessageInputPart{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
			MessagePartCommon: schema.MessagePartCommon{MIMEType: mime, Base64Data: data, URL: url}}}
	}
	userParts := func(parts ...schema.MessageInputPart) []*schema.Message {
		return []*schema.Message{{Role: schema.User, UserInputMultiContent: parts}}
	}
	call := func(id, name, args string) schema.ToolCall {
		return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
	}
	tests := []struct {
		name      string
		input     []*schema.Message
		reasoning bool
		want      string // contents as JSON; "" when an error is wanted
		system    string
	}{
		{"system in the middle is user text",
			[]*schema.Message{schema.SystemMessage("a"), schema.UserMessage("u"), schema.SystemMessage("note")}, false,
			`[{"role":"user","parts":[{"text":"u"},{"text":"note"}]}]`, `{"parts":[{"text":"a"}]}`},
		{"audio, video and a URL typed by its extension",
			userParts(file("audio/wav", str("AA"), nil),
				schema.MessageInputPart{Type: schema.ChatMessagePartTypeVideoURL, Video: &schema.MessageInputVideo{MessagePartCommon: schema.MessagePartCommon{URL: str("https://x/v.mp4?sig=1")}}},
				file("", nil, str("https://x/a.png"))), false,
			`[{"role":"user","parts":[{"inlineData":{"mimeType":"audio/wav","data":"AA"}},{"fileData":{"mimeType":"video/mp4","fileUri":"https://x/v.mp4?sig=1"}},{"fileData":{"mimeType":"image/png","fileUri":"https://x/a.png"}}]}]`, ""},
		{"inline data without a type is refused", userParts(file("", str("AA"), nil)), false, "", ""},
		{"tool results: text, JSON, name from the call",
			[]*schema.Message{
				{Role: schema.Assistant, ToolCalls: []schema.ToolCall{call("c1", "a", `{}`), call("c2", "b", `[1]`)}},
				{Role: schema.Tool, ToolCallID: "c1", ToolName: "a", Content: "plain text"},
				{Role: schema.Tool, ToolCallID: "c2", Content: `[1,2]`},
			}, false,
			`[{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}},{"functionCall":{"name":"b","args":{"raw_arguments":"[1]"}}}]},
			  {"role":"user","parts":[{"functionResponse":{"name":"a","response":{"output":"plain text"}}},{"functionResponse":{"name":"b","response":{"output":[1,2]}}}]}]`, ""},
		{"failed tool result is an error response",
			[]*schema.Message{
				{Role: schema.Assistant, ToolCalls: []schema.ToolCall{call("c1", "a", `{}`)}},
				{Role: schema.Tool, ToolCallID: "c1", ToolName: "a", Content: "boom", Extra: map[string]any{provider.ExtraToolError: true}},
			}, false,
			`[{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}}]},
			  {"role":"user","parts":[{"functionResponse":{"name":"a","response":{"error":"boom"}}}]}]`, ""},
		{"function responses go first in their turn",
			[]*schema.Message{{Role: schema.Assistant, ToolCalls: []schema.ToolCall{call("c1", "a", `{}`)}},
				schema.UserMessage("wait"), {Role: schema.Tool, ToolCallID: "c1", Content: "r"}}, false,
			`[{"role":"model","parts":[{"functionCall":{"name":"a","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"a","response":{"output":"r"}}},{"text":"wait"}]}]`, ""},
		{"reasoning sent back only with SendReasoning",
			[]*schema.Message{{Role: schema.Assistant, Content: "x", ReasoningContent: "r",
				Extra: map[string]any{provider.ExtraReasoningData: map[string]any{signatureKey: "sig"}}}}, false,
			`[{"role":"model","parts":[{"text":"x"}]}]`, ""},
		{"reasoning sent back",
			[]*schema.Message{{Role: schema.Assistant, Content: "x", ReasoningContent: "r",
				Extra: map[string]any{provider.ExtraReasoningData: map[string]any{signatureKey: "sig"}}}}, true,
			`[{"role":"model","parts":[{"text":"r","thought":true},{"text":"x","thoughtSignature":"sig"}]}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := body(t, provider.Config{SendReasoning: tt.reasoning}, nil, tt.input)
			if tt.want == "" {
				adaptertest.ErrorKind(t, err, provider.KindRequest)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			adaptertest.EqualJSON(t, "contents", got["contents"], tt.want)
			if tt.system != "" {
				adaptertest.EqualJSON(t, "systemInstruction", got["systemInstruction"], tt.system)
			}
		})
	}
}

// TestModelPath checks that a model name with a slash is used as the path.
func TestModelPath(t *testing.T) {
	srv := fakemodel.StartTB(t)
	tests := []struct{ model, path string }{
		{"gemini-x", "/models/gemini-x:generateContent"},
		{"models/gemini-y", "/models/gemini-y:generateContent"},
	}
	for _, tt := range tests {
		m, err := New(provider.Config{BaseURL: srv.URL + "/", Model: tt.model})
		if err != nil {
			t.Fatal(err)
		}
		srv.Push(fakemodel.Turn{Text: "ok"})
		adaptertest.Generate(t, m, []*schema.Message{schema.UserMessage("hi")})
		reqs := srv.Requests()
		if got := reqs[len(reqs)-1].Path; got != tt.path {
			t.Errorf("model %s: path %s, want %s", tt.model, got, tt.path)
		}
	}
	if _, err := New(provider.Config{}); err == nil {
		t.Error("New without a model succeeded")
	}
}

// TestSignatureRoundTrip checks that a call's thought signature and id go
// back with the call and its response, even without SendReasoning.
func TestSignatureRoundTrip(t *testing.T) {
	srv := fakemodel.StartTB(t)
	m, err := New(provider.Config{BaseURL: srv.URL, Model: "gemini-test"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Push(fakemodel.Turn{ReasoningSignature: "sig-call", ToolCalls: []fakemodel.ToolCall{{ID: "gem-7", Name: "weather", Arguments: `{"city":"Oslo"}`}, {Name: "screenshot"}}},
		fakemodel.Turn{Text: "done"})
	msg := adaptertest.Stream(t, m, []*schema.Message{schema.UserMessage("weather?")})
	next := []*schema.Message{schema.UserMessage("weather?"), msg,
		schema.ToolMessage(`{"sky":"clear"}`, msg.ToolCalls[0].ID, schema.WithToolName("weather")),
		schema.ToolMessage("shot", msg.ToolCalls[1].ID, schema.WithToolName("screenshot"))}
	adaptertest.Generate(t, m, next)
	reqs := srv.Requests()
	var req struct {
		Contents []any `json:"contents"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &req); err != nil {
		t.Fatal(err)
	}
	want := adaptertest.JSON(`[
		{"role":"user","parts":[{"text":"weather?"}]},
		{"role":"model","parts":[
			{"functionCall":{"id":"gem-7","name":"weather","args":{"city":"Oslo"}},"thoughtSignature":"sig-call"},
			{"functionCall":{"name":"screenshot","args":{}}}]},
		{"role":"user","parts":[
			{"functionResponse":{"id":"gem-7","name":"weather","response":{"output":{"sky":"clear"}}}},
			{"functionResponse":{"name":"screenshot","response":{"output":"shot"}}}]}]`)
	if !reflect.DeepEqual(req.Contents, want) {
		b, _ := json.Marshal(req.Contents)
		t.Errorf("contents = %s", b)
	}
}
