package chat

import (
	"strconv"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
)

// protocol is the chat protocol as adaptertest.MutationTest sees it.
func protocol() adaptertest.Protocol {
	return adaptertest.Protocol{
		Dirs:   []string{"openai/chat"},
		Done:   "[DONE]",
		Stream: adaptertest.ReadSSE(readStream),
		Whole:  decodeWhole,
		UnknownEvent: func(n int) *adaptertest.Payload {
			// No choices, usage or error: a chunk of nothing this package reads.
			return &adaptertest.Payload{Name: "x_agentcore.mutant", JSON: adaptertest.MustJSON(`{"id":"chatcmpl-mutant-` + strconv.Itoa(n) +
				`","object":"x_agentcore.mutant","x_agentcore_mutant":{"choices":[{"index":0,"delta":{"content":"MUTANT"}}]}}`)}
		},
		RotateIDs: []string{"id"},
		Items:     []func(adaptertest.Recording) []adaptertest.Variant{unknownChoices, unknownToolCalls, unknownContentParts},
	}
}

// TestMutations: see adaptertest.MutationTest.
func TestMutations(t *testing.T) { adaptertest.MutationTest(t, protocol()) }

// eachChoice applies f to the message or delta of choice 0 of every payload.
func eachChoice(rec adaptertest.Recording, f func(i int, msg *adaptertest.Node) *adaptertest.Node) adaptertest.Recording {
	return rec.MapPayloads(func(i int, n *adaptertest.Node) *adaptertest.Node {
		for _, field := range []string{"delta", "message"} {
			n = n.Update([]string{"choices", "0", field}, func(m *adaptertest.Node) *adaptertest.Node {
				if m == nil || m.Kind != 'o' {
					return m
				}
				return f(i, m)
			})
		}
		return n
	})
}

// unknownChoices adds a second choice, full of content, to every chunk.
func unknownChoices(rec adaptertest.Recording) []adaptertest.Variant {
	other := adaptertest.MustJSON(`{"index":1,"delta":{"content":"MUTANT","reasoning_content":"MUTANT","tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"MUTANT","arguments":"{}"}}]},` +
		`"message":{"content":"MUTANT","tool_calls":[{"id":"x","type":"function","function":{"name":"MUTANT","arguments":"{}"}}]},"finish_reason":"length"}`)
	v := rec.MapPayloads(func(_ int, n *adaptertest.Node) *adaptertest.Node {
		return n.Update([]string{"choices"}, func(c *adaptertest.Node) *adaptertest.Node {
			if c == nil || c.Kind != 'a' || len(c.Elems) == 0 {
				return c
			}
			return c.Insert(len(c.Elems), other)
		})
	})
	return []adaptertest.Variant{{Name: "a second choice", Rec: v}}
}

// unknownToolCalls puts a tool call of an unknown type first in the
// tool_calls of every message and delta.
func unknownToolCalls(rec adaptertest.Recording) []adaptertest.Variant {
	v := eachChoice(rec, func(i int, m *adaptertest.Node) *adaptertest.Node {
		call := adaptertest.MustJSON(`{"index":` + strconv.Itoa(90+i) + `,"id":"x_mutant_` + strconv.Itoa(i) +
			`","type":"x_agentcore_mutant","x_agentcore_mutant":{"name":"MUTANT","input":"MUTANT"},"function":{"name":"MUTANT","arguments":"{}"}}`)
		calls := m.Get("tool_calls")
		if calls == nil || calls.Kind != 'a' {
			calls = adaptertest.MustJSON(`[]`)
		}
		return m.With("tool_calls", calls.Insert(0, call), false)
	})
	return []adaptertest.Variant{{Name: "a tool call of an unknown type", Rec: v}}
}

// unknownContentParts sends text content as parts, with a part of an
// unknown type before or after the text.
func unknownContentParts(rec adaptertest.Recording) []adaptertest.Variant {
	var out []adaptertest.Variant
	for _, front := range []bool{true, false} {
		v := eachChoice(rec, func(_ int, m *adaptertest.Node) *adaptertest.Node {
			text, ok := m.Get("content").String()
			if !ok || text == "" {
				return m
			}
			parts := adaptertest.MustJSON(`[{"type":"x_agentcore_part","text":"MUTANT","thinking":"MUTANT"}]`)
			pos := 1
			if front {
				pos = 0
			}
			parts = parts.Insert(pos, adaptertest.MustJSON(`{"type":"text"}`).With("text", adaptertest.Str(text), false))
			return m.With("content", parts, false)
		})
		name := "content as parts, an unknown part after the text"
		if front {
			name = "content as parts, an unknown part before the text"
		}
		out = append(out, adaptertest.Variant{Name: name, Rec: v})
	}
	return out
}
