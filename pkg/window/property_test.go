package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// randomHistory makes a history such as sessions and restores produce: user
// messages, notices, assistant messages with reasoning and 0–3 calls, their
// results in one or more tool messages (some moved before their call, some
// missing), orphan results and summaries. Every message has a unique id.
func randomHistory(rng *rand.Rand) []*agentv1.Message {
	var out []*agentv1.Message
	next := 0
	id := func() string { next++; return fmt.Sprintf("m%d", next) }
	words := func() string { return strings.Repeat("word ", 1+rng.IntN(8)) }
	n := 1 + rng.IntN(40)
	for range n {
		switch k := rng.IntN(20); {
		case k < 6:
			out = append(out, history.User(words()))
		case k < 7:
			out = append(out, history.System(words()))
		case k < 8:
			out = append(out, history.Compact("summary "+words()))
		case k < 9:
			out = append(out, history.ToolText("orphan-"+id(), "read", words()))
		default:
			var parts []*agentv1.Part
			if rng.IntN(3) == 0 {
				parts = append(parts, history.Reasoning(words()))
			}
			if rng.IntN(2) == 0 {
				parts = append(parts, history.Text(words()))
			}
			var calls []string
			for range rng.IntN(4) {
				c := "call-" + id()
				calls = append(calls, c)
				parts = append(parts, history.ToolCall(c, "read", `{"n":1}`))
			}
			out = append(out, history.Assistant(parts...))
			// Results: each call answered or not; answered ones split over
			// one or two tool messages.
			var msgs [2][]*agentv1.Part
			for _, c := range calls {
				if rng.IntN(6) == 0 {
					continue // lost, or the run stopped
				}
				k := rng.IntN(2)
				msgs[k] = append(msgs[k], history.ToolResult(c, "read", history.TextOutput(words()), rng.IntN(5) == 0))
			}
			for _, parts := range msgs {
				if len(parts) > 0 {
					out = append(out, history.Tool(parts...))
				}
			}
		}
	}
	// Restored out of order: move some tool messages earlier.
	for i, m := range out {
		if m.GetRole() == agentv1.Role_ROLE_TOOL && rng.IntN(5) == 0 {
			j := rng.IntN(i + 1)
			copy(out[j+1:i+1], out[j:i])
			out[j] = m
		}
	}
	for _, m := range out {
		m.Id = id()
	}
	return out
}

// TestPropertyTurnsStayWhole checks, over many random histories and budgets,
// that what Build sends never splits a turn and never holds a call without
// its result or a result without its call.
func TestPropertyTurnsStayWhole(t *testing.T) {
	c := newCounter(t)
	forRandomHistories(2000, 42, func(seed uint64, r *rand.Rand, h []*agentv1.Message) {
		o := Options{Reasoning: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			o.Counter = c
			o.MaxTokens = 20 + r.IntN(800)
		}
		ctx, err := Build(h, o)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if msg := checkContext(h, ctx, o); msg != "" {
			t.Fatalf("seed %d: %s\nhistory:\n%s\nsent:\n%s", seed, msg, history.RenderWith(h, history.English()),
				history.RenderWith(ctx.Messages, history.English()))
		}
	})
}

// forRandomHistories calls f with a random history for each of n seeds.
func forRandomHistories(n int, stream uint64, f func(seed uint64, r *rand.Rand, h []*agentv1.Message)) {
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, stream))
		f(seed, r, randomHistory(r))
	}
}

