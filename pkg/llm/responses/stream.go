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

// event holds the fields of the events this package reads. It is decoded
// only once the event's type is known to be one of them; items and
// responses stay raw until their own type is read.
type event struct {
	OutputIndex  *int                `json:"output_index"`
	ItemID       string              `json:"item_id"`
	ContentIndex int                 `json:"content_index"`
	SummaryIndex int                 `json:"summary_index"`
	Delta        string              `json:"delta"`
	Text         string              `json:"text"`
	Refusal      string              `json:"refusal"`
	Arguments    provider.JSONText   `json:"arguments"`
	Input        string              `json:"input"`
	Item         json.RawMessage     `json:"item"`
	Response     json.RawMessage     `json:"response"`
	Code         json.RawMessage     `json:"code"`
	Message      string              `json:"message"`
	Error        *openai.ErrorObject `json:"error"`
}

// knownEvent reports whether this package reads events of type typ; every
// other event is skipped without its fields being decoded.
func knownEvent(typ string) bool {
	switch typ {
	case "response.created", "response.output_item.added", "response.output_item.done",
		"response.output_text.delta", "response.output_text.done",
		"response.refusal.delta", "response.refusal.done",
		"response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
		"response.reasoning_text.delta", "response.reasoning_text.done",
		"response.function_call_arguments.delta", "response.function_call_arguments.done",
		"response.custom_tool_call_input.delta", "response.custom_tool_call_input.done",
		"response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}

// readStream reads a Responses API stream and emits its deltas, then the
// final chunk. custom names the custom tools the request offered (see
// stream.providers).
func readStream(ctx context.Context, r *sse.Reader, custom map[string]bool, emit func(*schema.Message) bool) error {
	s := newStream(emit, custom)
	for n := 1; ; n++ {
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
		typ, err := provider.Type(ev.Data)
		if err != nil {
			return provider.UnreadableEvent("", n, ev.Type, ev.Data, err)
		}
		if typ == "" {
			typ = ev.Type
		}
		if !knownEvent(typ) {
			continue
		}
		var payload event
		if err := provider.Decode(ev.Data, &payload); err != nil {
			return provider.UnreadableEvent("", n, ev.Type, ev.Data, err)
		}
		done, ok, err := s.handle(typ, &payload)
		if err != nil || done || !ok {
			return err
		}
	}
}

// partKey names one streamed text: an output position and its content or
// summary part.
type partKey struct {
	pos   int
	index int
}

// call is a tool call of the response. Function calls stream live; a
// custom call the client runs is emitted whole at the end of the response
// (its free text becomes one JSON string), and so are the calls after it,
// so that the calls keep their order. A custom call the provider runs
// itself is never emitted (see stream.providers).
type call struct {
	pos      int
	custom   bool
	id, name string
	args     strings.Builder // what arrived: JSON text, or a custom call's free text
	index    int             // our number once emitted, -1 before
	sent     int             // bytes of args emitted
}

// stream is the state of one response being read. Everything is keyed by
// output position (output_index, and content_index or summary_index within
// it), never by item ids, which some gateways rewrite on every event.
type stream struct {
	emit func(*schema.Message) bool
	// custom are the names of the custom (freeform) tools the request
	// offered: a custom_tool_call naming one of them is the client's.
	custom  map[string]bool
	created bool
	texts   texts
	reasons texts
	// positions numbers items by id for events that carry no output_index.
	positions map[string]int
	calls     []*call // in the order they started
	byPos     map[int]*call
	ncalls    int  // calls emitted
	holding   bool // a client custom call waits for the end: later calls wait too
	reasoning map[int]reasoningItem
	order     []int // positions of reasoning, in order
}

// newStream reads one response of a request that offered the custom tools
// named in custom (nil: none).
func newStream(emit func(*schema.Message) bool, custom map[string]bool) *stream {
	return &stream{emit: emit, custom: custom, positions: map[string]int{},
		byPos: map[int]*call{}, reasoning: map[int]reasoningItem{}}
}

// providers reports whether c is a call the provider runs itself, not the
// client: a custom_tool_call that names no custom tool the request offered
// (xAI surfaces its server-side search tools this way, completed, their
// output kept on its side). The rule is by name, not by what follows the
// call, so it holds in a response cut short, one ending with the call, or
// one with more calls after it. A function_call is always the client's,
// also one naming a tool that was not offered: the engine answers it
// "unknown tool", which lets the model correct itself. A custom call whose
// name has not arrived yet is taken for the client's until it does.
func (s *stream) providers(c *call) bool {
	return c.custom && c.name != "" && !s.custom[c.name]
}

// pos is an event's output position: output_index, else a number kept for
// its item id.
func (s *stream) pos(e *event) int {
	if e.OutputIndex != nil {
		return *e.OutputIndex
	}
	p, ok := s.positions[e.ItemID]
	if !ok {
		p = -1 - len(s.positions)
		s.positions[e.ItemID] = p
	}
	return p
}

// handle applies one event. done is set after the terminal event; ok is
// false once the consumer has gone.
func (s *stream) handle(typ string, ev *event) (done, ok bool, err error) {
	switch typ {
	case "response.created":
		if s.created {
			return false, false, provider.Unknown("the stream sent a second response.created before the first response ended", nil)
		}
		s.created = true
	case "response.output_text.delta", "response.refusal.delta":
		return false, s.text(s.pos(ev), ev.ContentIndex, ev.Delta, false), nil
	case "response.output_text.done":
		return false, s.text(s.pos(ev), ev.ContentIndex, ev.Text, true), nil
	case "response.refusal.done":
		return false, s.text(s.pos(ev), ev.ContentIndex, ev.Refusal, true), nil
	case "response.reasoning_summary_text.delta":
		return false, s.reason(partKey{s.pos(ev), ev.SummaryIndex}, ev.Delta, false), nil
	case "response.reasoning_summary_text.done":
		return false, s.reason(partKey{s.pos(ev), ev.SummaryIndex}, ev.Text, true), nil
	case "response.reasoning_text.delta":
		return false, s.reason(partKey{s.pos(ev), -1 - ev.ContentIndex}, ev.Delta, false), nil
	case "response.reasoning_text.done":
		return false, s.reason(partKey{s.pos(ev), -1 - ev.ContentIndex}, ev.Text, true), nil
	case "response.output_item.added":
		if it, known := decodeItem(ev.Item); known {
			return false, s.itemAdded(it, s.pos(ev)), nil
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		if c := s.byPos[s.pos(ev)]; c != nil {
			return false, s.args(c, ev.Delta, false), nil
		}
	case "response.function_call_arguments.done":
		if c := s.byPos[s.pos(ev)]; c != nil {
			return false, s.args(c, string(ev.Arguments), true), nil
		}
	case "response.custom_tool_call_input.done":
		if c := s.byPos[s.pos(ev)]; c != nil {
			return false, s.args(c, ev.Input, true), nil
		}
	case "response.output_item.done":
		if it, known := decodeItem(ev.Item); known {
			return false, s.itemDone(it, s.pos(ev)), nil
		}
	case "response.completed", "response.incomplete":
		var r response
		if len(ev.Response) == 0 || provider.Decode(ev.Response, &r) != nil {
			return false, false, provider.Unknown("the stream's "+typ+" event has no response", nil)
		}
		return true, true, s.finish(&r)
	case "response.failed":
		var r response
		if provider.Decode(ev.Response, &r) == nil && r.Error != nil {
			return false, false, r.Error.Err()
		}
		return false, false, provider.FromStreamError("", "the response failed without saying why")
	case "error":
		obj := ev.Error
		if obj == nil {
			obj = &openai.ErrorObject{Message: ev.Message, Code: ev.Code}
		}
		return false, false, obj.Err()
	}
	return false, true, nil
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

// text emits message text; text of a new message item after another's
// starts with a blank line.
func (s *stream) text(pos, index int, piece string, whole bool) bool {
	piece = s.texts.next(partKey{pos, index}, partKey{pos: pos}, piece, whole)
	return piece == "" || s.emit(&schema.Message{Role: schema.Assistant, Content: piece})
}

// reason emits reasoning text; a new part starts with a blank line.
func (s *stream) reason(k partKey, piece string, whole bool) bool {
	piece = s.reasons.next(k, k, piece, whole)
	return piece == "" || s.emit(&schema.Message{Role: schema.Assistant, ReasoningContent: piece})
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

// itemAdded notes a new item: a message's position, or a call's start.
func (s *stream) itemAdded(it *outItem, pos int) bool {
	if it.isCall() {
		piece := string(it.Arguments)
		if it.Type == itemCustom {
			piece = it.Input
		}
		return s.startCall(it, pos) && s.args(s.byPos[pos], piece, false)
	}
	return true
}

// startCall opens the call at pos (once) and emits its id and name when it
// streams live; the caller adds the item's arguments.
func (s *stream) startCall(it *outItem, pos int) bool {
	c := s.byPos[pos]
	if c == nil {
		c = &call{pos: pos, custom: it.Type == itemCustom, index: -1}
		s.byPos[pos] = c
		s.calls = append(s.calls, c)
	}
	if c.id == "" {
		c.id = it.callID()
	}
	if c.name == "" {
		c.name = it.Name
	}
	if c.custom {
		if !s.providers(c) {
			s.holding = true
		}
		return true
	}
	if c.index < 0 && !s.holding {
		c.index = s.ncalls
		s.ncalls++
		i := c.index
		tc := schema.ToolCall{Index: &i, ID: c.id, Type: "function", Function: schema.FunctionCall{Name: c.name}}
		if !s.emit(&schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{tc}}) {
			return false
		}
	}
	return true
}

// args adds a piece of a call's arguments (whole: all of them) and emits
// what is new when the call streams live.
func (s *stream) args(c *call, piece string, whole bool) bool {
	catchUp(&c.args, piece, whole)
	if c.index < 0 || c.custom || c.args.Len() == c.sent {
		return true
	}
	piece = c.args.String()[c.sent:]
	c.sent = c.args.Len()
	i := c.index
	return s.emit(&schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{Index: &i, Function: schema.FunctionCall{Arguments: piece}}}})
}

// itemDone completes an item: a call's missing arguments, a message's
// missing text, a reasoning item's missing text and its data.
func (s *stream) itemDone(it *outItem, pos int) bool {
	switch it.Type {
	case itemFunction:
		return s.startCall(it, pos) && s.args(s.byPos[pos], string(it.Arguments), true)
	case itemCustom:
		return s.startCall(it, pos) && s.args(s.byPos[pos], it.Input, true)
	case itemMessage:
		for i, p := range it.Content {
			if text, ok := p.messageText(); ok && !s.text(pos, i, text, true) {
				return false
			}
		}
	case itemReasoning:
		n := 0
		for i, p := range it.Summary {
			if text, ok := p.reasoningText(); ok {
				n++
				if !s.reason(partKey{pos, i}, text, true) {
					return false
				}
			}
		}
		for i, p := range it.Content {
			if text, ok := p.reasoningText(); ok && n == 0 && !s.reason(partKey{pos, -1 - i}, text, true) {
				return false
			}
		}
		if it.ID != "" {
			if _, seen := s.reasoning[pos]; !seen {
				s.order = append(s.order, pos)
			}
			s.reasoning[pos] = reasoningItem{ID: it.ID, EncryptedContent: it.EncryptedContent}
		}
	}
	return true
}

// finish completes the response from its terminal event's response: what
// the stream did not carry is taken from the response's output (all of it
// for a stream that sent only the terminal event, and for a whole body),
// the waiting calls are emitted or dropped, then the final chunk.
func (s *stream) finish(r *response) error {
	var items []*outItem
	var at []int // output position of each item
	for i, raw := range r.Output {
		if it, ok := decodeItem(raw); ok {
			items, at = append(items, it), append(at, i)
		}
	}
	s.catchUpOutput(items, at)
	if !s.emitCalls() {
		return nil
	}
	norm, raw, err := r.finish(s.ncalls > 0)
	if err != nil {
		return err
	}
	ris := reasoningData(r.Output)
	if len(ris) == 0 {
		for _, p := range s.order {
			ris = append(ris, s.reasoning[p])
		}
	}
	final := finalChunk(norm, raw, r.Usage, ris)
	if r.Model != "" {
		final.Extra[provider.ExtraResponseModel] = r.Model
	}
	s.emit(final)
	return nil
}

// apart offsets the positions of terminal output items played after a
// stream that carried content, keeping them apart from streamed positions.
const apart = 1 << 24

// catchUpOutput plays the terminal output's items the stream did not
// carry: message text when no text streamed, reasoning when none streamed,
// and calls whose call id did not stream. Positions from the output are
// kept apart from streamed ones, so that a gateway numbering the two
// differently cannot make a text count twice.
func (s *stream) catchUpOutput(items []*outItem, at []int) {
	hadText, hadReasoning := s.texts.started, s.reasons.started
	streamed := len(s.calls) > 0 || hadText || hadReasoning
	ids := map[string]bool{}
	for _, c := range s.calls {
		ids[c.id] = true
	}
	for k, it := range items {
		pos := at[k]
		if streamed {
			pos += apart
		}
		switch {
		case it.isCall() && ids[it.callID()]: // streamed already
		case it.isCall(), it.Type == itemMessage && !hadText, it.Type == itemReasoning && !hadReasoning:
			if !s.itemDone(it, pos) {
				return
			}
		}
	}
}

// emitCalls finishes the calls: a live call that got no arguments gets {},
// and each waiting call is emitted whole, unless it is a custom call the
// provider runs itself (see providers).
func (s *stream) emitCalls() bool {
	for _, c := range s.calls {
		switch {
		case c.index >= 0:
			if c.args.Len() == 0 && !s.args(c, "{}", false) {
				return false
			}
		case s.providers(c):
		default:
			c.index = s.ncalls
			s.ncalls++
			i := c.index
			args := c.args.String()
			if c.custom {
				args = provider.FreeformArgs(args)
			} else if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			tc := schema.ToolCall{Index: &i, ID: c.id, Type: "function", Function: schema.FunctionCall{Name: c.name, Arguments: args}}
			if c.custom {
				tc.Extra = map[string]any{provider.ExtraToolCallData: map[string]string{provider.FreeformKey: provider.FreeformCall}}
			}
			if !s.emit(&schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{tc}}) {
				return false
			}
		}
	}
	return true
}
