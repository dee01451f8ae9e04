package tokens

import (
	"sync"

	"github.com/agentcore/agentcore/pkg/history"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Estimates added to the text of a request, after OpenAI's published way of
// counting chat messages. They are estimates: providers frame messages in
// their own ways.
const (
	// MessageOverhead is added once per message (role and framing).
	MessageOverhead = 3
	// PartOverhead is added per tool call and tool result (ids and framing
	// besides the id, name and arguments, which are counted as text).
	PartOverhead = 3
	// ToolOverhead is added per tool definition (framing besides its name,
	// description and schema, which are counted as text).
	ToolOverhead = 8
)

// maxTexts bounds the cache of system prompts and tool definitions; when it
// is full the cache starts over.
const maxTexts = 256

// Strings of at most shortLen bytes in messages (tool names, call ids,
// small arguments and results) are counted through a cache of at most
// maxShort entries, which starts over when full: a call's id is in its call
// and in its result, and names recur. Counting even a short string costs
// microseconds of tiktoken's regular expressions.
const (
	shortLen = 64
	maxShort = 256
)

// Counter counts the tokens of messages, a system prompt and tool
// definitions, caching what it counted. A session owns one. Safe for
// concurrent use.
//
// A message's count is cached under its pointer: this relies on a message
// never changing once it is in a history (see package history). A message
// that changes must be a new message. Nothing else invalidates a count: the
// encoding is fixed per Counter (a session whose model moves to another
// encoding makes a new Counter), and reasoning is cached apart, so one count
// serves both capabilities.reasoning settings. Retain drops the counts of
// messages no longer in the history, e.g. after the history was replaced.
type Counter struct {
	enc *Encoder

	mu    sync.Mutex
	msgs  map[*agentv1.Message]count
	texts map[string]int
	short map[string]int
}

// count is one message's tokens, reasoning apart.
type count struct {
	base      int // everything but reasoning, overhead included
	reasoning int // reasoning parts
}

// NewCounter returns a counter using enc, which may be shared.
func NewCounter(enc *Encoder) *Counter {
	return &Counter{enc: enc, msgs: make(map[*agentv1.Message]count), texts: make(map[string]int), short: make(map[string]int)}
}

// Encoder returns the counter's encoder.
func (c *Counter) Encoder() *Encoder { return c.enc }

// Text returns the tokens of text (not cached).
func (c *Counter) Text(text string) int { return c.enc.Count(text) }

// Message returns the tokens m takes in a request, counting its reasoning
// parts only when withReasoning is true. The count is cached.
func (c *Counter) Message(m *agentv1.Message, withReasoning bool) int {
	c.mu.Lock()
	n, ok := c.msgs[m]
	c.mu.Unlock()
	if !ok {
		n = c.count(m)
		c.mu.Lock()
		c.msgs[m] = n
		c.mu.Unlock()
	}
	return n.total(withReasoning)
}

// Messages returns the sum of Message over h.
func (c *Counter) Messages(h []*agentv1.Message, withReasoning bool) int {
	total := 0
	var misses []*agentv1.Message
	c.mu.Lock()
	for _, m := range h {
		if n, ok := c.msgs[m]; ok {
			total += n.total(withReasoning)
		} else {
			misses = append(misses, m)
		}
	}
	c.mu.Unlock()
	for _, m := range misses {
		total += c.Message(m, withReasoning)
	}
	return total
}

// Fresh counts m like Message without caching it: for messages made for one
// request only, which would otherwise fill the cache.
func (c *Counter) Fresh(m *agentv1.Message, withReasoning bool) int {
	return c.count(m).total(withReasoning)
}

// Cached reports how many message counts the counter holds.
func (c *Counter) Cached() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// Retain drops the cached counts of every message not in h.
func (c *Counter) Retain(h []*agentv1.Message) {
	keep := make(map[*agentv1.Message]struct{}, len(h))
	for _, m := range h {
		keep[m] = struct{}{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for m := range c.msgs {
		if _, ok := keep[m]; !ok {
			delete(c.msgs, m)
		}
	}
}

// System returns the tokens of a system prompt, as a message. Empty is 0.
func (c *Counter) System(system string) int {
	if system == "" {
		return 0
	}
	return c.cachedText(system) + MessageOverhead
}

// Tools returns the tokens of tool definitions: name, description and input
// schema of each, plus ToolOverhead.
func (c *Counter) Tools(tools []*pluginv1.ToolSpec) int {
	total := 0
	for _, t := range tools {
		total += c.cachedText(t.GetName()+"\n"+t.GetDescription()+"\n"+t.GetInputSchemaJson()) + ToolOverhead
	}
	return total
}

func (c *Counter) cachedText(s string) int { return c.cached(c.texts, maxTexts, s) }

// text counts a string of a message, through the cache when it is short.
func (c *Counter) text(s string) int {
	if s == "" || len(s) > shortLen {
		return c.enc.Count(s)
	}
	return c.cached(c.short, maxShort, s)
}

// cached counts s through cache, which holds at most limit counts and
// starts over when full.
func (c *Counter) cached(cache map[string]int, limit int, s string) int {
	c.mu.Lock()
	n, ok := cache[s]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.enc.Count(s)
	c.mu.Lock()
	if len(cache) >= limit {
		clear(cache)
	}
	cache[s] = n
	c.mu.Unlock()
	return n
}

func (n count) total(withReasoning bool) int {
	if withReasoning {
		return n.base + n.reasoning
	}
	return n.base
}

func (c *Counter) count(m *agentv1.Message) count {
	n := count{base: MessageOverhead}
	for _, p := range m.GetParts() {
		if r := p.GetReasoning(); r != nil {
			n.reasoning += c.text(r.GetText())
			continue
		}
		n.base += c.part(p)
	}
	return n
}

// part counts a part other than reasoning.
func (c *Counter) part(p *agentv1.Part) int {
	switch k := p.GetKind().(type) {
	case *agentv1.Part_Text:
		return c.text(k.Text)
	case *agentv1.Part_ToolCall:
		t := k.ToolCall
		return PartOverhead + c.text(t.GetId()) + c.text(t.GetName()) + c.text(t.GetArguments())
	case *agentv1.Part_ToolResult:
		r := k.ToolResult
		n := PartOverhead + c.text(r.GetToolCallId()) + c.text(r.GetToolName())
		switch out := r.GetOutput().GetValue().(type) {
		case *agentv1.ToolOutput_Text:
			n += c.text(out.Text)
		case *agentv1.ToolOutput_Json:
			n += c.text(out.Json)
		case *agentv1.ToolOutput_Content:
			for _, q := range out.Content.GetParts() {
				n += c.part(q)
			}
		}
		return n
	}
	if f := history.Media(p); f != nil {
		return c.media(history.PartKind(p), f)
	}
	return 0
}
