package gemini

import (
	"strconv"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
)

type node = adaptertest.Node

// protocol is the Gemini API as adaptertest.MutationTest sees it.
func protocol() adaptertest.Protocol {
	return adaptertest.Protocol{
		Dirs:   []string{"google"},
		Stream: adaptertest.ReadSSE(readStream),
		Whole:  decodeWhole,
		Opaque: []string{"args"}, // functionCall args are the call's arguments
		UnknownEvent: func(n int) *adaptertest.Payload {
			// No candidates, feedback or usage: a chunk of nothing this package reads.
			return &adaptertest.Payload{JSON: adaptertest.MustJSON(`{"x_agentcore_mutant":{"candidates":[{"content":{"parts":[{"text":"MUTANT"}]},"finishReason":"SAFETY"}]},"seq":` + strconv.Itoa(n) + `}`)}
		},
		RotateIDs: []string{"responseId"},
		Items:     []func(adaptertest.Recording) []adaptertest.Variant{unknownParts, unknownCandidates},
	}
}

// TestMutations: see adaptertest.MutationTest.
func TestMutations(t *testing.T) { adaptertest.MutationTest(t, protocol()) }

// eachCandidate applies f to every candidate of every payload.
func eachCandidate(rec adaptertest.Recording, f func(c *node) *node) adaptertest.Recording {
	return rec.MapPayloads(func(_ int, n *node) *node {
		return n.Update([]string{"candidates"}, func(cs *node) *node {
			if cs == nil || cs.Kind != 'a' {
				return cs
			}
			out := &node{Kind: 'a'}
			for _, c := range cs.Elems {
				out.Elems = append(out.Elems, f(c))
			}
			return out
		})
	})
}

// unknownParts puts parts of kinds this package does not read before, or
// after, the parts of every candidate.
func unknownParts(rec adaptertest.Recording) []adaptertest.Variant {
	var out []adaptertest.Variant
	for _, front := range []bool{true, false} {
		v := eachCandidate(rec, func(c *node) *node {
			return c.Update([]string{"content", "parts"}, func(ps *node) *node {
				if ps == nil || ps.Kind != 'a' {
					return ps
				}
				at := len(ps.Elems)
				if front {
					at = 0
				}
				ps = ps.Insert(at, adaptertest.MustJSON(`{"executableCode":{"language":"PYTHON","code":"print('MUTANT')"}}`))
				return ps.Insert(at, adaptertest.MustJSON(`{"x_agentcore_part":{"text":"MUTANT","args":{"x":1}}}`))
			})
		})
		name := "unknown parts after the parts"
		if front {
			name = "unknown parts before the parts"
		}
		out = append(out, adaptertest.Variant{Name: name, Rec: v})
	}
	return out
}

// unknownCandidates adds a second candidate, full of content, to every
// response.
func unknownCandidates(rec adaptertest.Recording) []adaptertest.Variant {
	other := adaptertest.MustJSON(`{"index":1,"content":{"role":"model","parts":[{"text":"MUTANT"},{"functionCall":{"name":"MUTANT","args":{}}}]},"finishReason":"MAX_TOKENS"}`)
	v := rec.MapPayloads(func(_ int, n *node) *node {
		return n.Update([]string{"candidates"}, func(cs *node) *node {
			if cs == nil || cs.Kind != 'a' || len(cs.Elems) == 0 {
				return cs
			}
			return cs.Insert(len(cs.Elems), other)
		})
	})
	return []adaptertest.Variant{{Name: "a second candidate", Rec: v}}
}
