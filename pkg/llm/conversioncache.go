package llm

import (
	"reflect"
	"slices"
	"sync"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// ConversionCache keeps the eino messages that history messages became in
// recent requests, so that a request converts only what is new since the
// last one. One run of an agent (a send: many requests over a growing
// history) owns one; the zero value is ready to use and it is safe for
// concurrent use.
//
// When a request's messages are the last request's with messages appended
// whose tool-call ids are new (as a step's model response and tool results
// are), the last request's conversion is taken as it is and only the new
// messages are looked at. Otherwise each message is looked up on its own.
//
// It also keeps the converted tools of the last request (see ToolSet).
//
// A conversion is kept under the history message's pointer, which relies on
// a message never changing once it is in a history (see package history),
// together with the settings it was made with (capabilities, media
// fallback, text tool protocol): other settings convert afresh. A message
// whose tool call or result has no other half in the request is converted
// afresh every time. What the last two requests did not use is dropped, so
// a ConversionCache holds about one request's messages.
//
// The eino messages handed to a model are then shared between requests: a
// model must only read them, as this package's adapters do.
type ConversionCache struct {
	mu      sync.Mutex
	request uint64 // counts requests
	kept    map[*agentv1.Message]*conversion

	// The last request, which the next may extend.
	last     []*agentv1.Message // its history (a copy)
	settings conversionSettings
	conv     conversation

	tools []Tool // and their conversion:
	set   *ToolSet
}

// conversion is one history message's eino form.
type conversion struct {
	settings conversionSettings
	msgs     []*schema.Message
	used     uint64 // the last request that used it
}

// conversionSettings are what a conversion depends on besides its message.
type conversionSettings struct {
	caps     Capabilities
	fallback MediaFallback
	text     bool
	protocol provider.Protocol
}

// begin starts a request of history under settings. It returns the
// conversation to go on with and the index of the first message it does
// not hold yet: the last request's, when history extends it with messages
// whose tool-call ids it has not seen, else an empty one. Call it with mu
// held.
func (c *ConversionCache) begin(history []*agentv1.Message, settings conversionSettings) (*conversation, int) {
	c.request++
	if c.kept == nil {
		c.kept = map[*agentv1.Message]*conversion{}
	}
	n := len(c.last)
	if c.conv.ids != nil && settings == c.settings && n <= len(history) &&
		slices.Equal(c.last, history[:n]) && newIDs(history[n:], c.conv.ids) {
		return &c.conv, n
	}
	c.last, c.settings = c.last[:0], settings
	if c.conv.ids == nil {
		c.conv.ids = map[string]uint8{}
	}
	clear(c.conv.ids)
	// New slices: contexts converted before may hold the old ones.
	c.conv.sys, c.conv.body, c.conv.leading = nil, nil, true
	return &c.conv, 0
}

// newIDs reports whether no tool call or result in msgs has an id in ids.
func newIDs(msgs []*agentv1.Message, ids map[string]uint8) bool {
	for _, m := range msgs {
		for _, p := range m.GetParts() {
			if tc := p.GetToolCall(); tc != nil && ids[tc.GetId()] != 0 {
				return false
			}
			if tr := p.GetToolResult(); tr != nil && ids[tr.GetToolCallId()] != 0 {
				return false
			}
		}
	}
	return true
}

// keep records that the conversation now holds history. Call it with mu held.
func (c *ConversionCache) keep(history []*agentv1.Message) {
	c.last = append(c.last, history[len(c.last):]...)
}

// forget drops the conversation after a failed request. Call it with mu held.
func (c *ConversionCache) forget() {
	c.last, c.conv.ids = nil, nil
}

// end drops what neither this request nor the last one used, once there
// is much of it. Call it with mu held.
func (c *ConversionCache) end(used int) {
	if len(c.kept) <= 2*used+16 {
		return
	}
	for m, cv := range c.kept {
		if cv.used+1 < c.request {
			delete(c.kept, m)
		}
	}
}

// get returns the kept conversion of m made with s. Call it with mu held.
func (c *ConversionCache) get(m *agentv1.Message, s conversionSettings) ([]*schema.Message, bool) {
	cv := c.kept[m]
	if cv == nil || cv.settings != s {
		return nil, false
	}
	cv.used = c.request
	return cv.msgs, true
}

// put keeps the conversion of m made with s. Call it with mu held.
func (c *ConversionCache) put(m *agentv1.Message, s conversionSettings, msgs []*schema.Message) {
	c.kept[m] = &conversion{settings: s, msgs: msgs, used: c.request}
}

// toolSet returns tools converted, converting them only when they are not
// the tools of the last call (same names, descriptions and schema maps).
func (c *ConversionCache) toolSet(tools []Tool) (*ToolSet, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sameTools(c.tools, tools) {
		return c.set, nil
	}
	set, err := toolSetOf(tools)
	if err != nil {
		return nil, err
	}
	c.tools, c.set = slices.Clone(tools), set
	return set, nil
}

func sameTools(a, b []Tool) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description ||
			reflect.ValueOf(a[i].Schema).UnsafePointer() != reflect.ValueOf(b[i].Schema).UnsafePointer() {
			return false
		}
	}
	return true
}
