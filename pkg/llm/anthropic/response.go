package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// response is a Messages API response body (also message_start's message).
// Its content blocks are decoded one by one, by type.
type response struct {
	Type       string             `json:"type"`
	ID         string             `json:"id"`
	Model      string             `json:"model"`
	Content    *[]json.RawMessage `json:"content"`
	StopReason *string            `json:"stop_reason"`
	Usage      *usage             `json:"usage"`
	Error      *apiError          `json:"error"`
}

// responseBlock is a content block of one of the types this package reads
// (text, thinking, redacted_thinking, tool_use). Every other block (server
// tool use and results, and whatever comes next) is opened and closed by
// index but its fields are not decoded.
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

// decodeBlock reads a content block's type and then, for the types this
// package reads, the block.
func decodeBlock(raw json.RawMessage) *responseBlock {
	typ, err := provider.Type(raw)
	if err != nil {
		return &responseBlock{}
	}
	switch typ {
	case "text", "thinking", "redacted_thinking", "tool_use":
	default:
		return &responseBlock{Type: typ}
	}
	var b responseBlock
	if provider.Decode(raw, &b) != nil {
		return &responseBlock{Type: typ}
	}
	b.Type = typ
	return &b
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

// event holds the fields of the events this package reads. It is decoded
// only once the event's type is known to be one of them; blocks, deltas and
// messages stay raw until their own type is read.
type event struct {
	Message      json.RawMessage `json:"message"`
	Index        int             `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        *usage          `json:"usage"`
	Error        *apiError       `json:"error"`
}

// delta is a content_block_delta's or message_delta's delta.
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
	entry     int // a thinking block's place in assembler.thinking
}

// assembler turns content blocks, whole or in events, into message chunks.
// Generate and Stream both use it, so they produce the same message. A
// block is open from its start until its stop, a new start at its index, or
// the end of the message.
type assembler struct {
	blocks    map[int]*openBlock
	toolCalls int
	// thinking holds the thinking and redacted_thinking blocks in the order
	// they opened, which is the order they go back in; a thinking block's
	// entry is filled when it stops.
	thinking []thinkingEntry
	usage    usage
	stop     string
	// message is the id of the message being read; started is set once a
	// message_start arrived.
	message string
	started bool
	// model is the model the response says answered.
	model string
}

func newAssembler() *assembler { return &assembler{blocks: map[int]*openBlock{}} }

func chunk() *schema.Message { return &schema.Message{Role: schema.Assistant} }

// start opens block idx (closing a block still open at idx first); it
// returns the chunks to emit.
func (a *assembler) start(idx int, b *responseBlock) []*schema.Message {
	var out []*schema.Message
	if c := a.stopBlock(idx); c != nil {
		out = append(out, c)
	}
	if c := a.open(idx, b); c != nil {
		out = append(out, c)
	}
	return out
}

// open opens block idx; it returns a chunk to emit, or nil.
func (a *assembler) open(idx int, b *responseBlock) *schema.Message {
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
		ob.entry = len(a.thinking)
		a.thinking = append(a.thinking, thinkingEntry{})
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

// delta adds to block idx; it returns a chunk to emit, or nil. A delta
// of a type this package does not read, or for a block not open, is
// skipped.
func (a *assembler) delta(idx int, raw json.RawMessage) *schema.Message {
	ob := a.blocks[idx]
	if ob == nil || len(raw) == 0 {
		return nil
	}
	typ, err := provider.Type(raw)
	if err != nil {
		return nil
	}
	switch typ {
	case "text_delta", "thinking_delta", "signature_delta", "input_json_delta":
	default:
		return nil
	}
	var d delta
	if provider.Decode(raw, &d) != nil {
		return nil
	}
	d.Type = typ
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
		a.thinking[ob.entry] = thinkingEntry{Signature: ob.signature.String(), Length: ob.thinking}
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

// end closes the blocks still open, in index order, and returns their
// chunks and the final chunk.
func (a *assembler) end() []*schema.Message {
	idx := make([]int, 0, len(a.blocks))
	for i := range a.blocks {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var out []*schema.Message
	for _, i := range idx {
		if c := a.stopBlock(i); c != nil {
			out = append(out, c)
		}
	}
	return append(out, a.final())
}

// messageStart reads a message_start's message: its usage, a stop reason
// it may already carry, and the content blocks it may already hold
// (continuation messages of programmatic tool calling do), which are opened
// in order. A second message_start while a message is open is a protocol
// error: two messages must never be merged into one.
func (a *assembler) messageStart(raw json.RawMessage) ([]*schema.Message, error) {
	var m response
	if len(raw) > 0 {
		if err := provider.Decode(raw, &m); err != nil {
			return nil, provider.Unknown("anthropic: the stream's message_start event is not JSON", err)
		}
	}
	if a.started {
		return nil, provider.Unknown(fmt.Sprintf("anthropic: the stream sent a second message_start (message %q) while message %q was open", m.ID, a.message), nil)
	}
	a.started, a.message, a.model = true, m.ID, m.Model
	a.usage.merge(m.Usage)
	if m.StopReason != nil {
		a.stop = *m.StopReason
	}
	var out []*schema.Message
	if m.Content != nil {
		for i, raw := range *m.Content {
			out = append(out, a.start(i, decodeBlock(raw))...)
		}
	}
	return out, nil
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
	if a.model != "" {
		c.Extra[provider.ExtraResponseModel] = a.model
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
	if err := provider.Decode(body, &r); err != nil {
		return nil, provider.Unknown("anthropic: the response is not a Messages API response", err)
	}
	if r.Type == "error" && r.Error != nil {
		return nil, provider.FromStreamError(r.Error.Type, r.Error.Message)
	}
	if r.Content == nil {
		return nil, provider.Unknown("anthropic: the response has no content", nil)
	}
	a := newAssembler()
	a.model = r.Model
	a.usage.merge(r.Usage)
	if r.StopReason != nil {
		a.stop = *r.StopReason
	}
	var chunks []*schema.Message
	for i, raw := range *r.Content {
		chunks = append(chunks, a.start(i, decodeBlock(raw))...)
		if c := a.stopBlock(i); c != nil {
			chunks = append(chunks, c)
		}
	}
	return append(chunks, a.final()), nil
}
