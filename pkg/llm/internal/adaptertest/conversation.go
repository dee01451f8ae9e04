package adaptertest

import (
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Conversation data, exported so tests can assert on it.
const (
	// PNG is a tiny base64 image.
	PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	// Reasoning is the assistant turn's reasoning text.
	Reasoning = "The picture shows the Eiffel Tower."
)

// Conversation is one conversation for golden request bodies: a system
// prompt; a user turn with text, an inline image and a PDF by URL; an
// assistant turn with reasoning, text and two tool calls; their results, one
// JSON and one with text and an image; and a last user turn. The assistant
// turn carries provider data for every protocol (each adapter reads its own
// keys): Anthropic thinking signatures, Gemini thought signatures and call id.
func Conversation() []*schema.Message {
	png, pdfURL := PNG, "https://example.com/report.pdf"
	return []*schema.Message{
		schema.SystemMessage("You are a careful assistant."),
		{Role: schema.User, UserInputMultiContent: []schema.MessageInputPart{
			{Type: schema.ChatMessagePartTypeText, Text: "Where is this? Then check the weather there."},
			{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
				MessagePartCommon: schema.MessagePartCommon{Base64Data: &png, MIMEType: "image/png"}, Name: "photo.png"}},
			{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
				MessagePartCommon: schema.MessagePartCommon{URL: &pdfURL, MIMEType: "application/pdf"}, Name: "report.pdf"}},
		}},
		{
			Role:             schema.Assistant,
			Content:          "It is Paris. Let me check the weather.",
			ReasoningContent: Reasoning,
			Extra: map[string]any{provider.ExtraReasoningData: map[string]string{
				"anthropic.thinking":       `[{"signature":"sig-thinking-1","length":35},{"redacted":"redacted-data"}]`,
				"gemini.thought_signature": "sig-gemini-text",
			}},
			ToolCalls: []schema.ToolCall{
				{ID: "call_1", Type: "function", Function: schema.FunctionCall{Name: "weather", Arguments: `{"city":"Paris"}`},
					Extra: map[string]any{provider.ExtraToolCallData: map[string]string{"gemini.thought_signature": "sig-gemini-call", "gemini.id": "gem-1"}}},
				{ID: "call_2", Type: "function", Function: schema.FunctionCall{Name: "screenshot"}},
			},
		},
		{Role: schema.Tool, ToolCallID: "call_1", ToolName: "weather", Content: `{"temp":21,"sky":"clear"}`},
		{Role: schema.Tool, ToolCallID: "call_2", ToolName: "screenshot", UserInputMultiContent: []schema.MessageInputPart{
			{Type: schema.ChatMessagePartTypeText, Text: "Current screen:"},
			{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
				MessagePartCommon: schema.MessagePartCommon{Base64Data: &png, MIMEType: "image/png"}}},
		}},
		schema.UserMessage("Thanks. Summarise in one line."),
	}
}

// Tools are the conversation's tools: one with parameters, one without.
func Tools() []*schema.ToolInfo {
	return []*schema.ToolInfo{
		{Name: "weather", Desc: "Current weather for a city.", ParamsOneOf: schema.NewParamsOneOfByParams(map[string]*schema.ParameterInfo{
			"city": {Type: schema.String, Desc: "City name", Required: true},
		})},
		{Name: "screenshot", Desc: "Capture the screen."},
	}
}

// GoldenConfig is the Config of the golden requests, with caching on or off:
// generation parameters, a tool choice, a header, provider body fields and
// the vendor options given; SendReasoning follows cache so that both ways
// of sending reasoning are covered.
func GoldenConfig(url, model string, cache bool, vendor map[string]any) provider.Config {
	temp, topP, topK, maxOut, seed := 0.3, 0.9, 40, 1024, int64(7)
	return provider.Config{
		BaseURL: url, APIKey: "test-key", Model: model,
		Headers: map[string]string{"X-App": "example"},
		Body:    map[string]any{"custom_field": true},
		Params: provider.Params{Temperature: &temp, TopP: &topP, TopK: &topK, MaxOutputTokens: &maxOut,
			Stop: []string{"END"}, Seed: &seed},
		ToolChoice:    "auto",
		Cache:         provider.Cache{Enabled: cache, Key: "golden-key", Retention: "1h", Body: map[string]any{"cache_namespace": "agent"}},
		VendorOptions: vendor,
		SendReasoning: cache,
	}
}
