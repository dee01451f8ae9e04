package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
)

type node = adaptertest.Node

// protocol is the Messages API as adaptertest.MutationTest sees it.
//
// RotateIDs is empty on purpose: the protocol has no id a gateway could
// rewrite per event. A message's id comes once, in message_start, a
// block's (a tool_use id) once, in its content_block_start; every delta
// and stop names its block by "index", its position, which is what the
// reader keys on. An id that appears once has nothing to disagree with, so
// rotating it would change the parse (the call id) rather than test the
// reader's keying. A recording of a tool loop holds one message per turn
// and is cut at each message_start.
func protocol() adaptertest.Protocol {
	return adaptertest.Protocol{
		Dirs:   []string{"anthropic", "anthropic/sdk-go-sse"},
		Named:  true,
		Split:  adaptertest.SplitAt("message_start"),
		Stream: adaptertest.ReadSSE(readStream),
		Whole:  decodeResponse,
		Opaque: []string{"input"}, // tool_use input is the call's arguments
		UnknownEvent: func(n int) *adaptertest.Payload {
			return adaptertest.NewEvent(true, adaptertest.MustJSON(`{"type":"x_agentcore_mutant","seq":`+strconv.Itoa(n)+
				`,"index":0,"delta":{"type":"text_delta","text":"MUTANT","stop_reason":"max_tokens"},"content_block":{"type":"text","text":"MUTANT"},`+
				`"message":{"id":"msg_mutant","content":[{"type":"text","text":"MUTANT"}],"stop_reason":"max_tokens"},"usage":{"output_tokens":999999}}`))
		},
		Items: []func(adaptertest.Recording) []adaptertest.Variant{unknownBlocks, unknownDeltas, blocksInMessageStart},
	}
}

// TestMutations: see adaptertest.MutationTest.
func TestMutations(t *testing.T) { adaptertest.MutationTest(t, protocol()) }

func isBlockEvent(p *adaptertest.Payload) bool {
	switch p.Type() {
	case "content_block_start", "content_block_delta", "content_block_stop":
		return true
	}
	return false
}

// unknownBlock is a content block of a type this package does not read,
// full of members a reader decoding it as a known block would use.
func unknownBlock(k int) *node {
	types := []string{"x_agentcore_block", "server_tool_use", "web_search_tool_result", "mcp_tool_use", "container_upload"}
	return adaptertest.MustJSON(`{"type":"` + types[k%len(types)] + `","id":"xb_` + strconv.Itoa(k) + `","name":"MUTANT","input":{"x":1},` +
		`"text":"MUTANT","thinking":"MUTANT","signature":"MUTANT","data":"MUTANT","content":[{"type":"text","text":"MUTANT"}]}`)
}

// unknownBlocks inserts an unknown block at each index k in turn,
// numbering the blocks after it one further, as a server would.
func unknownBlocks(rec adaptertest.Recording) []adaptertest.Variant {
	n := 0
	for _, p := range rec.Payloads {
		if i, ok := p.JSON.Get("index").Int(); ok && isBlockEvent(p) && i+1 > n {
			n = i + 1
		}
		if c := p.JSON.Get("content"); !rec.Stream && c != nil {
			n = len(c.Elems)
		}
	}
	var out []adaptertest.Variant
	for k := 0; k <= n; k++ {
		v := rec
		if !rec.Stream {
			v = rec.MapPayloads(func(_ int, n *node) *node {
				return n.Update([]string{"content"}, func(c *node) *node {
					if c == nil || c.Kind != 'a' {
						return c
					}
					return c.Insert(k, unknownBlock(k))
				})
			})
		} else {
			v = rec.MapPayloads(func(i int, n *node) *node {
				if idx, ok := n.Get("index").Int(); ok && isBlockEvent(rec.Payloads[i]) && idx >= k {
					return n.With("index", adaptertest.Num(idx+1), false)
				}
				return n
			})
			at := len(v.Payloads)
			for i, p := range v.Payloads {
				idx, ok := p.JSON.Get("index").Int()
				if ok && isBlockEvent(p) && idx > k || p.Type() == "message_delta" || p.Type() == "message_stop" {
					at = i
					break
				}
			}
			ks := strconv.Itoa(k)
			start := adaptertest.MustJSON(`{"type":"content_block_start","index":`+ks+`}`).With("content_block", unknownBlock(k), false)
			events := []*node{
				start,
				adaptertest.MustJSON(`{"type":"content_block_delta","index":` + ks + `,"delta":{"type":"x_agentcore_delta","text":"MUTANT","partial_json":"{","thinking":"MUTANT"}}`),
				adaptertest.MustJSON(`{"type":"content_block_stop","index":` + ks + `}`),
			}
			for j := len(events) - 1; j >= 0; j-- {
				v = v.InsertPayload(at, adaptertest.NewEvent(true, events[j]))
			}
		}
		out = append(out, adaptertest.Variant{Name: "an unknown block at index " + strconv.Itoa(k), Rec: v})
	}
	return out
}

