package anthropic

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// DefaultMaxTokens is max_tokens when no output limit is set; the Messages
// API requires one.
const DefaultMaxTokens = 4096

// reasoningKey is the key in Extra[provider.ExtraReasoningData].
const reasoningKey = "anthropic.thinking"

// block is one content block of a request.
type block struct {
	Type string `json:"type"`
	// text
	Text string `json:"text,omitempty"`
	// image, document
	Source *source `json:"source,omitempty"`
	Title  string  `json:"title,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result: a string or []block
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   any    `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// thinking (the field is required even when empty), redacted_thinking
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	Data      string  `json:"data,omitempty"`

	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

type message struct {
	Role    string   `json:"role"`
	Content []*block `json:"content"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// thinkingEntry is one element of the "anthropic.thinking" reasoning data.
type thinkingEntry struct {
	Signature string `json:"signature,omitempty"`
	Length    int    `json:"length,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

// buildRequest turns a call into the Messages API request body.
func buildRequest(cfg provider.Config, call provider.Call, input []*schema.Message, stream bool) (map[string]any, error) {
	system, msgs, err := convertMessages(input, cfg.SendReasoning)
	if err != nil {
		return nil, err
	}
	vendor := provider.SnakeKeys(cfg.VendorOptions)
	effort, hasEffort := vendor["effort"]
	noParallel, hasNoParallel := vendor["disable_parallel_tool_use"]
	// AI SDK options that are not request fields.
	for _, k := range []string{"effort", "disable_parallel_tool_use", "send_reasoning", "structured_output_mode", "tool_streaming", "cache_control"} {
		delete(vendor, k)
	}

	body := map[string]any{"model": cfg.Model, "messages": msgs}
	if stream {
		body["stream"] = true
	}
	if cfg.Cache.Enabled {
		addCacheBreakpoints(system, msgs, cfg.Cache.Retention)
	}
	if len(system) > 0 {
		body["system"] = system
	}

	p := call.Params
	thinkingOn, budget := thinking(vendor["thinking"])
	maxTokens := DefaultMaxTokens
	if p.MaxOutputTokens != nil {
		maxTokens = *p.MaxOutputTokens
	}
	body["max_tokens"] = maxTokens + budget
	if !thinkingOn {
		setIf(body, "temperature", p.Temperature)
		setIf(body, "top_p", p.TopP)
		setIf(body, "top_k", p.TopK)
	}
	if len(p.Stop) > 0 {
		body["stop_sequences"] = p.Stop
	}

	if len(call.Tools) > 0 {
		tools, err := provider.EncodeTools(string(provider.ProtocolAnthropic), call.Tools, func(t *schema.ToolInfo, params json.RawMessage) any {
			if params == nil {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			return tool{Name: t.Name, Description: t.Desc, InputSchema: params}
		})
		if err != nil {
			return nil, err
		}
		body["tools"] = tools
		if choice := toolChoice(call.ToolChoice); choice != nil || hasNoParallel {
			if choice == nil {
				choice = map[string]any{"type": "auto"}
			}
			if hasNoParallel {
				choice["disable_parallel_tool_use"] = noParallel
			}
			body["tool_choice"] = choice
		}
	}

	outputConfig := map[string]any{}
	if hasEffort {
		outputConfig["effort"] = effort
	}
	if o := cfg.Output; o != nil && o.Schema != nil {
		outputConfig["format"] = map[string]any{"type": "json_schema", "schema": closeObjects(o.Schema)}
	}
	if len(outputConfig) > 0 {
		body["output_config"] = outputConfig
	}

	maps.Copy(body, vendor)
	if cfg.Cache.Enabled {
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

// toolChoice maps the neutral tool choice; nil means not sent.
func toolChoice(c string) map[string]any {
	switch c {
	case "":
		return nil
	case "auto":
		return map[string]any{"type": "auto"}
	case "required":
		return map[string]any{"type": "any"}
	case "none":
		return map[string]any{"type": "none"}
	default:
		return map[string]any{"type": "tool", "name": c}
	}
}

// thinking reads the thinking vendor option: whether extended thinking is
// on (enabled or adaptive) and its budget_tokens (0 when none).
func thinking(v any) (on bool, budget int) {
	m, ok := v.(map[string]any)
	if !ok || (m["type"] != "enabled" && m["type"] != "adaptive") {
		return false, 0
	}
	switch n := m["budget_tokens"].(type) {
	case float64:
		budget = int(n)
	case int:
		budget = n
	case int64:
		budget = int(n)
	}
	return true, budget
}

// closeObjects returns a copy of a JSON Schema in which every object schema
// without additionalProperties has "additionalProperties": false.
func closeObjects(s map[string]any) map[string]any {
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = closeValue(v)
	}
	if _, ok := out["additionalProperties"]; !ok && (out["type"] == "object" || out["properties"] != nil) {
		out["additionalProperties"] = false
	}
	return out
}

func closeValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return closeObjects(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = closeValue(e)
		}
		return out
	}
	return v
}

// cacheTTL maps Cache.Retention to one of the two ttls the API offers.
func cacheTTL(retention string) string {
	if retention == "" {
		return ""
	}
	d, err := time.ParseDuration(retention)
	if err != nil {
		return retention
	}
	if d >= time.Hour {
		return "1h"
	}
	return "5m"
}

// addCacheBreakpoints marks the last system block and the last cacheable
// block of the last message.
func addCacheBreakpoints(system []*block, msgs []*message, retention string) {
	cc := &cacheControl{Type: "ephemeral", TTL: cacheTTL(retention)}
	if len(system) > 0 {
		system[len(system)-1].CacheControl = cc
	}
	if len(msgs) == 0 {
		return
	}
	content := msgs[len(msgs)-1].Content
	for i := len(content) - 1; i >= 0; i-- {
		if t := content[i].Type; t != "thinking" && t != "redacted_thinking" {
			content[i].CacheControl = cc
			return
		}
	}
}

// convertMessages splits eino messages into the system blocks and the turns.
func convertMessages(input []*schema.Message, sendReasoning bool) ([]*block, []*message, error) {
	var system []*block
	var msgs []*message
	leading := true
	add := func(role string, blocks []*block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
			return
		}
		msgs = append(msgs, &message{Role: role, Content: blocks})
	}
	for i, m := range input {
		if m == nil {
			return nil, nil, provider.RequestError("anthropic: message %d is nil", i)
		}
		if m.Role != schema.System {
			leading = false
		}
		switch m.Role {
		case schema.System:
			blocks := textBlocks(m.Content)
			if leading {
				system = append(system, blocks...)
			} else {
				add("user", blocks)
			}
		case schema.User:
			blocks, err := userBlocks(m)
			if err != nil {
				return nil, nil, err
			}
			add("user", blocks)
		case schema.Assistant:
			blocks, err := assistantBlocks(m, sendReasoning)
			if err != nil {
				return nil, nil, err
			}
			add("assistant", blocks)
		case schema.Tool:
			b, err := toolResultBlock(m)
			if err != nil {
				return nil, nil, err
			}
			add("user", []*block{b})
		default:
			return nil, nil, provider.RequestError("anthropic: message %d has unknown role %q", i, m.Role)
		}
	}
	for _, m := range msgs {
		// The API wants a turn's tool_result blocks before anything else.
		slices.SortStableFunc(m.Content, func(a, b *block) int {
			return cmp.Compare(resultRank(a), resultRank(b))
		})
	}
	return system, msgs, nil
}

func resultRank(b *block) int {
	if b.Type == "tool_result" {
		return 0
	}
	return 1
}

func textBlocks(s string) []*block {
	if s == "" {
		return nil
	}
	return []*block{{Type: "text", Text: s}}
}

// userBlocks maps a user message's content.
func userBlocks(m *schema.Message) ([]*block, error) {
	if len(m.UserInputMultiContent) == 0 {
		return textBlocks(m.Content), nil
	}
	return partBlocks(m.UserInputMultiContent)
}

// partBlocks maps content parts to text, image and document blocks.
func partBlocks(parts []schema.MessageInputPart) ([]*block, error) {
	var out []*block
	for _, p := range parts {
		if p.Type == schema.ChatMessagePartTypeText {
			out = append(out, textBlocks(p.Text)...)
			continue
		}
		md, err := provider.MediaOf(p)
		if err != nil {
			return nil, provider.RequestError("anthropic: %w", err)
		}
		b, err := mediaBlock(md)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// mediaBlock maps media by kind and MIME type: images to image blocks, PDFs
// and text to document blocks.
func mediaBlock(md provider.Media) (*block, error) {
	src := &source{Type: "url", URL: md.URL}
	if md.URL == "" {
		src = &source{Type: "base64", MediaType: md.MIMEType, Data: md.Data}
	}
	switch {
	case md.Kind == provider.MediaAudio || md.Kind == provider.MediaVideo:
		return nil, provider.RequestError("anthropic: %s input is not supported by the Messages API", md.Kind)
	case md.MIMEType == "" && md.URL == "":
		return nil, provider.RequestError("anthropic: inline %s without a MIME type", md.Kind)
	case md.Kind == provider.MediaImage:
		return &block{Type: "image", Source: src}, nil
	case md.MIMEType == "application/pdf":
		return &block{Type: "document", Title: md.Name, Source: src}, nil
	case strings.HasPrefix(md.MIMEType, "text/") || md.MIMEType == "application/json":
		if md.URL == "" {
			text, err := base64.StdEncoding.DecodeString(md.Data)
			if err != nil {
				return nil, provider.RequestError("anthropic: text file %q is not valid base64: %w", md.Name, err)
			}
			src = &source{Type: "text", MediaType: "text/plain", Data: string(text)}
		}
		return &block{Type: "document", Title: md.Name, Source: src}, nil
	case md.MIMEType == "":
		return nil, provider.RequestError("anthropic: file part without a MIME type")
	}
	return nil, provider.RequestError("anthropic: files of type %s are not supported by the Messages API", md.MIMEType)
}

// assistantBlocks maps an assistant message: reasoning, text, tool calls.
func assistantBlocks(m *schema.Message, sendReasoning bool) ([]*block, error) {
	var out []*block
	if sendReasoning {
		out = append(out, thinkingBlocks(m)...)
	}
	out = append(out, textBlocks(m.Content)...)
	for _, tc := range m.ToolCalls {
		out = append(out, &block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: provider.ObjectArgs(tc.Function.Arguments)})
	}
	return out, nil
}

// thinkingBlocks rebuilds thinking and redacted_thinking blocks from the
// reasoning data; reasoning without a signature is dropped.
func thinkingBlocks(m *schema.Message) []*block {
	data := provider.StringMap(m.Extra[provider.ExtraReasoningData])[reasoningKey]
	if data == "" {
		return nil
	}
	var entries []thinkingEntry
	if json.Unmarshal([]byte(data), &entries) != nil {
		return nil
	}
	total, signed := 0, 0
	for _, e := range entries {
		if e.Redacted == "" {
			total += e.Length
			signed++
		}
	}
	text := m.ReasoningContent
	var out []*block
	for _, e := range entries {
		switch {
		case e.Redacted != "":
			out = append(out, &block{Type: "redacted_thinking", Data: e.Redacted})
		case e.Signature == "":
		case total == len(m.ReasoningContent):
			t := text[:e.Length]
			text = text[e.Length:]
			out = append(out, &block{Type: "thinking", Thinking: &t, Signature: e.Signature})
		case signed == 1:
			// The text was changed since: send it whole with the one signature.
			t := m.ReasoningContent
			out = append(out, &block{Type: "thinking", Thinking: &t, Signature: e.Signature})
		}
	}
	return out
}

// toolResultBlock maps a tool message to a tool_result block.
func toolResultBlock(m *schema.Message) (*block, error) {
	b := &block{Type: "tool_result", ToolUseID: m.ToolCallID}
	if failed, _ := m.Extra[provider.ExtraToolError].(bool); failed {
		b.IsError = true
	}
	if len(m.UserInputMultiContent) > 0 {
		parts, err := partBlocks(m.UserInputMultiContent)
		if err != nil {
			return nil, err
		}
		if len(parts) > 0 {
			b.Content = parts
		}
	} else if m.Content != "" {
		b.Content = m.Content
	}
	return b, nil
}
