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

	// Which turn each tool message joins; -1 for an orphan.
	owner := make([]int, len(h))
	attached := make([][]int, len(h))
	for i, m := range h {
		if m.GetRole() != agentv1.Role_ROLE_TOOL {
			continue
		}
		owner[i] = -1
		for _, p := range m.GetParts() {
			if r := p.GetToolResult(); r != nil {
				if at, ok := callAt[r.GetToolCallId()]; ok {
					owner[i] = at
					attached[at] = append(attached[at], i)
					break
				}
			}
		}
	}

	// Each message is in exactly one turn: the turns' indexes share one array.
	all := make([]int, 0, len(h))
	indexes := func(head int, rest []int) []int {
		start := len(all)
		all = append(append(all, head), rest...)
		return all[start:len(all):len(all)]
	}
	turns := make([]Turn, 0, len(h))
	for i, m := range h {
		switch m.GetRole() {
		case agentv1.Role_ROLE_TOOL:
			if owner[i] < 0 {
				turns = append(turns, Turn{Indexes: indexes(i, nil), Orphan: true})
			}
		case agentv1.Role_ROLE_ASSISTANT:
			t := Turn{Indexes: indexes(i, attached[i])}
			t.Missing = missing(h, t.Indexes)
			turns = append(turns, t)
		default:
			turns = append(turns, Turn{Indexes: indexes(i, nil)})
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