// unknownDeltas puts deltas of unknown types into every block.
func unknownDeltas(rec adaptertest.Recording) []adaptertest.Variant {
	if !rec.Stream {
		return nil
	}
	v := adaptertest.Recording{Stream: true}
	for _, p := range rec.Payloads {
		v.Payloads = append(v.Payloads, p)
		if idx, ok := p.JSON.Get("index").Int(); ok && p.Type() == "content_block_start" {
			for _, typ := range []string{"x_agentcore_delta", "citations_delta"} {
				d := adaptertest.MustJSON(`{"type":"content_block_delta","index":` + strconv.Itoa(idx) +
					`,"delta":{"type":"` + typ + `","text":"MUTANT","partial_json":"MUTANT","thinking":"MUTANT","signature":"MUTANT","citation":{"cited_text":"MUTANT"}}}`)
				v.Payloads = append(v.Payloads, adaptertest.NewEvent(true, d))
			}
		}
	}
	return []adaptertest.Variant{{Name: "unknown deltas in every block", Rec: v}}
}

// blocksInMessageStart moves the first n content blocks, whole, into
// message_start's message (as continuation messages of programmatic tool
// calling carry them), for n = 1 and for all blocks; the stop reason goes
// there too in the second case. The blocks keep their indexes.
func blocksInMessageStart(rec adaptertest.Recording) []adaptertest.Variant {
	if !rec.Stream {
		return nil
	}
	type block struct {
		start    *node
		text     map[string]*bytes.Buffer // accumulated delta fields
		events   map[int]bool             // payloads that are this block's
		complete bool
	}
	var order []int
	blocks := map[int]*block{}
	stopReason := (*node)(nil)
	for i, p := range rec.Payloads {
		idx, _ := p.JSON.Get("index").Int()
		switch p.Type() {
		case "content_block_start":
			b := &block{start: p.JSON.Get("content_block"), text: map[string]*bytes.Buffer{}, events: map[int]bool{i: true}}
			blocks[idx] = b
			order = append(order, idx)
		case "content_block_delta":
			b := blocks[idx]
			if b == nil {
				return nil
			}
			b.events[i] = true
			d := p.JSON.Get("delta")
			for _, f := range []string{"text", "thinking", "signature", "partial_json"} {
				if s, ok := d.Get(f).String(); ok {
					if b.text[f] == nil {
						b.text[f] = &bytes.Buffer{}
					}
					b.text[f].WriteString(s)
				}
			}
		case "content_block_stop":
			if b := blocks[idx]; b != nil {
				b.events[i], b.complete = true, true
			}
		case "message_delta":
			if r := p.JSON.At("delta", "stop_reason"); r != nil {
				stopReason = r
			}
		}
	}
	whole := func(b *block) *node {
		n := b.start
		for f, buf := range b.text {
			switch f {
			case "partial_json":
				if buf.Len() > 0 {
					var v json.RawMessage
					if json.Unmarshal(buf.Bytes(), &v) != nil {
						return nil
					}
					n = n.With("input", adaptertest.MustJSON(string(v)), false)
				}
			default:
				prev, _ := n.Get(f).String()
				n = n.With(f, adaptertest.Str(prev+buf.String()), false)
			}
		}
		return n
	}
	var out []adaptertest.Variant
	for _, count := range []int{1, len(order)} {
		if count == 0 || count > len(order) || count == len(order) && count == 1 && len(out) > 0 {
			continue
		}
		moved := map[int]bool{}
		content := adaptertest.MustJSON(`[]`)
		ok := true
		for _, idx := range order[:count] {
			b := blocks[idx]
			w := whole(b)
			if w == nil || !b.complete || idx != len(content.Elems) {
				ok = false
				break
			}
			content = content.Insert(len(content.Elems), w)
			for e := range b.events {
				moved[e] = true
			}
		}
		if !ok {
			continue
		}
		v := adaptertest.Recording{Stream: true}
		for i, p := range rec.Payloads {
			switch {
			case moved[i]:
				continue
			case p.Type() == "message_start":
				m := p.JSON.Get("message").With("content", content, false)
				if count == len(order) && stopReason != nil {
					m = m.With("stop_reason", stopReason, false)
				}
				p = adaptertest.NewEvent(true, p.JSON.With("message", m, false))
			}
			v.Payloads = append(v.Payloads, p)
		}
		out = append(out, adaptertest.Variant{Name: "the first " + strconv.Itoa(count) + " blocks whole in message_start", Rec: v})
	}
	return out
}
