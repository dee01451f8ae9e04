package responses

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

// response is a response object: a whole body, or the one in a terminal
// event.
type response struct {
	Status            string              `json:"status"`
	Output            []outputItem        `json:"output"`
	Usage             *usage              `json:"usage"`
	Error             *openai.ErrorObject `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type usage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type textPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

type outputItem struct {
	Type             string     `json:"type"`
	ID               string     `json:"id"`
	Content          []textPart `json:"content"`
	Summary          []textPart `json:"summary"`
	EncryptedContent string     `json:"encrypted_content"`
	CallID           string     `json:"call_id"`
	Name             string     `json:"name"`
	Arguments        string     `json:"arguments"`
	Input            string     `json:"input"`
}

func (it *outputItem) isCall() bool {
	return it.Type == "function_call" || it.Type == "custom_tool_call"
}

// text is a message item's text.
func (it *outputItem) text() string {
	var b strings.Builder
	for _, p := range it.Content {
		b.WriteString(p.Text)
		b.WriteString(p.Refusal)
	}
	return b.String()
}

// reasoning is a reasoning item's summary parts, or its reasoning_text
// content when it has no summary.
func (it *outputItem) reasoning() []string {
	var out []string
	for _, p := range it.Summary {
		out = append(out, p.Text)
	}
	if len(out) == 0 {
		for _, p := range it.Content {
			out = append(out, p.Text)
		}
	}
	return out
}

// toolCall is the call for a function_call or custom_tool_call item, whole.
func (it *outputItem) toolCall(index int) schema.ToolCall {
	tc := schema.ToolCall{Index: &index, ID: it.CallID, Type: "function",
		Function: schema.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
	if strings.TrimSpace(tc.Function.Arguments) == "" {
		tc.Function.Arguments = "{}"
	}
	if it.Type == "custom_tool_call" {
		b, _ := json.Marshal(it.Input)
		tc.Function.Arguments = string(b)
		tc.Extra = customExtra()
	}
	if tc.ID == "" {
		tc.ID = it.ID
	}
	return tc
}

func customExtra() map[string]any {
	return map[string]any{provider.ExtraToolCallData: map[string]string{CallTypeKey: "custom"}}
}

// finish maps a finished response's status to the normalised and raw
// finish reasons; err is set for a failed or unfinished response.
func (r *response) finish(hasToolCalls bool) (norm, raw string, err error) {
	switch r.Status {
	case "completed":
		if hasToolCalls {
			return provider.FinishToolCalls, r.Status, nil
		}
		return provider.FinishStop, r.Status, nil
	case "incomplete":
		raw = r.Status
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
			raw = r.IncompleteDetails.Reason
		}
		switch raw {
		case "max_output_tokens":
			return provider.FinishLength, raw, nil
		case "content_filter":
			return provider.FinishContentFilter, raw, nil
		}
		return provider.FinishOther, raw, nil
	case "failed":
		if r.Error != nil {
			return "", "", r.Error.Err()
		}
		return "", "", provider.FromStreamError("", "the response failed without saying why")
	}
	return "", "", provider.Unknown("the response is not finished (status "+r.Status+")", nil)
}

// finalChunk carries the finish reason, usage and reasoning item data.
func finalChunk(norm, raw string, u *usage, items []reasoningItem) *schema.Message {
	msg := &schema.Message{
		Role:         schema.Assistant,
		ResponseMeta: &schema.ResponseMeta{FinishReason: norm, Usage: &schema.TokenUsage{}},
		Extra:        map[string]any{provider.ExtraRawFinishReason: raw},
	}
	if u != nil {
		tu := msg.ResponseMeta.Usage
		tu.PromptTokens, tu.CompletionTokens, tu.TotalTokens = u.InputTokens, u.OutputTokens, u.TotalTokens
		if tu.TotalTokens == 0 {
			tu.TotalTokens = u.InputTokens + u.OutputTokens
		}
		if d := u.InputTokensDetails; d != nil {
			tu.PromptTokenDetails.CachedTokens = d.CachedTokens
		}
		if d := u.OutputTokensDetails; d != nil {
			tu.CompletionTokensDetails.ReasoningTokens = d.ReasoningTokens
		}
	}
	if len(items) > 0 {
		b, _ := json.Marshal(items)
		msg.Extra[provider.ExtraReasoningData] = map[string]string{ReasoningKey: string(b)}
	}
	return msg
}

// reasoningData returns the reasoning items' provider data of an output.
func reasoningData(output []outputItem) []reasoningItem {
	var out []reasoningItem
	for _, it := range output {
		if it.Type == "reasoning" && it.ID != "" {
			out = append(out, reasoningItem{ID: it.ID, EncryptedContent: it.EncryptedContent})
		}
	}
	return out
}

// outputMessage is the content of an output: reasoning, text and tool calls
// as one chunk, nil when there is none.
func outputMessage(output []outputItem) *schema.Message {
	msg := &schema.Message{Role: schema.Assistant}
	var texts, reasoning []string
	for i := range output {
		it := &output[i]
		switch {
		case it.Type == "message":
			texts = append(texts, it.text())
		case it.Type == "reasoning":
			reasoning = append(reasoning, it.reasoning()...)
		case it.isCall():
			msg.ToolCalls = append(msg.ToolCalls, it.toolCall(len(msg.ToolCalls)))
		}
	}
	msg.Content = strings.Join(texts, "\n\n")
	msg.ReasoningContent = strings.Join(reasoning, "\n\n")
	if msg.Content == "" && msg.ReasoningContent == "" && len(msg.ToolCalls) == 0 {
		return nil
	}
	return msg
}

// decodeWhole turns a non-streaming body into the chunks a stream of the
// same answer gives: the content, then the final chunk.
func decodeWhole(body []byte) ([]*schema.Message, error) {
	var r response
	if err := openai.Unmarshal(body, &r); err != nil {
		return nil, provider.Unknown("the response is not a Responses API response", err)
	}
	if r.Status == "" && r.Error != nil {
		return nil, r.Error.Err()
	}
	content := outputMessage(r.Output)
	norm, raw, err := r.finish(content != nil && len(content.ToolCalls) > 0)
	if err != nil {
		return nil, err
	}
	var chunks []*schema.Message
	if content != nil {
		chunks = append(chunks, content)
	}
	return append(chunks, finalChunk(norm, raw, r.Usage, reasoningData(r.Output))), nil
}

// event is one stream event, with the fields of every type this package
// reads.
type event struct {
	Type         string              `json:"type"`
	ItemID       string              `json:"item_id"`
	OutputIndex  int                 `json:"output_index"`
	ContentIndex int                 `json:"content_index"`
	SummaryIndex int                 `json:"summary_index"`
	Delta        string              `json:"delta"`
	Text         string              `json:"text"`
	Refusal      string              `json:"refusal"`
	Arguments    string              `json:"arguments"`
	Input        string              `json:"input"`
	Item         *outputItem         `json:"item"`
	Response     *response           `json:"response"`
	Code         json.RawMessage     `json:"code"`
	Message      string              `json:"message"`
	Error        *openai.ErrorObject `json:"error"`
}

// partKey names one streamed text: an item and its content or summary part.
type partKey struct {
	item  string
	index int
}

// call is a streamed tool call.
type call struct {
	index  int
	custom bool
	sent   strings.Builder // arguments (custom: raw input) sent so far
	closed bool            // a custom call's closing quote was sent
}

// stream is the state of one stream being read.
type stream struct {
	emit      func(*schema.Message) bool
	texts     texts
	reasons   texts
	calls     map[string]*call // by item id
	byOutput  map[int]*call
	ncalls    int
	reasoning []reasoningItem
	emitted   bool
}

// readStream reads a Responses API stream and emits its deltas, then the
// final chunk.
func readStream(ctx context.Context, r *sse.Reader, emit func(*schema.Message) bool) error {
	s := &stream{emit: emit, calls: map[string]*call{}, byOutput: map[int]*call{}}
	for {
		ev, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || provider.IsEOF(err) {
				return provider.Unknown("the stream ended without response.completed", nil)
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return provider.Unknown("the stream sent an oversized event", err)
			}
			return provider.FromTransport(ctx, err)
		}
		var e event
		if err := openai.Unmarshal(ev.Data, &e); err != nil {
			return provider.Unknown("the stream sent an event that is not JSON", err)
		}
		if e.Type == "" {
			e.Type = ev.Type
		}
		done, ok, err := s.handle(&e)
		if err != nil || done || !ok {
			return err
		}
	}
}

// handle applies one event. done is set after the terminal event; ok is
// false once the consumer has gone.
func (s *stream) handle(e *event) (done, ok bool, err error) {
	switch e.Type {
	case "response.output_text.delta", "response.refusal.delta":
		return false, s.text(e, e.Delta, false), nil
	case "response.output_text.done":
		return false, s.text(e, e.Text, true), nil
	case "response.refusal.done":
		return false, s.text(e, e.Refusal, true), nil
	case "response.reasoning_summary_text.delta":
		return false, s.reason(partKey{e.ItemID, e.SummaryIndex}, e.Delta, false), nil
	case "response.reasoning_summary_text.done":
		return false, s.reason(partKey{e.ItemID, e.SummaryIndex}, e.Text, true), nil
	case "response.reasoning_text.delta":
		return false, s.reason(partKey{e.ItemID, -1 - e.ContentIndex}, e.Delta, false), nil
	case "response.reasoning_text.done":
		return false, s.reason(partKey{e.ItemID, -1 - e.ContentIndex}, e.Text, true), nil
	case "response.output_item.added":
		if e.Item != nil && e.Item.isCall() {
			return false, s.startCall(e.Item, e.OutputIndex), nil
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if c := s.call(e.ItemID, e.OutputIndex); c != nil {
			return false, s.args(c, e.Delta, false), nil
		}
	case "response.function_call_arguments.done":
		if c := s.call(e.ItemID, e.OutputIndex); c != nil {
			return false, s.args(c, e.Arguments, true), nil
		}
	case "response.custom_tool_call_input.done":
		if c := s.call(e.ItemID, e.OutputIndex); c != nil {
			return false, s.args(c, e.Input, true), nil
		}
	case "response.output_item.done":
		return false, s.itemDone(e.Item, e.OutputIndex), nil
	case "response.completed", "response.incomplete":
		if e.Response == nil {
			return false, false, provider.Unknown("the stream's "+e.Type+" event has no response", nil)
		}
		return true, true, s.finish(e.Response)
	case "response.failed":
		if e.Response != nil && e.Response.Error != nil {
			return false, false, e.Response.Error.Err()
		}
		return false, false, provider.FromStreamError("", "the response failed without saying why")
	case "error":
		obj := e.Error
		if obj == nil {
			obj = &openai.ErrorObject{Message: e.Message, Code: e.Code}
		}
		return false, false, obj.Err()
	}
	return false, true, nil
}

func (s *stream) send(m *schema.Message) bool {
	s.emitted = true
	return s.emit(m)
}

// catchUp returns what to emit for one streamed piece: a delta as it is,
// or, for a whole ".done" text, the part of it not sent yet.
func catchUp(sent *strings.Builder, piece string, whole bool) string {
	if !whole {
		sent.WriteString(piece)
		return piece
	}
	rest, ok := strings.CutPrefix(piece, sent.String())
	if !ok {
		return "" // the deltas disagree with the whole text: what was sent stands
	}
	sent.WriteString(rest)
	return rest
}

// text emits message text; text from a new message item after another's
// starts with a blank line.
func (s *stream) text(e *event, piece string, whole bool) bool {
	piece = s.texts.next(partKey{e.ItemID, e.ContentIndex}, partKey{item: e.ItemID}, piece, whole)
	return piece == "" || s.send(&schema.Message{Role: schema.Assistant, Content: piece})
}

// reason emits reasoning text; a new part starts with a blank line.
func (s *stream) reason(k partKey, piece string, whole bool) bool {
	piece = s.reasons.next(k, k, piece, whole)
	return piece == "" || s.send(&schema.Message{Role: schema.Assistant, ReasoningContent: piece})
}

// texts tracks streamed texts (message text, or reasoning) by part.
type texts struct {
	sent    map[partKey]*strings.Builder
	last    partKey // the group of the last piece sent
	started bool
}

// next returns what to send for a piece of part k: the piece (or, for a
// whole ".done" text, its unsent tail), after a blank line when it starts
// another group than the last piece's.
func (t *texts) next(k, group partKey, piece string, whole bool) string {
	if t.sent == nil {
		t.sent = map[partKey]*strings.Builder{}
	}
	sent := t.sent[k]
	if sent == nil {
		sent = &strings.Builder{}
		t.sent[k] = sent
	}
	piece = catchUp(sent, piece, whole)
	if piece == "" {
		return ""
	}
	if t.started && t.last != group {
		piece = "\n\n" + piece
	}
	t.last, t.started = group, true
	return piece
}

// call finds a streamed call by item id, else by output index.
func (s *stream) call(itemID string, outputIndex int) *call {
	if c, ok := s.calls[itemID]; ok && itemID != "" {
		return c
	}
	return s.byOutput[outputIndex]
}

// startCall emits a call's id and name (and, for a custom call, the opening
// quote of its arguments).
func (s *stream) startCall(it *outputItem, outputIndex int) bool {
	if s.call(it.ID, outputIndex) != nil {
		return true
	}
	c := &call{index: s.ncalls, custom: it.Type == "custom_tool_call"}
	s.ncalls++
	if it.ID != "" {
		s.calls[it.ID] = c
	}
	s.byOutput[outputIndex] = c
	tc := it.toolCall(c.index)
	tc.Function.Arguments = ""
	if c.custom {
		tc.Function.Arguments = `"`
	}
	if !s.send(&schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{tc}}) {
		return false
	}
	piece := it.Arguments
	if c.custom {
		piece = it.Input
	}
	return s.args(c, piece, false)
}

