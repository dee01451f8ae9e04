// Package goldentest holds the conversation the OpenAI adapters' golden
// request tests send: one that has every kind of message, and its tools.
package goldentest

import (
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// PNG is a tiny base64 image.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// PDF is a tiny base64 PDF.
const PDF = "JVBERi0xLjQKJSVFT0YK"

// Conversation is a conversation with a system prompt, a user message with
// text, two images (inline and by URL) and a PDF, an assistant message with
// reasoning, text and a tool call, a tool result with text and an image, and
// a last user message.
func Conversation() []*schema.Message {
	png, pdf := PNG, PDF
	url := "https://example.com/cat.jpg"
	return []*schema.Message{
		schema.SystemMessage("You are terse."),
		{Role: schema.User, UserInputMultiContent: []schema.MessageInputPart{
			{Type: schema.ChatMessagePartTypeText, Text: "What is in these pictures?"},
			{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
				MessagePartCommon: schema.MessagePartCommon{Base64Data: &png, MIMEType: "image/png"}, Name: "dot.png"}},
			{Type: schema.ChatMessagePartTypeImageURL, Image: &schema.MessageInputImage{
				MessagePartCommon: schema.MessagePartCommon{URL: &url}, Detail: schema.ImageURLDetailLow}},
			{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
				MessagePartCommon: schema.MessagePartCommon{Base64Data: &pdf, MIMEType: "application/pdf"}, Name: "notes.pdf"}},
		}},
		{Role: schema.Assistant, Content: "Let me look it up.", ReasoningContent: "The second one is a cat.",
			Extra:     map[string]any{provider.ExtraReasoningData: map[string]string{"openai.reasoning": `[{"id":"rs_1","encrypted_content":"gAAAA-opaque"}]`}},
			ToolCalls: []schema.ToolCall{{ID: "call_1", Type: "function", Function: schema.FunctionCall{Name: "lookup", Arguments: `{"q":"cat"}`}}}},
		{Role: schema.Tool, ToolCallID: "call_1", ToolName: "lookup", UserInputMultiContent: []schema.MessageInputPart{
			{Type: schema.ChatMessagePartTypeText, Text: "A cat. Reference picture:"},
			{Type: schema.ChatMessagePartTypeFileURL, File: &schema.MessageInputFile{
				MessagePartCommon: schema.MessagePartCommon{Base64Data: &png, MIMEType: "image/png"}}},
		}},
		schema.UserMessage("Thanks. And now?"),
	}
}

// Tools are the conversation's tools: one with parameters, one without.
func Tools() []*schema.ToolInfo {
	return []*schema.ToolInfo{
		{Name: "lookup", Desc: "Look a thing up.", ParamsOneOf: schema.NewParamsOneOfByParams(map[string]*schema.ParameterInfo{
			"q": {Type: schema.String, Desc: "what to look up", Required: true},
		})},
		{Name: "now", Desc: "The current time."},
	}
}
