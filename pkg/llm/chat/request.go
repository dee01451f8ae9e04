package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/internal/openai"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

type message struct {
	Role string `json:"role"`
	// Content is a string, a []part, or nil (sent as null).
	Content          any        `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
}

type part struct {
	Type       string      `json:"type"`
	Text       *string     `json:"text,omitempty"`
	ImageURL   *imageURL   `json:"image_url,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
	File       *file       `json:"file,omitempty"`
}

type imageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type file struct {
	FileData string `json:"file_data"`
	Filename string `json:"filename,omitempty"`
}

type toolCall struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Function *function   `json:"function,omitempty"`
	Custom   *customCall `json:"custom,omitempty"`
}

// customCall is a custom (freeform) tool call: free text as its input.
type customCall struct {
	Name  string `json:"name"`
	Input string `json:"input"`
}

type function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type tool struct {
	Type     string      `json:"type"`
	Function toolFuncDef `json:"function"`
}

type toolFuncDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyParams is the schema of a tool that takes no parameters.
const emptyParams = `{"type":"object","properties":{}}`

// buildRequest makes the request body for one call.
func buildRequest(cfg provider.Config, call provider.Call, input []*schema.Message, stream bool) (map[string]any, error) {
	vendor, sdk := openai.SplitVendor(cfg.VendorOptions)
	msgs, err := convertMessages(input, cfg.SendReasoning, sdk.SystemMessageMode)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"model": cfg.Model, "messages": msgs}
	if stream {
		body["stream"] = true
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	if len(call.Tools) > 0 {
		tools, err := provider.EncodeTools(string(provider.ProtocolChat), call.Tools, func(t *schema.ToolInfo, params json.RawMessage) any {
			if params == nil {
				params = json.RawMessage(emptyParams)
			}
			return tool{Type: "function", Function: toolFuncDef{Name: t.Name, Description: t.Desc, Parameters: params}}
		})
		if err != nil {
			return nil, err
		}
		body["tools"] = tools
		if tc := toolChoice(call.ToolChoice); tc != nil {
			body["tool_choice"] = tc
		}
	}
	p := call.Params
	setIf(body, "temperature", p.Temperature)
	setIf(body, "top_p", p.TopP)
	setIf(body, "top_k", p.TopK)
	setIf(body, maxTokensField(cfg.BaseURL), p.MaxOutputTokens)
	setIf(body, "seed", p.Seed)
	setIf(body, "presence_penalty", p.PresencePenalty)
	setIf(body, "frequency_penalty", p.FrequencyPenalty)
	if len(p.Stop) > 0 {
		body["stop"] = p.Stop
	}
	if rf := responseFormat(cfg.Output, sdk); rf != nil {
		body["response_format"] = rf
	}
	for k, v := range vendor {
		if k == "text_verbosity" {
			k = "verbosity"
		}
		body[k] = v
	}
	if cfg.Cache.Enabled {
		if cfg.Cache.Key != "" {
			body["prompt_cache_key"] = cfg.Cache.Key
		}
		if cfg.Cache.Retention != "" {
			body["prompt_cache_retention"] = cfg.Cache.Retention
		}
		maps.Copy(body, cfg.Cache.Body)
	}
	maps.Copy(body, cfg.Body)
	return body, nil
}

func setIf[T any](body map[string]any, key string, v *T) {
	if v != nil {
		body[key] = *v
	}
}

// maxTokensField is max_completion_tokens for OpenAI and Azure OpenAI, and
// max_tokens for every other endpoint.
func maxTokensField(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err == nil {
		host := strings.ToLower(u.Hostname())
		if host == "api.openai.com" || strings.HasSuffix(host, ".openai.azure.com") {
			return "max_completion_tokens"
		}
	}
	return "max_tokens"
}

func toolChoice(c string) any {
	switch c {
	case "":
		return nil
	case "auto", "none", "required":
		return c
	}
	return map[string]any{"type": "function", "function": map[string]any{"name": c}}
}

func responseFormat(o *provider.Output, sdk openai.SDKOptions) map[string]any {
	if o == nil {
		return nil
	}
	if o.Schema == nil || sdk.NoStructuredOutputs {
		return map[string]any{"type": "json_object"}
	}
	js := map[string]any{"name": openai.FormatName(o.Name), "schema": o.Schema}
	if sdk.StrictJSONSchema {
		js["strict"] = true
	}
	if o.Description != "" {
		js["description"] = o.Description
	}
	return map[string]any{"type": "json_schema", "json_schema": js}
}