func checkContext(msgs []*agentv1.Message, ctx *Context, opts Options) string {
	// Pairing: the tool messages right after an assistant message answer
	// exactly its calls, once each; no tool message appears elsewhere.
	var open map[string]bool // calls of the last assistant message not yet answered
	closeTurn := func() string {
		for id := range open {
			return fmt.Sprintf("call %s sent without its result", id)
		}
		return ""
	}
	for i, m := range ctx.Messages {
		if m.GetCompact() {
			return fmt.Sprintf("message %d is a summary", i)
		}
		switch m.GetRole() {
		case agentv1.Role_ROLE_TOOL:
			if open == nil {
				return fmt.Sprintf("message %d: a tool message not right after an assistant message", i)
			}
			for _, p := range m.GetParts() {
				id := p.GetToolResult().GetToolCallId()
				if !open[id] {
					return fmt.Sprintf("message %d: result for %s, which the turn did not call or already answered", i, id)
				}
				delete(open, id)
			}
		default:
			if s := closeTurn(); s != "" {
				return s
			}
			open = nil
			if m.GetRole() == agentv1.Role_ROLE_ASSISTANT {
				open = map[string]bool{}
				for _, p := range m.GetParts() {
					if p.GetReasoning() != nil && !opts.Reasoning {
						return fmt.Sprintf("message %d: reasoning sent", i)
					}
					if c := p.GetToolCall(); c != nil {
						open[c.GetId()] = true
					}
				}
			}
			if len(m.GetParts()) == 0 {
				return fmt.Sprintf("message %d is empty", i)
			}
		}
	}
	if s := closeTurn(); s != "" {
		return s
	}

	// Whole turns: every turn is sent whole or not at all, in history order.
	sent := map[string]int{}
	for i, m := range ctx.Messages {
		if m.GetId() != "" {
			sent[m.GetId()] = i
		}
	}
	last := -1
	for _, turn := range history.Turns(msgs) {
		in := 0
		for _, i := range turn.Indexes {
			if _, ok := sent[msgs[i].GetId()]; ok {
				in++
			}
		}
		if in == 0 {
			continue
		}
		if turn.Orphan {
			return fmt.Sprintf("orphan %s sent", msgs[turn.Head()].GetId())
		}
		if in != len(turn.Indexes) {
			return fmt.Sprintf("turn at %d split: %d of %d messages sent", turn.Head(), in, len(turn.Indexes))
		}
		at := sent[msgs[turn.Head()].GetId()]
		if at < last {
			return fmt.Sprintf("turn at %d sent out of order", turn.Head())
		}
		last = at
	}

	// Every turn after the latest summary is sent, unless it has nothing to
	// send (an orphan, another summary, an assistant message holding only
	// reasoning that is not sent).
	if ctx.Summary >= 0 {
		for _, turn := range history.Turns(msgs) {
			head := msgs[turn.Head()]
			if turn.Head() <= ctx.Summary || !sendable(turn, head, opts) {
				continue
			}
			if _, ok := sent[head.GetId()]; !ok {
				return fmt.Sprintf("turn at %d, after the summary, not sent", turn.Head())
			}
		}
	}
	return ""
}

func sendable(t history.Turn, head *agentv1.Message, o Options) bool {
	if t.Orphan || history.IsSummary(head) {
		return false
	}
	for _, p := range head.GetParts() {
		if p.GetReasoning() == nil || o.Reasoning {
			return true
		}
	}
	return false
}

// TestPropertyCache checks that a Build carried by a Cache over a history
// that grows (and now and then changes or switches options) gives what a
// Build without one gives.
func TestPropertyCache(t *testing.T) {
	c := newCounter(t)
	forRandomHistories(500, 7, func(seed uint64, r *rand.Rand, h []*agentv1.Message) {
		var cache Cache
		o := Options{Counter: c, MaxTokens: 20 + r.IntN(800)}
		for end := 0; end < len(h); {
			end += 1 + r.IntN(3)
			end = min(end, len(h))
			if r.IntN(10) == 0 {
				o.Reasoning = !o.Reasoning
			}
			prefix := h[:end]
			if r.IntN(20) == 0 {
				prefix = randomHistory(r) // a history replaced
			}
			want, err := Build(prefix, o)
			if err != nil {
				t.Fatal(err)
			}
			oc := o
			oc.Cache = &cache
			got, err := Build(prefix, oc)
			if err != nil {
				t.Fatal(err)
			}
			if msg := sameContext(got, want); msg != "" {
				t.Fatalf("seed %d, %d messages: %s\nhistory:\n%s", seed, len(prefix), msg, history.RenderWith(prefix, history.English()))
			}
		}
	})
}

func sameContext(got, want *Context) string {
	switch {
	case got.System != want.System:
		return "system differs"
	case got.Tokens != want.Tokens, got.HistoryTokens != want.HistoryTokens:
		return fmt.Sprintf("tokens %+v %d, want %+v %d", got.Tokens, got.HistoryTokens, want.Tokens, want.HistoryTokens)
	case got.Compact != want.Compact, got.Summary != want.Summary, got.Dropped != want.Dropped:
		return fmt.Sprintf("compact/summary/dropped %v %d %d, want %v %d %d", got.Compact, got.Summary, got.Dropped, want.Compact, want.Summary, want.Dropped)
	case !slices.Equal(got.Repaired, want.Repaired):
		return fmt.Sprintf("repaired %v, want %v", got.Repaired, want.Repaired)
	case len(got.Messages) != len(want.Messages):
		return fmt.Sprintf("%d messages, want %d", len(got.Messages), len(want.Messages))
	}
	for i := range got.Messages {
		if !proto.Equal(got.Messages[i], want.Messages[i]) {
			return fmt.Sprintf("message %d differs", i)
		}
	}
	return ""
}
