package responses

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

type node = adaptertest.Node

// recordedCustom are the custom tools the recorded requests offered (the
// custom tool recording's response echoes its request's tools: write_sql).
var recordedCustom = map[string]bool{"write_sql": true}

// protocol is the Responses API as adaptertest.MutationTest sees it.
func protocol() adaptertest.Protocol {
	return adaptertest.Protocol{
		Dirs:  []string{"openai/responses"},
		Named: true,
		Split: adaptertest.SplitAt("response.created"),
		Stream: adaptertest.ReadSSE(func(ctx context.Context, r *sse.Reader, emit func(*schema.Message) bool) error {
			return readStream(ctx, r, recordedCustom, emit)
		}),
		Whole: wholeReader(recordedCustom),
		UnknownEvent: func(n int) *adaptertest.Payload {
			return adaptertest.NewEvent(true, adaptertest.MustJSON(`{"type":"response.x_agentcore_mutant.delta","sequence_number":`+strconv.Itoa(n)+
				`,"output_index":0,"content_index":0,"summary_index":0,"item_id":"x","delta":{"text":"MUTANT"},"text":"MUTANT","arguments":"{}",`+
				`"item":{"type":"message","content":[{"type":"output_text","text":"MUTANT"}]},"response":{"status":"failed","error":{"code":"server_error","message":"MUTANT"}}}`))
		},
		RotateIDs: []string{"item_id", "response.id"},
		Items:     []func(adaptertest.Recording) []adaptertest.Variant{unknownOutputItems, unknownParts},
	}
}

// TestMutations: see adaptertest.MutationTest.
func TestMutations(t *testing.T) { adaptertest.MutationTest(t, protocol()) }

