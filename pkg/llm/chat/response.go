package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/internal/openai"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

type usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's cache read.
	PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"`
}

// wireToolCall is a tool call of a message, or a piece of one in a delta.
// Type is "function", "custom" (a freeform tool: free text in
// custom.input), or absent on a streamed call's later pieces; a call of any
// other type is not read.
type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string            `json:"name"`
		Arguments provider.JSONText `json:"arguments"`
	} `json:"function"`
	Custom struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	} `json:"custom"`
}

func (tc *wireToolCall) custom() bool { return tc.Type == "custom" }

// known reports whether the call is of a type this package reads.
func (tc *wireToolCall) known() bool { return tc.Type == "" || tc.Type == "function" || tc.custom() }

func (tc *wireToolCall) name() string {
	if tc.custom() {
		return tc.Custom.Name
	}
	return tc.Function.Name
}

// content is a message or a delta: the fields both carry. Reasoning comes
// in any of the spellings OpenAI-compatible servers use: reasoning_content
// (DeepSeek, Qwen, Moonshot, xAI), reasoning (OpenRouter, Groq, vLLM),
// reasoning_details (OpenRouter), or thinking parts in content (Mistral).
type content struct {
	Content          wireContent       `json:"content"`
	ReasoningContent wireContent       `json:"reasoning_content"`
	Reasoning        wireContent       `json:"reasoning"`
	ReasoningDetails []reasoningDetail `json:"reasoning_details"`
	Refusal          wireContent       `json:"refusal"`
	ToolCalls        []wireToolCall    `json:"tool_calls"`
}

func (c *content) text() string {
	if c.Content.text != "" {
		return c.Content.text
	}
	return c.Refusal.text
}

// reasoning is the first spelling present, so that a server sending two
// (OpenRouter: reasoning and reasoning_details) counts once.
func (c *content) reasoning() string {
	for _, w := range []*wireContent{&c.ReasoningContent, &c.Reasoning} {
		if r := w.all(); r != "" {
			return r
		}
	}
	var b strings.Builder
	for _, d := range c.ReasoningDetails {
		switch d.Type {
		case "reasoning.text":
			b.WriteString(d.Text)
		case "reasoning.summary":
			b.WriteString(d.Summary)
		}
	}
	if b.Len() > 0 {
		return b.String()
	}
	return c.Content.reasoning
}

// reasoningDetail is an entry of OpenRouter's reasoning_details.
type reasoningDetail struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Summary string `json:"summary"`
}

// wireContent is text sent as a string, as an array of content parts, or
// null. Of the parts, text (and output_text) parts are text, thinking parts
// (Mistral: their thinking is a string or text parts) and reasoning parts
// are reasoning, refusal parts are text; parts of any other type are not
// read.
type wireContent struct {
	text, reasoning string
}

// all is the text and the reasoning, for a field that holds only one kind.
func (w *wireContent) all() string { return w.text + w.reasoning }

// UnmarshalJSON reads any shape; a value it does not know reads as empty.
func (w *wireContent) UnmarshalJSON(b []byte) error {
	*w = wireContent{}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		// The decoder checked the value: a string without an escape is its
		// bytes (most deltas), read without a second decoder.
		if in := b[1 : len(b)-1]; len(b) >= 2 && bytes.IndexByte(in, '\\') < 0 {
			w.text = string(in)
			return nil
		}
		return provider.Decode(b, &w.text)
	}
	var parts []json.RawMessage
	if len(b) == 0 || b[0] != '[' || provider.Decode(b, &parts) != nil {
		return nil
	}
	var text, reasoning strings.Builder
	for _, raw := range parts {
		var p struct {
			Type     string      `json:"type"`
			Text     string      `json:"text"`
			Refusal  string      `json:"refusal"`
			Thinking wireContent `json:"thinking"`
		}
		typ, err := provider.Type(raw)
		if err != nil {
			continue
		}
		switch typ {
		case "", "text", "output_text", "refusal", "thinking", "reasoning":
		default:
			continue
		}
		if provider.Decode(raw, &p) != nil {
			continue
		}
		switch typ {
		case "thinking":
			reasoning.WriteString(p.Thinking.all())
		case "reasoning":
			reasoning.WriteString(p.Text)
		case "refusal":
			text.WriteString(p.Refusal)
		default:
			text.WriteString(p.Text)
		}
	}
	w.text, w.reasoning = text.String(), reasoning.String()
	return nil
}

