package chat

import (
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

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// content is a message or a delta: the fields both carry.
type content struct {
	Content          openai.Text    `json:"content"`
	ReasoningContent openai.Text    `json:"reasoning_content"`
	Reasoning        openai.Text    `json:"reasoning"`
	Refusal          openai.Text    `json:"refusal"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

func (c *content) text() string {
	if c.Content != "" {
		return string(c.Content)
	}
	return string(c.Refusal)
}

func (c *content) reasoning() string {
	if c.ReasoningContent != "" {
		return string(c.ReasoningContent)
	}
	return string(c.Reasoning)
}

// completion is a whole response body or one stream chunk.
type completion struct {
	Choices []struct {
		Index        int     `json:"index"`
		Message      content `json:"message"`
		Delta        content `json:"delta"`
		FinishReason string  `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
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

// apiError returns the error object of a body or chunk, nil when it has none.
func (c *completion) apiError() *provider.Error {
	if len(c.Error) == 0 || string(c.Error) == "null" {
		return nil
	}
	var e openai.ErrorObject
	if json.Unmarshal(c.Error, &e) != nil {
		var s string
		_ = json.Unmarshal(c.Error, &s)
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
// same answer gives: the content, then the final chunk.
func decodeWhole(body []byte) ([]*schema.Message, error) {
	var c completion
	if err := openai.Unmarshal(body, &c); err != nil {
		return nil, provider.Unknown("the response is not a chat completion", err)
	}
	if err := c.apiError(); err != nil {
		return nil, err
	}
	if len(c.Choices) == 0 {
		return nil, provider.Unknown("the response has no choices", nil)
	}
	ch := c.Choices[0]
	msg := &schema.Message{Role: schema.Assistant, Content: ch.Message.text(), ReasoningContent: ch.Message.reasoning()}
	for i, tc := range ch.Message.ToolCalls {
		id, args := tc.ID, tc.Function.Arguments
		if id == "" {
			id = openai.NewCallID()
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{
			Index:    &i,
			ID:       id,
			Type:     "function",
			Function: schema.FunctionCall{Name: tc.Function.Name, Arguments: args},
		})
	}
	out := []*schema.Message{msg, finalChunk(ch.FinishReason, len(msg.ToolCalls) > 0, c.Usage)}
	if mc := modelChunk(c.Model); mc != nil {
		out = append([]*schema.Message{mc}, out...) // the final chunk stays last
	}
	return out, nil
}

// calls numbers a stream's tool calls in the order they start and
// remembers which got their id and name.
type calls struct {
	byWire map[int]int    // wire index -> ours
	byID   map[string]int // call id -> ours
	hasID  []bool
	named  []bool
	args   []bool // some arguments arrived
}

func (c *calls) n() int { return len(c.hasID) }

// slot returns our index for a tool call piece.
func (c *calls) slot(tc *wireToolCall) int {
	if c.byWire == nil {
		c.byWire, c.byID = map[int]int{}, map[string]int{}
	}
	if tc.Index != nil {
		if i, ok := c.byWire[*tc.Index]; ok {
			return i
		}
		i := c.add()
		c.byWire[*tc.Index] = i
		return i
	}
	if tc.ID != "" {
		if i, ok := c.byID[tc.ID]; ok {
			return i
		}
		return c.add()
	}
	if c.n() == 0 {
		return c.add()
	}
	return c.n() - 1
}

func (c *calls) add() int {
	c.hasID = append(c.hasID, false)
	c.named = append(c.named, false)
	c.args = append(c.args, false)
	return len(c.hasID) - 1
}

// completion returns chunks completing the calls: an id for each call the
// server sent without one (some local servers do), so that results can
// refer to it, and {} as the arguments of a call that got none.
func (c *calls) completion() []*schema.Message {
	var out []*schema.Message
	for i := range c.hasID {
		tc := schema.ToolCall{}
		if !c.hasID[i] {
			tc.ID = openai.NewCallID()
		}
		if !c.args[i] {
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
		c      calls
		finish string
		seen   bool // a finish reason arrived
		named  bool // the model's name was passed on
		u      *usage
	)
	for {
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
			return finishStream(emit, &c, finish, u)
		}
		var chunk completion
		if err := openai.Unmarshal(ev.Data, &chunk); err != nil {
			return provider.Unknown("the stream sent a chunk that is not JSON", err)
		}
		if err := chunk.apiError(); err != nil {
			return err
		}
		if chunk.Usage != nil {
			u = chunk.Usage
		}
		if mc := modelChunk(chunk.Model); mc != nil && !named {
			named = true
			if !emit(mc) {
				return nil
			}
		}
		for i := range chunk.Choices {
			ch := &chunk.Choices[i]
			if ch.Index != 0 {
				continue
			}
			if ch.FinishReason != "" {
				finish, seen = ch.FinishReason, true
			}
			if !emitDelta(&ch.Delta, &c, emit) {
				return nil
			}
		}
	}
	if !seen {
		return provider.Unknown("the stream ended without [DONE] or a finish reason", nil)
	}
	return finishStream(emit, &c, finish, u)
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

// emitDelta emits a delta's text, reasoning and tool call pieces; false when
// the consumer has gone.
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
		idx := c.slot(tc)
		out := schema.ToolCall{Index: &idx, Function: schema.FunctionCall{Arguments: tc.Function.Arguments}}
		if tc.ID != "" && !c.hasID[idx] {
			out.ID, c.hasID[idx] = tc.ID, true
			c.byID[tc.ID] = idx
		}
		if tc.Function.Name != "" && !c.named[idx] {
			out.Function.Name, c.named[idx] = tc.Function.Name, true
		}
		if out.ID != "" || out.Function.Name != "" {
			out.Type = "function"
		}
		if strings.TrimSpace(out.Function.Arguments) != "" {
			c.args[idx] = true
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
