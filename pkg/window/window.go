// Package window builds what a model request holds, out of an agent's
// history: the system prompt and the messages to send, their estimated
// tokens, and whether the history should be compacted first. It never calls
// a model and never changes the history.
//
// The rules, after agent-core's Context.build:
//
//   - The unit kept or dropped is a whole turn (history.Turns): a tool call
//     is never sent without its result, nor a result without its call.
//   - An orphan result (answering no call in the history) is never sent. A
//     call without a result (a run stopped while its tools ran, a result
//     lost) is sent with a stand-in failed result saying so, in the context
//     only: the history is not changed. Within a turn, a result is sent once
//     per call (a duplicate is left out) and only for that turn's calls.
//   - Reasoning parts are sent only when Options.Reasoning is set
//     (capabilities.reasoning). This package is where the engine drops them,
//     so the estimate counts what is sent; pkg/llm drops them too for callers
//     that bypass it. An assistant message left empty is not sent.
//   - The latest compaction summary is folded into the system prompt after
//     the agent's system prompt and the skills list, framed as the model's
//     own earlier work whose data tools confirmed. Older summaries are never
//     sent: the latest was made from a context that held them.
//   - With a summary, what is kept of the turns before it is chosen by
//     budget when MaxTokens is set: the first turns (the user's goal) while
//     they fit in 20 % of MaxTokens, the turns just before the summary while
//     they fit in 30 %, and every turn after the summary, whatever its size.
//     Without MaxTokens, by count: the first 3 turns and the last 3 before
//     the summary. When no turn follows the summary (right after a
//     compaction), the latest turn before it is kept whatever its size, so
//     the request is never empty. Without a summary every turn is sent: nothing is trimmed
//     silently; compaction is how a context shrinks.
//   - With MaxTokens set, Compact reports that the context reaches
//     Threshold × MaxTokens (default 0.8), unless no turn follows the
//     latest summary (a new summary would fold nothing new). Calling the
//     compaction model, once per round at most, is the caller's job.
package window

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/tokens"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Retention and trigger defaults.
const (
	// DefaultThreshold is the share of MaxTokens at which Compact is set.
	DefaultThreshold = 0.8
	// HeadShare is the share of MaxTokens the first turns may take after a
	// compaction.
	HeadShare = 0.2
	// TailShare is the share of MaxTokens the turns just before the latest
	// summary may take.
	TailShare = 0.3
	// HeadTurns and TailTurns are kept, by count, when MaxTokens is unset.
	HeadTurns = 3
	TailTurns = 3
)

// DefaultSummaryPreamble frames the latest summary in the system prompt. A
// bare summary reads to a model like a table the user handed it, and it then
// redoes the whole task; framed as its own confirmed work, it continues.
const DefaultSummaryPreamble = "The summary below is your own earlier work on this task, written by you " +
	"when the conversation grew long. The data in it was confirmed by tools. Continue from where it " +
	"leaves off; do not redo work it reports as done."

// MissingResult is the text of the stand-in result sent for a call that has
// no result in the history.
const MissingResult = "No result: this call did not finish (the run was stopped or its result was lost)."

// Options are what Build needs besides the history.
type Options struct {
	// System is the agent's system prompt.
	System string
	// Skills is appended to the system prompt when not empty, e.g.
	// skill.Set.SystemText().
	Skills string
	// Tools are the tool definitions sent with the request (the skill tool
	// included), counted in the estimate.
	Tools []*pluginv1.ToolSpec
	// Reasoning sends reasoning parts back to the model
	// (capabilities.reasoning).
	Reasoning bool
	// Counter estimates tokens; nil means no estimate (Tokens stays zero).
	// Required when MaxTokens is set.
	Counter *tokens.Counter
	// MaxTokens is the context budget; 0 means none: no compaction trigger,
	// retention by count.
	MaxTokens int
	// Threshold is the share of MaxTokens that sets Compact; 0 means
	// DefaultThreshold.
	Threshold float64
	// SummaryPreamble replaces DefaultSummaryPreamble when not empty.
	SummaryPreamble string
	// Cache, when set, carries what a Build worked out to the next Build of
	// the same history grown by appending (see Cache).
	Cache *Cache
}

// Tokens are estimated token counts.
type Tokens struct {
	System   int
	Tools    int
	Messages int
	// Total is System + Tools + Messages.
	Total int
}

