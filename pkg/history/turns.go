package history

import (
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Turn is one turn of a history: the unit the context window keeps or drops
// whole.
//
// A turn is one of:
//   - a user message, a system notice or a compaction summary, alone;
//   - an assistant message (one model response) with every tool message
//     answering its calls. A tool message belongs to the turn of the call its
//     first result answers, matched by tool-call id wherever the two sit in
//     the history: a history restored with a result before its call groups
//     the same as one in order;
//   - an orphan: a tool message none of whose results answers a call in the
//     history. It is a turn of its own with Orphan set; the context window
//     never sends it.
//
// Turns are ordered by their first message. An assistant turn whose calls
// are not all answered lists the unanswered ids in Missing (a run stopped
// while its tools ran leaves such a turn); the context window sends it with
// a stand-in error result for each, so a call never goes out without one.
type Turn struct {
	// Indexes into the history: the turn's first message, then the tool
	// messages answering its calls, in history order.
	Indexes []int
	// Orphan marks a tool message that answers no call in the history.
	Orphan bool
	// Missing lists, in call order, the ids of the first message's tool
	// calls that no tool message of the turn answers.
	Missing []string
}

// Head returns the index of the turn's first message.
func (t Turn) Head() int { return t.Indexes[0] }

// Complete reports whether every call of the turn has a result and the turn
// is not an orphan.
func (t Turn) Complete() bool { return !t.Orphan && len(t.Missing) == 0 }

// Messages returns the turn's messages out of h, the history it was made from.
func (t Turn) Messages(h []*agentv1.Message) []*agentv1.Message {
	out := make([]*agentv1.Message, len(t.Indexes))
	for i, idx := range t.Indexes {
		out[i] = h[idx]
	}
	return out
}

// Turns groups a history into turns (see Turn). It never fails: a history
// that Validate would reject still groups, with orphans and missing results
// marked.
func Turns(h []*agentv1.Message) []Turn {
	// Where each call id was made: the first assistant message holding it.
	calls := 0
	for _, m := range h {
		if m.GetRole() == agentv1.Role_ROLE_ASSISTANT {
			for _, p := range m.GetParts() {
				if p.GetToolCall() != nil {
					calls++
				}
			}
		}
	}
	callAt := make(map[string]int, calls)
	for i, m := range h {
		if m.GetRole() != agentv1.Role_ROLE_ASSISTANT {
			continue
		}
		for _, p := range m.GetParts() {
			if c := p.GetToolCall(); c != nil {
				if _, dup := callAt[c.GetId()]; !dup {
					callAt[c.GetId()] = i
				}
			}
		}
	}

	// Which turn each tool message joins: the turn of an assistant message
	// at is a list threaded through next, first[at] to last[at], in history
	// order; -1 ends a list. A tool message answering no call is an orphan.
	// One array holds the three.
	links := make([]int32, 3*len(h))
	first, last, next := links[:len(h)], links[len(h):2*len(h)], links[2*len(h):]
	for i := range first {
		first[i], last[i], next[i] = -1, -1, -1
	}
	orphan := func(i int) bool { return h[i].GetRole() == agentv1.Role_ROLE_TOOL && next[i] == -2 }
	for i, m := range h {
		if m.GetRole() != agentv1.Role_ROLE_TOOL {
			continue
		}
		next[i] = -2 // an orphan unless a result answers a call
		for _, p := range m.GetParts() {
			if r := p.GetToolResult(); r != nil {
				if at, ok := callAt[r.GetToolCallId()]; ok {
					next[i] = -1
					if last[at] < 0 {
						first[at] = int32(i)
					} else {
						next[last[at]] = int32(i)
					}
					last[at] = int32(i)
					break
				}
			}
		}
	}

	// Each message is in exactly one turn: the turns' indexes share one array.
	n := 0
	for i, m := range h {
		if m.GetRole() != agentv1.Role_ROLE_TOOL || orphan(i) {
			n++
		}
	}
	all := make([]int, 0, len(h))
	turns := make([]Turn, 0, n)
	for i, m := range h {
		start := len(all)
		all = append(all, i)
		switch m.GetRole() {
		case agentv1.Role_ROLE_TOOL:
			if !orphan(i) {
				all = all[:start] // in the turn of its call
				continue
			}
			turns = append(turns, Turn{Indexes: all[start:len(all):len(all)], Orphan: true})
		case agentv1.Role_ROLE_ASSISTANT:
			for j := first[i]; j >= 0; j = next[j] {
				all = append(all, int(j))
			}
			t := Turn{Indexes: all[start:len(all):len(all)]}
			t.Missing = missing(h, t.Indexes)
			turns = append(turns, t)
		default:
			turns = append(turns, Turn{Indexes: all[start:len(all):len(all)]})
		}
	}
	return turns
}

// missing returns the call ids of h[idx[0]] that no result in h[idx[1:]]
// answers.
func missing(h []*agentv1.Message, idx []int) []string {
	var out []string
	parts := h[idx[0]].GetParts()
	for n, p := range parts {
		c := p.GetToolCall()
		if c == nil || repeated(parts[:n], c.GetId()) {
			continue // a call id repeated in one message is reported once
		}
		if !answered(h, idx[1:], c.GetId()) {
			out = append(out, c.GetId())
		}
	}
	return out
}

// repeated reports whether parts hold a call with this id.
func repeated(parts []*agentv1.Part, id string) bool {
	for _, p := range parts {
		if p.GetToolCall().GetId() == id && p.GetToolCall() != nil {
			return true
		}
	}
	return false
}

// answered reports whether a message h[i], i in idx, holds a result for the
// call id.
func answered(h []*agentv1.Message, idx []int, id string) bool {
	for _, i := range idx {
		for _, p := range h[i].GetParts() {
			if r := p.GetToolResult(); r != nil && r.GetToolCallId() == id {
				return true
			}
		}
	}
	return false
}