// completion is a whole response body or one stream chunk.
type completion struct {
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
	// Model is the model that answered, as the server names it.
	Model string `json:"model"`
}

// modelChunk carries the model the server says answered (for telemetry's
// gen_ai.response.model), or is nil when it named none.
func modelChunk(model string) *schema.Message {
	if model == "" {
		return nil
	}
	return &schema.Message{Role: schema.Assistant, Extra: map[string]any{provider.ExtraResponseModel: model}}
}

// choice is one of a completion's choices.
type choice struct {
	Index        int      `json:"index"`
	Message      *content `json:"message"`
	Delta        *content `json:"delta"`
	FinishReason string   `json:"finish_reason"`
}

// apiError returns the error object of a body or chunk, nil when it has none.
func (c *completion) apiError() *provider.Error {
	if len(c.Error) == 0 || string(c.Error) == "null" {
		return nil
	}
	var e openai.ErrorObject
	if provider.Decode(c.Error, &e) != nil || e.Message == "" && e.Type == "" && len(e.Code) == 0 {
		var s string
		_ = provider.Decode(c.Error, &s)
		e.Message = s
	}
	if e.Message == "" {
		e.Message = string(c.Error)
	}
	return e.Err()
}

// tokenUsage normalises usage.
func (u *usage) tokenUsage() (*schema.TokenUsage, int) {
	tu := &schema.TokenUsage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		TotalTokens:      u.TotalTokens,
	}
	if tu.TotalTokens == 0 {
		tu.TotalTokens = tu.PromptTokens + tu.CompletionTokens
	}
	write := 0
	if d := u.PromptTokensDetails; d != nil {
		tu.PromptTokenDetails.CachedTokens = d.CachedTokens
		write = d.CacheWriteTokens
	}
	if tu.PromptTokenDetails.CachedTokens == 0 {
		tu.PromptTokenDetails.CachedTokens = u.PromptCacheHitTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		tu.CompletionTokensDetails.ReasoningTokens = d.ReasoningTokens
		// OpenAI's completion_tokens include the reasoning tokens; xAI's
		// leave them out, its total being prompt + completion + reasoning.
		// Output counts them either way, as every adapter's does.
		if r := d.ReasoningTokens; r > 0 && u.TotalTokens == u.PromptTokens+u.CompletionTokens+r {
			tu.CompletionTokens += r
		}
	}
	return tu, write
}

// finalChunk carries the finish reason and usage (zero when the server
// sent none).
func finalChunk(raw string, hasToolCalls bool, u *usage) *schema.Message {
	msg := &schema.Message{
		Role:         schema.Assistant,
		ResponseMeta: &schema.ResponseMeta{FinishReason: finishReason(raw, hasToolCalls), Usage: &schema.TokenUsage{}},
		Extra:        map[string]any{provider.ExtraRawFinishReason: raw},
	}
	if u != nil {
		tu, write := u.tokenUsage()
		msg.ResponseMeta.Usage = tu
		if write > 0 {
			msg.Extra[provider.ExtraCacheWriteTokens] = write
		}
	}
	return msg
}