// Context is what one model request holds.
type Context struct {
	// System is the system prompt: the agent's, then the skills list, then
	// the latest summary with its preamble, separated by blank lines.
	System string
	// Messages to send, in order. They may share parts with the history and
	// must not be changed.
	Messages []*agentv1.Message
	// Tokens estimates the request (zero without a Counter).
	Tokens Tokens
	// HistoryTokens estimates every message of the history, as if nothing
	// were trimmed (zero without a Counter).
	HistoryTokens int
	// Compact reports that the history should be compacted before this
	// request is sent (see the package doc).
	Compact bool
	// Summary is the history index of the summary folded into System, or -1.
	Summary int
	// Dropped counts the turns before the summary left out by retention.
	Dropped int
	// Repaired lists the ids of calls sent with a stand-in result.
	Repaired []string
}

// Build builds the context of the next request from history msgs.
func Build(msgs []*agentv1.Message, opts Options) (*Context, error) {
	if opts.MaxTokens < 0 {
		return nil, fmt.Errorf("window: max tokens %d is negative", opts.MaxTokens)
	}
	if opts.MaxTokens > 0 && opts.Counter == nil {
		return nil, errors.New("window: a max tokens budget needs a token counter")
	}
	threshold := opts.Threshold
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	if threshold < 0 || threshold > 1 {
		return nil, fmt.Errorf("window: compact threshold %v is not in (0, 1]", opts.Threshold)
	}

	cache := opts.Cache
	if cache == nil {
		cache = &Cache{oneOff: true}
	}
	turns, sent := cache.update(msgs, opts)
	summary := -1 // index into turns
	for i := len(turns) - 1; i >= 0; i-- {
		if history.IsSummary(msgs[turns[i].Head()]) {
			summary = i
			break
		}
	}
	b := builder{msgs: msgs, opts: opts}

	ctx := &Context{Summary: -1}
	var kept []built
	newTurns := true // turns that a new summary would fold in
	if summary < 0 {
		// Every turn is kept, in order: the messages are the cache's buffer
		// as it is, and only the turns' sum is needed.
		ctx.Messages = cache.buf[:len(cache.buf):len(cache.buf)]
		var sum built
		for _, st := range sent {
			sum.tokens += st.tokens
			sum.repaired = append(sum.repaired, st.repaired...)
		}
		kept = []built{sum}
	} else {
		ctx.Summary = turns[summary].Head()
		before := sending(sent[:summary])
		after := sending(sent[summary+1:])
		b.turnsAfter = len(after) > 0
		head, tail := b.retain(before)
		ctx.Dropped = len(before) - len(head) - len(tail)
		kept = slices.Concat(head, tail, after)
		newTurns = len(after) > 0
		n := 0
		for _, t := range kept {
			n += len(t.msgs)
		}
		ctx.Messages = make([]*agentv1.Message, 0, n)
		for _, t := range kept {
			ctx.Messages = append(ctx.Messages, t.msgs...)
		}
	}

	parts := make([]string, 0, 3)
	for _, s := range []string{opts.System, opts.Skills} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if ctx.Summary >= 0 {
		pre := opts.SummaryPreamble
		if pre == "" {
			pre = DefaultSummaryPreamble
		}
		parts = append(parts, pre+"\n\n<summary>\n"+history.SummaryText(msgs[ctx.Summary])+"\n</summary>")
	}
	ctx.System = strings.Join(parts, "\n\n")
	for _, t := range kept {
		ctx.Tokens.Messages += t.tokens
		ctx.Repaired = append(ctx.Repaired, t.repaired...)
	}

	if c := opts.Counter; c != nil {
		ctx.Tokens.System = c.System(ctx.System)
		ctx.Tokens.Tools = c.Tools(opts.Tools)
		ctx.Tokens.Total = ctx.Tokens.System + ctx.Tokens.Tools + ctx.Tokens.Messages
		ctx.HistoryTokens = cache.historyTokens
	}
	if opts.MaxTokens > 0 && float64(ctx.Tokens.Total) >= threshold*float64(opts.MaxTokens) {
		ctx.Compact = newTurns
	}
	return ctx, nil
}

// built is one turn as it will be sent.
type built struct {
	msgs     []*agentv1.Message
	tokens   int
	repaired []string
	sends    bool // false for a turn that sends nothing
}

// builder works out how the turns of the history msgs are sent under opts.
type builder struct {
	msgs []*agentv1.Message
	opts Options
	// buf holds every message sent, turn after turn; each built's msgs is a
	// piece of it, saving an allocation per turn.
	buf []*agentv1.Message
	// turnsAfter is set when some turn after the latest summary is sent.
	turnsAfter bool
}

// sending returns the turns that send something: orphans, summaries and
// turns left empty send nothing.
func sending(turns []built) []built {
	out := make([]built, 0, len(turns))
	for _, t := range turns {
		if t.sends {
			out = append(out, t)
		}
	}
	return out
}