// args emits a piece of a call's arguments (JSON-escaped for a custom call).
func (s *stream) args(c *call, piece string, whole bool) bool {
	if c.closed {
		return true
	}
	piece = catchUp(&c.sent, piece, whole)
	if piece == "" {
		return true
	}
	if c.custom {
		b, _ := json.Marshal(piece)
		piece = string(b[1 : len(b)-1])
	}
	idx := c.index
	return s.send(&schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{Index: &idx, Function: schema.FunctionCall{Arguments: piece}}}})
}

// itemDone completes an item: a call's missing arguments (and a custom
// call's closing quote), a message's missing text, a reasoning item's data.
func (s *stream) itemDone(it *outputItem, outputIndex int) bool {
	if it == nil {
		return true
	}
	switch {
	case it.isCall():
		if !s.startCall(it, outputIndex) {
			return false
		}
		c := s.call(it.ID, outputIndex)
		if !c.custom {
			if !s.args(c, it.Arguments, true) {
				return false
			}
			if c.sent.Len() == 0 { // a call without arguments
				return s.args(c, "{}", false)
			}
			return true
		}
		if !s.args(c, it.Input, true) {
			return false
		}
		c.closed = true
		idx := c.index
		return s.send(&schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{Index: &idx, Function: schema.FunctionCall{Arguments: `"`}}}})
	case it.Type == "message":
		for i, p := range it.Content {
			e := &event{ItemID: it.ID, ContentIndex: i}
			if !s.text(e, p.Text+p.Refusal, true) {
				return false
			}
		}
	case it.Type == "reasoning":
		if it.ID != "" {
			s.reasoning = append(s.reasoning, reasoningItem{ID: it.ID, EncryptedContent: it.EncryptedContent})
		}
	}
	return true
}

// finish emits the final chunk from the terminal event's response. A stream
// that sent no content events is read from the response's output.
func (s *stream) finish(r *response) error {
	if !s.emitted {
		if content := outputMessage(r.Output); content != nil {
			s.ncalls = len(content.ToolCalls)
			if !s.send(content) {
				return nil
			}
		}
	}
	norm, raw, err := r.finish(s.ncalls > 0)
	if err != nil {
		return err
	}
	items := reasoningData(r.Output)
	if len(items) == 0 {
		items = s.reasoning
	}
	s.emit(finalChunk(norm, raw, r.Usage, items))
	return nil
}
