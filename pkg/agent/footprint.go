package agent

import (
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// What a session's memory is made of beside the bytes its history's
// encoding counts, in bytes of live heap: the Go structs of the messages
// and their parts (each proto message's runtime state, a slice of parts,
// the oneof's wrapper, string headers, the allocator's rounding). The
// figures are the structs' sizes on 64-bit platforms, rounded up to the
// allocator's size classes; TestFootprintMatchesHeap holds them to the
// heap.
const (
	// sessionBytes is an idle session with an empty history: the Session,
	// its config and usage, its slot.
	sessionBytes = 1 << 10
	// messageBytes is a Message struct and its slot in the history.
	messageBytes = 136
	// partBytes is a Part struct, its oneof wrapper and its slot in the
	// message's parts; a part holding a message (a tool call, a tool
	// result, a file, reasoning) adds subBytes for each one it holds.
	partBytes = 88
	subBytes  = 96
	// counterBytes is the token counter's entry for a message, once the
	// session has counted its history (a send, a preview).
	counterBytes = 48
)

// messageFootprint estimates the live heap one history message holds: its
// encoding's size (its strings and bytes, near enough) plus its structs.
func messageFootprint(m *agentv1.Message) int64 {
	n := int64(proto.Size(m)) + messageBytes
	if m.GetCreateTime() != nil {
		n += subBytes
	}
	if m.GetUsage() != nil {
		n += subBytes
	}
	for _, p := range m.GetParts() {
		n += partBytes
		switch k := p.GetKind().(type) {
		case *agentv1.Part_Text:
		case *agentv1.Part_ToolResult:
			n += 2 * subBytes // the result and its output
			for range k.ToolResult.GetOutput().GetContent().GetParts() {
				n += partBytes + subBytes
			}
		default:
			n += subBytes
		}
	}
	return n
}

func historyFootprint(h []*agentv1.Message) int64 {
	var n int64
	for _, m := range h {
		n += messageFootprint(m)
	}
	return n
}

// Footprint estimates the memory the session holds, in bytes of live heap:
// a constant for the session, and for each message of its history its
// encoded size plus constants for its structs and its token count. It is
// kept as the history changes, so asking costs nothing; what a running
// send holds besides (the model's answer as it streams, tool output) is
// not in it.
func (s *Session) Footprint() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := sessionBytes + s.historyBytes
	if s.counter != nil {
		n += counterBytes * int64(len(s.history))
	}
	return n
}

// CloseIdle closes the session, as Close does, when no run is active or
// waiting, and says whether it did: a server dropping an idle session it can
// load again (its journal holds it) closes it so that a caller still holding
// it fails rather than runs on a copy nobody keeps.
func (s *Session) CloseIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slot.busy() || s.slot.closed {
		return false
	}
	s.slot.closed = true
	return true
}
