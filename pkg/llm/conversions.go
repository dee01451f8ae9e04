package llm

import (
	"sync"

	"github.com/cloudwego/eino/schema"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Conversions keeps the eino messages that history messages became in
// recent requests, so that a request converts only what is new since the
// last one. One run of an agent (a send: many requests over a growing
// history) owns one; the zero value is ready to use and it is safe for
// concurrent use.
//
// A conversion is kept under the history message's pointer, which relies on
// a message never changing once it is in a history (see package history),
// and under the settings it depends on (capabilities, media fallback, text
// tool protocol). A message whose tool call or result has no other half in
// the request is converted afresh every time. What a request did not use is
// dropped at the request after it, so a Conversions holds about one
// request's messages.
//
// The eino messages handed to a model are then shared between requests: a
// model must only read them, as this package's adapters do.
type Conversions struct {
	mu        sync.Mutex
	cur, prev map[conversionKey][]*schema.Message
	ids       map[string]uint8 // the current request's tool-call ids
}

// conversionKey is a history message and the settings its conversion
// depends on.
type conversionKey struct {
	msg      *agentv1.Message
	caps     Capabilities
	fallback MediaFallback
	text     bool
}

// begin starts a request: the conversions the last request used become
// the ones to look in, and the returned ids map is empty. Call it with mu held.
func (c *Conversions) begin() map[string]uint8 {
	c.prev, c.cur = c.cur, c.prev
	if c.cur == nil {
		c.cur = map[conversionKey][]*schema.Message{}
	}
	clear(c.cur)
	if c.ids == nil {
		c.ids = map[string]uint8{}
	}
	clear(c.ids)
	return c.ids
}

// get returns a kept conversion and keeps it for the next request. Call it
// with mu held.
func (c *Conversions) get(k conversionKey) ([]*schema.Message, bool) {
	if msgs, ok := c.cur[k]; ok {
		return msgs, true
	}
	msgs, ok := c.prev[k]
	if ok {
		c.cur[k] = msgs
	}
	return msgs, ok
}

// put keeps a conversion. Call it with mu held.
func (c *Conversions) put(k conversionKey, msgs []*schema.Message) {
	c.cur[k] = msgs
}
