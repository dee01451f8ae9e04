package interceptor

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestFitMessage(t *testing.T) {
	ev := &agentv1.Event{Seq: 3, Kind: &agentv1.Event_ToolCall{ToolCall: &agentv1.ToolCallEvent{
		ToolCallId: "c1", ToolName: "write_file", Arguments: `{"content":"` + strings.Repeat("é", 300000) + `"}`}}}
	got := FitMessage(ev, 100000)
	if n := proto.Size(got); n > 100000 || n < 90000 {
		t.Fatalf("fitted to %d bytes", n)
	}
	args := got.GetToolCall().GetArguments()
	if !strings.HasPrefix(args, `{"content":"éé`) || !strings.HasSuffix(args, `éé"}`) || !strings.Contains(args, "-max-message-bytes") || got.GetSeq() != 3 {
		t.Fatalf("fitted event: %.100q … %.100q", args, args[len(args)-100:])
	}
	if len(ev.GetToolCall().GetArguments()) < 600000 {
		t.Fatal("the original event was changed")
	}
	if small := (&agentv1.Event{Seq: 1}); FitMessage(small, 100) != small {
		t.Fatal("an event that fits was copied")
	}
	// Many values, none large alone: each is cut a little.
	many := &agentv1.GetHistoryResponse{}
	for i := range 50 {
		many.Messages = append(many.Messages, history.User(strings.Repeat(string(rune('a'+i%26)), 4000)))
	}
	if n := proto.Size(FitMessage(many, 100000)); n > 100000 {
		t.Fatalf("many values fitted to %d bytes", n)
	}
}