// Cache carries what Build worked out for a history (its turns, and how
// each turn is sent and counted) to the next Build of one run. When the
// next history is the same one with messages appended that form turns of
// their own (as a step's model response and tool results do), and Counter
// and Reasoning are unchanged, Build works on the new messages only;
// otherwise it starts over. Messages are told apart by pointer: a message
// never changes once it is in a history (see package history). The zero
// value is ready to use; a Cache is not safe for concurrent use.
type Cache struct {
	last  []*agentv1.Message // the last history (a copy of the slice)
	turns []history.Turn
	ids   map[string]uint8 // tool-call ids of last: idCall, idResult

	counter       *tokens.Counter
	reasoning     bool
	sent          []built            // one per turn, as sent under counter and reasoning
	buf           []*agentv1.Message // the messages of sent, in turn order
	historyTokens int

	oneOff bool // used by one Build only: nothing to keep for a next one
}

// Bits of Cache.ids: the id of a call in an assistant message, of a
// result in a tool message (what history.Turns matches).
const (
	idCall uint8 = 1 << iota
	idResult
)

// update makes the cache hold the history msgs and opts, and returns the
// history's turns and how each is sent.
func (c *Cache) update(msgs []*agentv1.Message, opts Options) ([]history.Turn, []built) {
	known := len(c.last)
	grown := c.ids != nil && known <= len(msgs) && slices.Equal(c.last, msgs[:known]) && c.ownTurns(msgs[known:])
	if grown {
		if known < len(msgs) {
			tail := history.Turns(msgs[known:])
			for _, t := range tail {
				for i := range t.Indexes {
					t.Indexes[i] += known
				}
			}
			c.turns = append(c.turns, tail...)
			c.addIDs(msgs[known:])
			c.last = append(c.last, msgs[known:]...)
		}
	} else {
		c.turns = history.Turns(msgs)
		if !c.oneOff {
			c.ids = make(map[string]uint8, len(msgs))
			c.addIDs(msgs)
			c.last = slices.Clone(msgs)
		}
	}
	if !grown || c.counter != opts.Counter || c.reasoning != opts.Reasoning {
		// Start the sent turns over, in a new buffer: contexts built before
		// may still hold the old one.
		c.counter, c.reasoning = opts.Counter, opts.Reasoning
		c.sent = make([]built, 0, len(c.turns))
		c.buf = make([]*agentv1.Message, 0, len(msgs)+8)
		c.historyTokens = 0
		known = 0
	}
	b := builder{msgs: msgs, opts: opts, buf: c.buf}
	for _, t := range c.turns[len(c.sent):] {
		start := len(b.buf)
		bt, ok := b.turn(t)
		bt.msgs, bt.sends = b.buf[start:len(b.buf):len(b.buf)], ok
		c.sent = append(c.sent, bt)
	}
	c.buf = b.buf
	if opts.Counter != nil {
		c.historyTokens += opts.Counter.Messages(msgs[known:], opts.Reasoning)
	}
	return c.turns, c.sent
}

// ownTurns reports whether messages appended to the cached history leave
// its turns as they are: no new call answers or is answered by, and no new
// result answers, a message already in it.
func (c *Cache) ownTurns(tail []*agentv1.Message) bool {
	for _, m := range tail {
		for _, p := range m.GetParts() {
			switch m.GetRole() {
			case agentv1.Role_ROLE_ASSISTANT:
				if tc := p.GetToolCall(); tc != nil && c.ids[tc.GetId()] != 0 {
					return false
				}
			case agentv1.Role_ROLE_TOOL:
				if tr := p.GetToolResult(); tr != nil && c.ids[tr.GetToolCallId()]&idCall != 0 {
					return false
				}
			}
		}
	}
	return true
}

func (c *Cache) addIDs(msgs []*agentv1.Message) {
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			switch m.GetRole() {
			case agentv1.Role_ROLE_ASSISTANT:
				if tc := p.GetToolCall(); tc != nil {
					c.ids[tc.GetId()] |= idCall
				}
			case agentv1.Role_ROLE_TOOL:
				if tr := p.GetToolResult(); tr != nil {
					c.ids[tr.GetToolCallId()] |= idResult
				}
			}
		}
	}
}

