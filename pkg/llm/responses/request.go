package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/internal/openai"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// item is one input item; fields not used by its type are left empty.
type item struct {
	Type string `json:"type"`
	// message
	Role    string `json:"role,omitempty"`
	Content []part `json:"content,omitempty"`
	// reasoning
	ID               string  `json:"id,omitempty"`
	EncryptedContent string  `json:"encrypted_content,omitempty"`
	Summary          *[]part `json:"summary,omitempty"`
	// function_call, custom_tool_call and their outputs
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	Input     *string `json:"input,omitempty"`
	// Output is a string or a []part.
	Output any `json:"output,omitempty"`
}

type part struct {
	Type       string      `json:"type"`
	Text       *string     `json:"text,omitempty"`
	ImageURL   string      `json:"image_url,omitempty"`
	Detail     string      `json:"detail,omitempty"`
	FileData   string      `json:"file_data,omitempty"`
	FileURL    string      `json:"file_url,omitempty"`
	Filename   string      `json:"filename,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// emptyParams is the schema of a tool that takes no parameters.
const emptyParams = `{"type":"object","properties":{}}`

// reasoningItem is one reasoning item's provider data.
type reasoningItem struct {
	ID               string `json:"id"`
	EncryptedContent string `json:"encrypted_content,omitempty"`
}

// buildRequest makes the request body for one call.
func buildRequest(cfg provider.Config, call provider.Call, input []*schema.Message, stream bool) (map[string]any, error) {
	vendor, sdk := openai.SplitVendor(cfg.VendorOptions)
	instructions, items, err := convertMessages(input, cfg.SendReasoning, sdk.SystemMessageMode)
	if err != nil {
		return nil, err
	}
	body := map[string]any{"model": cfg.Model, "input": items}
	if instructions != "" {
		body["instructions"] = instructions
	}
	if stream {
		body["stream"] = true
	}
	if len(call.Tools) > 0 {
		tools, err := provider.EncodeTools(string(provider.ProtocolResponses), call.Tools, func(t *schema.ToolInfo, params json.RawMessage) any {
			if params == nil {
				params = json.RawMessage(emptyParams)
			}
			return tool{Type: "function", Name: t.Name, Description: t.Desc, Parameters: params}
		})
		if err != nil {
			return nil, err
		}
		body["tools"] = tools
		switch c := call.ToolChoice; c {
		case "":
		case "auto", "none", "required":
			body["tool_choice"] = c
		default:
			body["tool_choice"] = map[string]any{"type": "function", "name": c}
		}
	}
	p := call.Params
	if p.Temperature != nil {
		body["temperature"] = *p.Temperature
	}
	if p.TopP != nil {
		body["top_p"] = *p.TopP
	}
	if p.MaxOutputTokens != nil {
		body["max_output_tokens"] = *p.MaxOutputTokens
	}
	text := map[string]any{}
	if f := textFormat(cfg.Output, sdk); f != nil {
		text["format"] = f
	}
	reasoning := map[string]any{}
	var include []any
	if cfg.SendReasoning {
		include = append(include, "reasoning.encrypted_content")
	}
	for k, v := range vendor {
		switch k {
		case "reasoning_effort":
			reasoning["effort"] = v
		case "reasoning_summary":
			reasoning["summary"] = v
		case "text_verbosity":
			text["verbosity"] = v
		case "include":
			if list, ok := v.([]any); ok {
				for _, x := range list {
					if !slices.Contains(include, x) {
						include = append(include, x)
					}
				}
			}
		default:
			body[k] = v
		}
	}
	if len(text) > 0 {
		body["text"] = text
	}
	if len(reasoning) > 0 {
		body["reasoning"] = reasoning
	}
	if len(include) > 0 {
		body["include"] = include
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

// customTools returns the names of the custom (freeform) tools in a
// request's tools list: its entries of type "custom". The tools this
// package encodes are all function tools; custom tools come in a tools
// list given in provider.Body or the vendor options (which replace ours).
func customTools(tools any) map[string]bool {
	if _, ours := tools.(provider.ToolList); ours || tools == nil {
		return nil
	}
	data, err := json.Marshal(tools)
	if err != nil {
		return nil
	}
	var entries []json.RawMessage
	if provider.Decode(data, &entries) != nil {
		return nil
	}
	var names map[string]bool
	for _, e := range entries {
		var t struct{ Type, Name string }
		if provider.Decode(e, &t) == nil && t.Type == "custom" && t.Name != "" {
			if names == nil {
				names = map[string]bool{}
			}
			names[t.Name] = true
		}
	}
	return names
}

func textFormat(o *provider.Output, sdk openai.SDKOptions) map[string]any {
	if o == nil {
		return nil
	}
	if o.Schema == nil || sdk.NoStructuredOutputs {
		return map[string]any{"type": "json_object"}
	}
	f := map[string]any{"type": "json_schema", "name": openai.FormatName(o.Name), "schema": o.Schema, "strict": sdk.StrictJSONSchema}
	if o.Description != "" {
		f["description"] = o.Description
	}
	return f
}

// convertMessages maps eino messages to instructions and input items.
func convertMessages(input []*schema.Message, sendReasoning bool, systemMode string) (string, []item, error) {
	var (
		instructions []string
		items        = make([]item, 0, len(input))
		custom       = map[string]bool{} // ids of custom tool calls
		leading      = true
	)
	for i, m := range input {
		if m == nil {
			return "", nil, provider.RequestError("responses: message %d is nil", i)
		}
		if m.Role != schema.System {
			leading = false
		}
		switch m.Role {
		case schema.System:
			text := openai.PlainText(m)
			switch {
			case systemMode == "remove":
			case leading:
				instructions = append(instructions, text)
			case systemMode == "developer":
				items = append(items, item{Type: "message", Role: "developer", Content: []part{inputText(text)}})
			default:
				items = append(items, item{Type: "message", Role: "system", Content: []part{inputText(text)}})
			}
		case schema.User:
			parts, err := userParts(m)
			if err != nil {
				return "", nil, provider.RequestError("responses: message %d: %w", i, err)
			}
			items = append(items, item{Type: "message", Role: "user", Content: parts})
		case schema.Assistant:
			items = append(items, assistantItems(m, sendReasoning, custom)...)
		case schema.Tool:
			it, err := toolOutput(m, custom[m.ToolCallID])
			if err != nil {
				return "", nil, provider.RequestError("responses: message %d: %w", i, err)
			}
			items = append(items, it)
		default:
			return "", nil, provider.RequestError("responses: message %d has unknown role %q", i, m.Role)
		}
	}
	return strings.Join(instructions, "\n\n"), items, nil
}

func inputText(s string) part { return part{Type: "input_text", Text: &s} }

// userParts maps a user message (or a tool result's parts) to input parts.
func userParts(m *schema.Message) ([]part, error) {
	return openai.Parts(m, inputText, mediaPart)
}

// mediaPart maps one non-text input part.
func mediaPart(p schema.MessageInputPart) (part, error) {
	media, err := provider.MediaOf(p)
	if err != nil {
		return part{}, err
	}
	switch media.Kind {
	case provider.MediaImage:
		detail := "auto"
		if p.Image != nil && p.Image.Detail != "" {
			detail = string(p.Image.Detail)
		}
		return part{Type: "input_image", ImageURL: openai.DataURL(media), Detail: detail}, nil
	case provider.MediaAudio:
		if media.Data == "" {
			return part{}, errors.New("audio must be sent as base64 data, not by URL")
		}
		return part{Type: "input_audio", InputAudio: &inputAudio{Data: media.Data, Format: openai.AudioFormat(media.MIMEType)}}, nil
	case provider.MediaFile:
		if media.URL != "" {
			return part{Type: "input_file", FileURL: media.URL, Filename: media.Name}, nil
		}
		if media.MIMEType == "" {
			return part{}, errors.New("file part without a MIME type")
		}
		name := media.Name
		if name == "" {
			name = "file"
		}
		return part{Type: "input_file", FileData: openai.DataURL(media), Filename: name}, nil
	}
	return part{}, fmt.Errorf("the Responses API takes no %s input", media.Kind)
}

// assistantItems maps an assistant message to its reasoning, message and
// call items, noting its custom calls' ids in custom.
func assistantItems(m *schema.Message, sendReasoning bool, custom map[string]bool) []item {
	var out []item
	if sendReasoning {
		out = append(out, reasoningItems(m)...)
	}
	if m.Content != "" {
		text := m.Content
		out = append(out, item{Type: "message", Role: "assistant", Content: []part{{Type: "output_text", Text: &text}}})
	}
	for _, tc := range m.ToolCalls {
		data := provider.StringMap(tc.Extra[provider.ExtraToolCallData])
		if provider.IsFreeform(data) {
			custom[tc.ID] = true
			input := provider.FreeformText(tc.Function.Arguments)
			out = append(out, item{Type: "custom_tool_call", CallID: tc.ID, Name: tc.Function.Name, Input: &input})
			continue
		}
		args := tc.Function.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out = append(out, item{Type: "function_call", CallID: tc.ID, Name: tc.Function.Name, Arguments: &args})
	}
	return out
}

// reasoningItems rebuilds the reasoning items of a message from its provider
// data; the reasoning text goes in the first item's summary. A message
// without reasoning item data sends none: the API takes no reasoning item
// without its id.
func reasoningItems(m *schema.Message) []item {
	data := provider.StringMap(m.Extra[provider.ExtraReasoningData])
	var ris []reasoningItem
	if data[ReasoningKey] == "" || json.Unmarshal([]byte(data[ReasoningKey]), &ris) != nil {
		return nil
	}
	var out []item
	for _, ri := range ris {
		if ri.ID == "" {
			continue
		}
		summary := []part{}
		if len(out) == 0 && m.ReasoningContent != "" {
			text := m.ReasoningContent
			summary = append(summary, part{Type: "summary_text", Text: &text})
		}
		out = append(out, item{Type: "reasoning", ID: ri.ID, EncryptedContent: ri.EncryptedContent, Summary: &summary})
	}
	return out
}

// toolOutput maps a tool result to its output item.
func toolOutput(m *schema.Message, custom bool) (item, error) {
	it := item{Type: "function_call_output", CallID: m.ToolCallID}
	if custom {
		it.Type = "custom_tool_call_output"
	}
	hasMedia := false
	for _, p := range m.UserInputMultiContent {
		if p.Type != schema.ChatMessagePartTypeText {
			hasMedia = true
		}
	}
	if !hasMedia {
		it.Output = openai.PlainText(m)
		return it, nil
	}
	if custom {
		return it, errors.New("a custom tool call's output must be text")
	}
	parts, err := userParts(m)
	if err != nil {
		return it, err
	}
	it.Output = parts
	return it, nil
}