// convertMessages maps eino messages to chat messages.
func convertMessages(input []*schema.Message, sendReasoning bool, systemMode string) ([]message, error) {
	out := make([]message, 0, len(input))
	var pending []part // files from tool results, sent after the run of tool messages
	for i, m := range input {
		if m == nil {
			return nil, provider.RequestError("chat: message %d is nil", i)
		}
		if m.Role != schema.Tool && len(pending) > 0 {
			out = append(out, message{Role: "user", Content: pending})
			pending = nil
		}
		switch m.Role {
		case schema.System:
			switch systemMode {
			case "remove":
			case "developer":
				out = append(out, message{Role: "developer", Content: openai.PlainText(m)})
			default:
				out = append(out, message{Role: "system", Content: openai.PlainText(m)})
			}
		case schema.User:
			c, err := userContent(m)
			if err != nil {
				return nil, provider.RequestError("chat: message %d: %w", i, err)
			}
			out = append(out, message{Role: "user", Content: c})
		case schema.Assistant:
			out = append(out, assistantMessage(m, sendReasoning))
		case schema.Tool:
			text, files, err := toolResult(m)
			if err != nil {
				return nil, provider.RequestError("chat: message %d: %w", i, err)
			}
			out = append(out, message{Role: "tool", ToolCallID: m.ToolCallID, Content: text})
			pending = append(pending, files...)
		default:
			return nil, provider.RequestError("chat: message %d has unknown role %q", i, m.Role)
		}
	}
	if len(pending) > 0 {
		out = append(out, message{Role: "user", Content: pending})
	}
	return out, nil
}

func textPart(s string) part { return part{Type: "text", Text: &s} }

// userContent is a user message's content: a string, or parts.
func userContent(m *schema.Message) (any, error) {
	if len(m.UserInputMultiContent) == 0 {
		return m.Content, nil
	}
	return openai.Parts(m, textPart, mediaPart)
}

// mediaPart maps one non-text input part.
func mediaPart(p schema.MessageInputPart) (part, error) {
	media, err := provider.MediaOf(p)
	if err != nil {
		return part{}, err
	}
	switch media.Kind {
	case provider.MediaImage:
		img := &imageURL{URL: openai.DataURL(media)}
		if p.Image != nil {
			img.Detail = string(p.Image.Detail)
		}
		return part{Type: "image_url", ImageURL: img}, nil
	case provider.MediaAudio:
		if media.Data == "" {
			return part{}, errors.New("audio must be sent as base64 data, not by URL")
		}
		return part{Type: "input_audio", InputAudio: &inputAudio{Data: media.Data, Format: openai.AudioFormat(media.MIMEType)}}, nil
	case provider.MediaFile:
		if media.Data == "" {
			return part{}, errors.New("files must be sent as base64 data, not by URL")
		}
		if media.MIMEType == "" {
			return part{}, errors.New("file part without a MIME type")
		}
		return part{Type: "file", File: &file{FileData: openai.DataURL(media), Filename: media.Name}}, nil
	}
	return part{}, fmt.Errorf("the Chat Completions API takes no %s input", media.Kind)
}

func assistantMessage(m *schema.Message, sendReasoning bool) message {
	msg := message{Role: "assistant", Content: m.Content}
	if sendReasoning {
		msg.ReasoningContent = m.ReasoningContent
	}
	for _, tc := range m.ToolCalls {
		if provider.IsFreeform(provider.StringMap(tc.Extra[provider.ExtraToolCallData])) {
			msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: tc.ID, Type: "custom",
				Custom: &customCall{Name: tc.Function.Name, Input: provider.FreeformText(tc.Function.Arguments)}})
			continue
		}
		args := tc.Function.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: tc.ID, Type: "function", Function: &function{Name: tc.Function.Name, Arguments: args}})
	}
	if len(msg.ToolCalls) > 0 && m.Content == "" {
		msg.Content = nil
	}
	return msg
}

// toolResult is a tool message's text, and its files to send in a user
// message after the tool messages.
func toolResult(m *schema.Message) (string, []part, error) {
	if len(m.UserInputMultiContent) == 0 {
		return m.Content, nil, nil
	}
	var texts []string
	if m.Content != "" {
		texts = append(texts, m.Content)
	}
	var files []part
	for _, p := range m.UserInputMultiContent {
		if p.Type == schema.ChatMessagePartTypeText {
			texts = append(texts, p.Text)
			continue
		}
		mp, err := mediaPart(p)
		if err != nil {
			return "", nil, err
		}
		if len(files) == 0 {
			files = append(files, textPart(fmt.Sprintf("Files returned by the %s tool (call %s):", m.ToolName, m.ToolCallID)))
		}
		files = append(files, mp)
	}
	switch n := len(files) - 1; {
	case n == 1:
		texts = append(texts, "[the file this tool returned follows in the next user message]")
	case n > 1:
		texts = append(texts, fmt.Sprintf("[the %d files this tool returned follow in the next user message]", n))
	}
	return strings.Join(texts, "\n"), files, nil
}