// decodeWhole turns a non-streaming body into the chunks a stream of the
// same answer gives: the message is read as one delta holding everything,
// then the final chunk.
func decodeWhole(body []byte) ([]*schema.Message, error) {
	var c completion
	if err := provider.Decode(body, &c); err != nil {
		return nil, provider.Unknown("the response is not a chat completion", err)
	}
	if err := c.apiError(); err != nil {
		return nil, err
	}
	ch := c.choice()
	if ch == nil {
		return nil, provider.Unknown("the response has no choices", nil)
	}
	msg := ch.Message
	if msg == nil {
		msg = &content{}
	}
	for i := range msg.ToolCalls {
		if msg.ToolCalls[i].Index == nil {
			idx := i // in a whole message every entry is a call of its own
			msg.ToolCalls[i].Index = &idx
		}
	}
	var chunks []*schema.Message
	if mc := modelChunk(c.Model); mc != nil {
		chunks = append(chunks, mc) // the final chunk stays last
	}
	collect := func(m *schema.Message) bool { chunks = append(chunks, m); return true }
	var cs calls
	emitDelta(msg, &cs, collect)
	finishStream(collect, &cs, ch.FinishReason, c.Usage)
	return chunks, nil
}

// choice is choice 0, the one this package reads; nil when there is none.
func (c *completion) choice() *choice {
	for i := range c.Choices {
		if c.Choices[i].Index == 0 {
			return &c.Choices[i]
		}
	}
	return nil
}

// slot is one tool call of a stream, as numbered by us.
type slot struct {
	hasID, named, args, custom bool
}

// calls numbers a stream's tool calls in the order they start and
// remembers which got their id and name. A call of a type this package
// does not read keeps its wire index, mapped to no slot, so that its later
// pieces are skipped too.
type calls struct {
	byWire map[int]int    // wire index -> ours, -1 for a call not read
	byID   map[string]int // call id -> ours
	slots  []slot
}

func (c *calls) n() int { return len(c.slots) }

// slot returns our index for a tool call piece; ok is false for a piece of
// a call this package does not read.
func (c *calls) slot(tc *wireToolCall) (int, bool) {
	if c.byWire == nil {
		c.byWire, c.byID = map[int]int{}, map[string]int{}
	}
	if tc.Index != nil {
		if i, ok := c.byWire[*tc.Index]; ok {
			return i, i >= 0
		}
		if !tc.known() {
			c.byWire[*tc.Index] = -1
			return -1, false
		}
		i := c.add(tc)
		c.byWire[*tc.Index] = i
		return i, true
	}
	if tc.ID != "" {
		if i, ok := c.byID[tc.ID]; ok {
			return i, true
		}
	}
	if !tc.known() {
		return -1, false
	}
	if tc.ID != "" || c.n() == 0 {
		return c.add(tc), true
	}
	return c.n() - 1, true
}

func (c *calls) add(tc *wireToolCall) int {
	c.slots = append(c.slots, slot{custom: tc.custom()})
	return len(c.slots) - 1
}

// completion returns chunks completing the calls: an id for each call the
// server sent without one (some local servers do), so that results can
// refer to it, {} as the arguments of a call that got none, and the closing
// quote of a custom call's arguments.
func (c *calls) completion() []*schema.Message {
	var out []*schema.Message
	for i, sl := range c.slots {
		tc := schema.ToolCall{}
		if !sl.hasID {
			tc.ID = openai.NewCallID()
		}
		switch {
		case sl.custom:
			tc.Function.Arguments = `"`
		case !sl.args:
			tc.Function.Arguments = "{}"
		}
		if tc.ID != "" || tc.Function.Arguments != "" {
			idx := i
			tc.Index = &idx
			out = append(out, &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{tc}})
		}
	}
	return out
}

