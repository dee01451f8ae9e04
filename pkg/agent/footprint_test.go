package agent_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/agent"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// footprintShapes are histories of the kinds a session holds: plain
// conversations of short, middling and long messages, and a tool-using
// agent's (answers with ids, times, usage and two tool calls, each call's
// result).
var footprintShapes = []struct {
	name string
	msg  func(i int) *agentv1.Message
	// counted: the session has counted its history's tokens (a preview,
	// as a send does).
	counted bool
}{
	{"text-20", func(i int) *agentv1.Message { return textMessage(i, 20) }, false},
	{"text-200", func(i int) *agentv1.Message { return textMessage(i, 200) }, false},
	{"text-200-counted", func(i int) *agentv1.Message { return textMessage(i, 200) }, true},
	{"text-2000", func(i int) *agentv1.Message { return textMessage(i, 2000) }, false},
	{"tools", toolMessage, false},
	{"tools-counted", toolMessage, true},
}

func textMessage(i, size int) *agentv1.Message {
	role := agentv1.Role_ROLE_USER
	if i%2 == 1 {
		role = agentv1.Role_ROLE_ASSISTANT
	}
	text := fmt.Sprintf("message %d: ", i) + strings.Repeat("x", size)
	return &agentv1.Message{Role: role, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: text[:size]}}}}
}

func toolMessage(i int) *agentv1.Message {
	if i%2 == 1 {
		var parts []*agentv1.Part
		for c := range 2 {
			parts = append(parts, &agentv1.Part{Kind: &agentv1.Part_ToolResult{ToolResult: &agentv1.ToolResultPart{
				ToolCallId: fmt.Sprintf("call_%d_%d", i-1, c), ToolName: "shell",
				Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Text{Text: strings.Repeat("out ", 50)}},
			}}})
		}
		return &agentv1.Message{Role: agentv1.Role_ROLE_TOOL, Parts: parts}
	}
	parts := []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "Let me look at the files first."}}}
	for c := range 2 {
		parts = append(parts, &agentv1.Part{Kind: &agentv1.Part_ToolCall{ToolCall: &agentv1.ToolCallPart{
			Id: fmt.Sprintf("call_%d_%d", i, c), Name: "shell", Arguments: `{"command":"ls -la /tmp/work"}`,
		}}})
	}
	return &agentv1.Message{Id: fmt.Sprintf("msg_%d", i), Role: agentv1.Role_ROLE_ASSISTANT, Parts: parts,
		CreateTime: timestamppb.Now(), FinishReason: "tool_calls",
		Usage: &agentv1.Usage{InputTokens: 1200, OutputTokens: 40, TotalTokens: 1240}}
}

// wire returns what a history is after a trip through gRPC (decoded from
// its encoding), as a session gets it from a client or the store.
func wire(t testing.TB, h []*agentv1.Message) []*agentv1.Message {
	out := make([]*agentv1.Message, len(h))
	for i, m := range h {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = &agentv1.Message{}
		if err := proto.Unmarshal(b, out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// liveHeap is the heap's live bytes: two collections, the second freeing
// what the first left in sync.Pools' victim caches.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestFootprintMatchesHeap calibrates Footprint and holds it to the heap:
// for every shape of history, the live heap that sessions holding it add
// (histories decoded as from the wire) is within 10 % of the sum of their
// footprints. Its log shows the measured bytes per message.
func TestFootprintMatchesHeap(t *testing.T) {
	const sessions, messages = 50, 200
	// The token encoder, shared, is loaded once: not the sessions' memory.
	warm, err := agent.New(agent.Options{LLM: client, Encoders: encoders, History: []*agentv1.Message{textMessage(0, 20)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Preview(nil); err != nil {
		t.Fatal(err)
	}
	for _, shape := range footprintShapes {
		t.Run(shape.name, func(t *testing.T) {
			before := liveHeap()
			hs := make([][]*agentv1.Message, sessions)
			for i := range hs {
				h := make([]*agentv1.Message, messages)
				for j := range h {
					h[j] = shape.msg(j)
				}
				hs[i] = wire(t, h)
			}
			held := make([]*agent.Session, sessions)
			for i := range held {
				s, err := agent.New(agent.Options{LLM: client, Encoders: encoders, History: hs[i]})
				if err != nil {
					t.Fatal(err)
				}
				held[i] = s
				if shape.counted {
					if _, err := s.Preview(nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			hs = nil
			after := liveHeap()
			var estimate int64
			for _, s := range held {
				estimate += s.Footprint()
			}
			measured := after - before
			t.Logf("%s: measured %d B/session, estimated %d (%.2f); %.0f B/message measured, encoded %d",
				shape.name, measured/sessions, estimate/sessions, float64(estimate)/float64(measured),
				float64(measured)/sessions/messages, proto.Size(shape.msg(1)))
			if r := float64(estimate) / float64(measured); r < 0.9 || r > 1.1 {
				t.Errorf("estimate %d, measured %d: off by more than 10 %%", estimate, measured)
			}
			runtime.KeepAlive(held)
		})
	}
}