// retain picks the turns before the summary to keep: a head and a tail.
func (b *builder) retain(before []built) (head, tail []built) {
	if b.opts.MaxTokens == 0 {
		nh := min(HeadTurns, len(before))
		nt := min(TailTurns, len(before)-nh)
		return before[:nh], before[len(before)-nt:]
	}
	headBudget := int(HeadShare * float64(b.opts.MaxTokens))
	tailBudget := int(TailShare * float64(b.opts.MaxTokens))
	nh, used := 0, 0
	for nh < len(before) && used+before[nh].tokens <= headBudget {
		used += before[nh].tokens
		nh++
	}
	start, used := len(before), 0
	for start > nh && used+before[start-1].tokens <= tailBudget {
		used += before[start-1].tokens
		start--
	}
	if start == len(before) && start > nh && !b.turnsAfter {
		// Right after a compaction nothing follows the summary: keep the
		// latest turn whatever its size, so the request is never empty and
		// the model still sees what it was answering.
		start--
	}
	return before[:nh], before[start:]
}

// turn prepares one turn; ok is false when it sends nothing.
func (b *builder) turn(t history.Turn) (built, bool) {
	head := b.msgs[t.Head()]
	if t.Orphan || history.IsSummary(head) {
		return built{}, false
	}
	var bt built
	m := b.strip(head)
	if len(m.GetParts()) == 0 {
		// An assistant message with nothing to send has no calls either, so
		// no results hang on it.
		return built{}, false
	}
	bt.add(b, head, m) // the cached count leaves reasoning apart
	if len(t.Indexes) == 1 && len(t.Missing) == 0 {
		return bt, true
	}

	// Results: only for this turn's calls, once each, then stand-ins. Turns
	// hold few calls, so a slice beats a map here.
	var few [8]pending
	calls := few[:0]
	for _, p := range head.GetParts() {
		if c := p.GetToolCall(); c != nil && find(calls, c.GetId()) < 0 {
			calls = append(calls, pending{id: c.GetId(), name: c.GetName()})
		}
	}
	for _, i := range t.Indexes[1:] {
		orig := b.msgs[i]
		keep := orig.GetParts()[:0:0]
		for _, p := range orig.GetParts() {
			r := p.GetToolResult()
			if r == nil {
				continue
			}
			k := find(calls, r.GetToolCallId())
			if k < 0 || calls[k].done {
				continue
			}
			calls[k].done = true
			keep = append(keep, p)
		}
		switch {
		case len(keep) == 0:
		case len(keep) == len(orig.GetParts()):
			bt.add(b, orig, orig)
		default:
			bt.add(b, nil, withParts(orig, keep))
		}
	}
	var stand []*agentv1.Part
	for _, c := range calls {
		if !c.done {
			stand = append(stand, history.ToolResult(c.id, c.name, history.TextOutput(MissingResult), true))
			bt.repaired = append(bt.repaired, c.id)
		}
	}
	if len(stand) > 0 {
		bt.add(b, nil, history.Tool(stand...))
	}
	return bt, true
}

// pending is a call of a turn and whether a result for it was sent.
type pending struct {
	id, name string
	done     bool
}

func find(calls []pending, id string) int {
	for i := range calls {
		if calls[i].id == id {
			return i
		}
	}
	return -1
}

// add appends m, sent in place of orig. orig is nil when m is made here and
// must be counted afresh; otherwise m is orig, or orig less its reasoning,
// and orig's cached count applies.
func (bt *built) add(b *builder, orig, m *agentv1.Message) {
	b.buf = append(b.buf, m)
	switch c := b.opts.Counter; {
	case c == nil:
	case orig != nil:
		bt.tokens += c.Message(orig, b.opts.Reasoning)
	default:
		bt.tokens += c.Fresh(m, b.opts.Reasoning)
	}
}

// strip removes reasoning parts when they are not sent.
func (b *builder) strip(m *agentv1.Message) *agentv1.Message {
	if b.opts.Reasoning || m.GetRole() != agentv1.Role_ROLE_ASSISTANT {
		return m
	}
	n := 0
	for _, p := range m.GetParts() {
		if p.GetReasoning() != nil {
			n++
		}
	}
	if n == 0 {
		return m
	}
	keep := make([]*agentv1.Part, 0, len(m.GetParts())-n)
	for _, p := range m.GetParts() {
		if p.GetReasoning() == nil {
			keep = append(keep, p)
		}
	}
	return withParts(m, keep)
}

// withParts returns a copy of m's fields with other parts.
func withParts(m *agentv1.Message, parts []*agentv1.Part) *agentv1.Message {
	return &agentv1.Message{
		Id: m.GetId(), Role: m.GetRole(), Parts: parts, Compact: m.GetCompact(),
		CreateTime: m.GetCreateTime(), Usage: m.GetUsage(), FinishReason: m.GetFinishReason(),
	}
}
