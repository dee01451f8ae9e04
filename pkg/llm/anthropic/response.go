package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// response is a Messages API response body (also message_start's message).
type response struct {
	Type       string           `json:"type"`
	ID         string           `json:"id"`
	Model      string           `json:"model"`
	Content    *[]responseBlock `json:"content"`
	StopReason *string          `json:"stop_reason"`
	Usage      *usage           `json:"usage"`
	Error      *apiError        `json:"error"`
}

type responseBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

type usage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	OutputTokensDetails      *struct {
		ThinkingTokens *int `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// event is one stream event.
type event struct {
	Type         string         `json:"type"`
	Message      *response      `json:"message"`
	Index        int            `json:"index"`
	ContentBlock *responseBlock `json:"content_block"`
	Delta        *delta         `json:"delta"`
	Usage        *usage         `json:"usage"`
	Error        *apiError      `json:"error"`
}

type delta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	PartialJSON string  `json:"partial_json"`
	Thinking    string  `json:"thinking"`
	Signature   string  `json:"signature"`
	StopReason  *string `json:"stop_reason"`
}

// merge replaces the counts that o reports.
func (u *usage) merge(o *usage) {
	if o == nil {
		return
	}
	set := func(dst **int, src *int) {
		if src != nil {
			*dst = src
		}
	}
	set(&u.InputTokens, o.InputTokens)
	set(&u.OutputTokens, o.OutputTokens)
	set(&u.CacheCreationInputTokens, o.CacheCreationInputTokens)
	set(&u.CacheReadInputTokens, o.CacheReadInputTokens)
	if o.OutputTokensDetails != nil {
		u.OutputTokensDetails = o.OutputTokensDetails
	}
}

func val(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// finishReason normalises a stop_reason.
func finishReason(raw string) string {
	switch raw {
	case "end_turn", "stop_sequence":
		return provider.FinishStop
	case "tool_use":
		return provider.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return provider.FinishLength
	case "refusal":
		return provider.FinishContentFilter
	}
	return provider.FinishOther
}

// openBlock is a content block between its start and stop events.
type openBlock struct {
	typ       string
	toolIndex int
	input     json.RawMessage // from content_block_start
	gotArgs   bool            // input_json_delta pieces were emitted
	thinking  int             // bytes of thinking text
	signature strings.Builder
}

// assembler turns content blocks, whole or in events, into message chunks.
// Generate and Stream both use it, so they produce the same message.
type assembler struct {
	blocks    map[int]*openBlock
	toolCalls int
	thinking  []thinkingEntry
	usage     usage
	stop      string
}

func newAssembler() *assembler { return &assembler{blocks: map[int]*openBlock{}} }

func chunk() *schema.Message { return &schema.Message{Role: schema.Assistant} }

// start opens block idx; it returns a chunk to emit, or nil.
func (a *assembler) start(idx int, b *responseBlock) *schema.Message {
	ob := &openBlock{typ: b.Type}
	a.blocks[idx] = ob
	switch b.Type {
	case "text":
		if b.Text != "" {
			c := chunk()
			c.Content = b.Text
			return c
		}
	case "thinking":
		ob.thinking = len(b.Thinking)
		ob.signature.WriteString(b.Signature)
		if b.Thinking != "" {
			c := chunk()
			c.ReasoningContent = b.Thinking
			return c
		}
	case "redacted_thinking":
		a.thinking = append(a.thinking, thinkingEntry{Redacted: b.Data})
	case "tool_use":
		ob.toolIndex = a.toolCalls
		a.toolCalls++
		ob.input = b.Input
		c := chunk()
		i := ob.toolIndex
		c.ToolCalls = []schema.ToolCall{{Index: &i, ID: b.ID, Type: "function", Function: schema.FunctionCall{Name: b.Name}}}
		return c
	}
	return nil
}

// delta adds to block idx; it returns a chunk to emit, or nil.
func (a *assembler) delta(idx int, d *delta) *schema.Message {
	ob := a.blocks[idx]
	if ob == nil || d == nil {
		return nil
	}
	switch d.Type {
	case "text_delta":
		if ob.typ == "text" && d.Text != "" {
			c := chunk()
			c.Content = d.Text
			return c
		}
	case "thinking_delta":
		if ob.typ == "thinking" && d.Thinking != "" {
			ob.thinking += len(d.Thinking)
			c := chunk()
			c.ReasoningContent = d.Thinking
			return c
		}
	case "signature_delta":
		ob.signature.WriteString(d.Signature)
	case "input_json_delta":
		if ob.typ == "tool_use" && d.PartialJSON != "" {
			ob.gotArgs = true
			return argsChunk(ob.toolIndex, d.PartialJSON)
		}
	}
	return nil
}

func argsChunk(index int, args string) *schema.Message {
	c := chunk()
	c.ToolCalls = []schema.ToolCall{{Index: &index, Function: schema.FunctionCall{Arguments: args}}}
	return c
}

// stopBlock closes block idx; it returns a chunk to emit, or nil.
func (a *assembler) stopBlock(idx int) *schema.Message {
	ob := a.blocks[idx]
	if ob == nil {
		return nil
	}
	delete(a.blocks, idx)
	switch ob.typ {
	case "thinking":
		a.thinking = append(a.thinking, thinkingEntry{Signature: ob.signature.String(), Length: ob.thinking})
	case "tool_use":
		if ob.gotArgs {
			return nil
		}
		args := "{}"
		var buf bytes.Buffer
		if len(ob.input) > 0 && json.Compact(&buf, ob.input) == nil && buf.String() != "null" {
			args = buf.String()
		}
		return argsChunk(ob.toolIndex, args)
	}
	return nil
}

// final is the last chunk: finish reason, usage and provider data.
func (a *assembler) final() *schema.Message {
	c := chunk()
	u := a.usage
	read, write := val(u.CacheReadInputTokens), val(u.CacheCreationInputTokens)
	input := val(u.InputTokens) + read + write
	output := val(u.OutputTokens)
	tu := &schema.TokenUsage{
		PromptTokens:       input,
		PromptTokenDetails: schema.PromptTokenDetails{CachedTokens: read},
		CompletionTokens:   output,
		TotalTokens:        input + output,
	}
	if d := u.OutputTokensDetails; d != nil {
		tu.CompletionTokensDetails.ReasoningTokens = val(d.ThinkingTokens)
	}
	c.ResponseMeta = &schema.ResponseMeta{FinishReason: finishReason(a.stop), Usage: tu}
	c.Extra = map[string]any{
		provider.ExtraRawFinishReason:  a.stop,
		provider.ExtraCacheWriteTokens: write,
	}
	if len(a.thinking) > 0 {
		data, _ := json.Marshal(a.thinking)
		c.Extra[provider.ExtraReasoningData] = map[string]string{reasoningKey: string(data)}
	}
	return c
}

// decodeResponse turns a whole response body into the message chunks the
// same response would have streamed, final chunk last.
func decodeResponse(body []byte) ([]*schema.Message, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, provider.Unknown("anthropic: the response is not a Messages API response", err)
	}
	if r.Type == "error" && r.Error != nil {
		return nil, provider.FromStreamError(r.Error.Type, r.Error.Message)
	}
	if r.Content == nil {
		return nil, provider.Unknown("anthropic: the response has no content", nil)
	}
	a := newAssembler()
	a.usage.merge(r.Usage)
	if r.StopReason != nil {
		a.stop = *r.StopReason
	}
	var chunks []*schema.Message
	for i := range *r.Content {
		b := &(*r.Content)[i]
		for _, c := range []*schema.Message{a.start(i, b), a.stopBlock(i)} {
			if c != nil {
				chunks = append(chunks, c)
			}
		}
	}
	return append(chunks, a.final()), nil
}