// terminal reports whether a payload ends the stream.
func terminal(p *adaptertest.Payload) bool {
	switch p.Type() {
	case "response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}

// outputs applies f to the output array of a whole body, or of the
// response of a stream's terminal event.
func outputs(rec adaptertest.Recording, f func(out *node) *node) adaptertest.Recording {
	path := []string{"output"}
	if rec.Stream {
		path = []string{"response", "output"}
	}
	return rec.MapPayloads(func(i int, n *node) *node {
		if rec.Stream && !terminal(rec.Payloads[i]) {
			return n
		}
		return n.Update(path, func(o *node) *node {
			if o == nil || o.Kind != 'a' {
				return o
			}
			return f(o)
		})
	})
}

// hostedItem is an output item of a type this package does not read, its
// members of the types a reader decoding it as a known item would choke on.
func hostedItem(k int, status string) *node {
	types := []string{"tool_search_call", "x_agentcore_mutant_call", "shell_call", "code_interpreter_call", "web_search_call"}
	return adaptertest.MustJSON(`{"type":"` + types[k%len(types)] + `","id":"xm_` + strconv.Itoa(k) + `","status":"` + status +
		`","call_id":"xm_call","name":"MUTANT","arguments":{"query":"MUTANT"},"input":{"x":1},"action":{"commands":["ls"]},` +
		`"content":[{"type":"output_text","text":"MUTANT"}],"summary":[{"type":"summary_text","text":"MUTANT"}],"output":[{"type":"text","text":"MUTANT"}]}`)
}

// unknownOutputItems inserts a hosted item at each output position k in
// turn, numbering the items after it one further, as a server would.
func unknownOutputItems(rec adaptertest.Recording) []adaptertest.Variant {
	n := 0
	for _, p := range rec.Payloads {
		if p.JSON == nil {
			continue
		}
		if i, ok := p.JSON.Get("output_index").Int(); ok && i+1 > n {
			n = i + 1
		}
		if o := p.JSON.At("output"); o != nil && len(o.Elems) > n {
			n = len(o.Elems)
		}
	}
	var out []adaptertest.Variant
	for k := 0; k <= n; k++ {
		v := rec.MapPayloads(func(_ int, n *node) *node {
			return n.Map(nil, func(o *node, _ int) *node {
				if i, ok := o.Get("output_index").Int(); ok && i >= k {
					return o.With("output_index", adaptertest.Num(i+1), false)
				}
				return o
			})
		})
		v = outputs(v, func(o *node) *node {
			if len(o.Elems) < k {
				return o
			}
			return o.Insert(k, hostedItem(k, "completed"))
		})
		if rec.Stream {
			at := len(v.Payloads)
			for i, p := range v.Payloads {
				idx, ok := p.JSON.Get("output_index").Int()
				if ok && idx > k || terminal(p) {
					at = i
					break
				}
			}
			events := []string{
				`{"type":"response.output_item.added","output_index":` + strconv.Itoa(k) + `}`,
				`{"type":"response.x_agentcore_mutant_call.delta","item_id":"xm_` + strconv.Itoa(k) + `","output_index":` + strconv.Itoa(k) + `,"delta":{"query":"MUTANT"}}`,
				`{"type":"response.output_item.done","output_index":` + strconv.Itoa(k) + `}`,
			}
			for j := len(events) - 1; j >= 0; j-- {
				e := adaptertest.MustJSON(events[j])
				switch j {
				case 0:
					e = e.With("item", hostedItem(k, "in_progress"), false)
				case 2:
					e = e.With("item", hostedItem(k, "completed"), false)
				}
				v = v.InsertPayload(at, adaptertest.NewEvent(true, e))
			}
		}
		out = append(out, adaptertest.Variant{Name: "a hosted item at output position " + strconv.Itoa(k), Rec: v})
	}
	return out
}

// unknownParts puts a content part of an unknown type first in every
// message item and a summary part of an unknown type first in every
// reasoning item, numbering the parts after it one further.
func unknownParts(rec adaptertest.Recording) []adaptertest.Variant {
	part := adaptertest.MustJSON(`{"type":"x_agentcore_part","text":"MUTANT","refusal":"MUTANT","annotations":[]}`)
	arrays := map[string]string{"message": "content", "reasoning": "summary"}
	indexes := map[string]string{"message": "content_index", "reasoning": "summary_index"}
	kinds := map[int]string{} // output position -> item type
	addPart := func(it *node) *node {
		typ, _ := it.Get("type").String()
		field := arrays[typ]
		if a := it.Get(field); field != "" && a != nil && a.Kind == 'a' {
			return it.With(field, a.Insert(0, part), false)
		}
		return it
	}
	isItemEvent := func(p *adaptertest.Payload) bool {
		return p.Type() == "response.output_item.added" || p.Type() == "response.output_item.done"
	}
	for _, p := range rec.Payloads {
		if it := p.JSON.Get("item"); it != nil && isItemEvent(p) {
			typ, _ := it.Get("type").String()
			if i, ok := p.JSON.Get("output_index").Int(); ok {
				kinds[i] = typ
			}
		}
	}
	v := rec.MapPayloads(func(i int, n *node) *node {
		if !isItemEvent(rec.Payloads[i]) && !strings.HasPrefix(rec.Payloads[i].Type(), "response.") {
			return n
		}
		if it := n.Get("item"); it != nil && isItemEvent(rec.Payloads[i]) {
			n = n.With("item", addPart(it), false)
		}
		if i, ok := n.Get("output_index").Int(); ok {
			if field := indexes[kinds[i]]; field != "" {
				if j, ok := n.Get(field).Int(); ok {
					n = n.With(field, adaptertest.Num(j+1), false)
				}
			}
		}
		return n
	})
	v = outputs(v, func(o *node) *node {
		c := &node{Kind: 'a'}
		for _, it := range o.Elems {
			c.Elems = append(c.Elems, addPart(it))
		}
		return c
	})
	return []adaptertest.Variant{{Name: "an unknown part first in every message and reasoning item", Rec: v}}
}