// readStream reads a chat completion stream and emits its deltas, then the
// final chunk.
func readStream(ctx context.Context, r *sse.Reader, emit func(*schema.Message) bool) error {
	var (
		toolCalls calls
		finish    string
		seen      bool // a finish reason arrived
		named     bool // the model's name was passed on
		tokens    *usage
	)
	for n := 1; ; n++ {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || provider.IsEOF(err) {
				break
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return provider.Unknown("the stream sent an oversized event", err)
			}
			return provider.FromTransport(ctx, err)
		}
		if string(ev.Data) == "[DONE]" {
			return finishStream(emit, &toolCalls, finish, tokens)
		}
		var chunk completion
		if err := provider.Decode(ev.Data, &chunk); err != nil {
			return provider.UnreadableEvent("", n, ev.Type, ev.Data, err)
		}
		if err := chunk.apiError(); err != nil {
			return err
		}
		if chunk.Usage != nil {
			tokens = chunk.Usage
		}
		if !named {
			if mc := modelChunk(chunk.Model); mc != nil {
				named = true
				if !emit(mc) {
					return nil
				}
			}
		}
		ch := chunk.choice()
		if ch == nil {
			continue
		}
		if ch.FinishReason != "" {
			finish, seen = ch.FinishReason, true
		}
		if ch.Delta != nil && !emitDelta(ch.Delta, &toolCalls, emit) {
			return nil
		}
	}
	if !seen {
		return provider.Unknown("the stream ended without [DONE] or a finish reason", nil)
	}
	return finishStream(emit, &toolCalls, finish, tokens)
}

func finishStream(emit func(*schema.Message) bool, c *calls, finish string, u *usage) error {
	for _, m := range c.completion() {
		if !emit(m) {
			return nil
		}
	}
	emit(finalChunk(finish, c.n() > 0, u))
	return nil
}

// emitDelta emits a delta's reasoning, text and tool call pieces; false
// when the consumer has gone.
func emitDelta(d *content, c *calls, emit func(*schema.Message) bool) bool {
	if r := d.reasoning(); r != "" {
		if !emit(&schema.Message{Role: schema.Assistant, ReasoningContent: r}) {
			return false
		}
	}
	if t := d.text(); t != "" {
		if !emit(&schema.Message{Role: schema.Assistant, Content: t}) {
			return false
		}
	}
	for i := range d.ToolCalls {
		tc := &d.ToolCalls[i]
		idx, ok := c.slot(tc)
		if !ok {
			continue
		}
		sl := &c.slots[idx]
		out := schema.ToolCall{Index: &idx}
		first := !sl.hasID && !sl.named && !sl.args
		if tc.ID != "" && !sl.hasID {
			out.ID, sl.hasID = tc.ID, true
			c.byID[tc.ID] = idx
		}
		if name := tc.name(); name != "" && !sl.named {
			out.Function.Name, sl.named = name, true
		}
		if out.ID != "" || out.Function.Name != "" {
			out.Type = "function"
		}
		if sl.custom {
			piece := provider.FreeformArgs(tc.Custom.Input)
			piece = piece[1 : len(piece)-1]
			if first {
				piece = `"` + piece
				out.Extra = map[string]any{provider.ExtraToolCallData: map[string]string{provider.FreeformKey: provider.FreeformCall}}
			}
			out.Function.Arguments = piece
			sl.args = true
		} else {
			out.Function.Arguments = string(tc.Function.Arguments)
			if strings.TrimSpace(out.Function.Arguments) != "" {
				sl.args = true
			}
		}
		if out.ID == "" && out.Function.Name == "" && out.Function.Arguments == "" {
			continue
		}
		if !emit(&schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{out}}) {
			return false
		}
	}
	return true
}

// finishReason normalises a Chat Completions finish reason. A stop, or no
// reason at all in a response that otherwise ended properly, is tool_calls
// when the message has tool calls (some gateways say stop) and stop
// otherwise; an unknown reason is other.
func finishReason(raw string, hasToolCalls bool) string {
	switch raw {
	case "stop", "":
		if hasToolCalls {
			return provider.FinishToolCalls
		}
		return provider.FinishStop
	case "length", "max_tokens":
		return provider.FinishLength
	case "tool_calls", "function_call":
		return provider.FinishToolCalls
	case "content_filter":
		return provider.FinishContentFilter
	}
	return provider.FinishOther
}
