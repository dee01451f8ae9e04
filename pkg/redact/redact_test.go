package redact

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestRedactMessage(t *testing.T) {
	sec := New("sk-held-0123456789")
	sec.Add("client-key-0123") // a client's key is for errors and logs only
	out, _ := structpb.NewStruct(map[string]any{"env": "KEY=sk-held-0123456789", "sk-held-0123456789": 1})
	ev := &agentv1.Event{RunId: "run_1", Kind: &agentv1.Event_ToolResult{ToolResult: &agentv1.ToolResultEvent{
		ToolName: "shell", Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Text{Text: "KEY=sk-held-0123456789 and client-key-0123"}},
	}}}
	chunk := &agentv1.ExecuteToolResponse{Kind: &agentv1.ExecuteToolResponse_Output{Output: &agentv1.ToolOutputChunk{Data: "x sk-held-0123456789 y"}}}
	for _, m := range []proto.Message{ev, chunk, out} {
		orig := proto.Clone(m)
		got := sec.RedactMessage(m).(proto.Message)
		if !proto.Equal(m, orig) {
			t.Errorf("the original was changed: %v", m)
		}
		text := fmt.Sprint(got)
		if strings.Contains(text, "sk-held") {
			t.Errorf("a held secret left: %s", text)
		}
		if !strings.Contains(text, "[redacted]") {
			t.Errorf("nothing redacted: %s", text)
		}
	}
	if got := sec.RedactMessage(ev).(*agentv1.Event); !strings.Contains(got.GetToolResult().GetOutput().GetText(), "client-key-0123") {
		t.Errorf("a client's key is not the server's to hide from its own events: %v", got)
	}
	clean := &agentv1.Event{RunId: "run_2"}
	if sec.RedactMessage(clean) != any(clean) {
		t.Error("a clean message was copied")
	}
}

func BenchmarkRedactDelta(b *testing.B) {
	sec := New("sk-held-0123456789", "bearer-token-abcdef")
	ev := &agentv1.Event{Seq: 7, RunId: "run_1", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{
		Delta: &agentv1.ModelDeltaEvent_Text{Text: "a few words of a streamed answer"}}}}
	b.ReportAllocs()
	for b.Loop() {
		_ = sec.RedactMessage(ev)
	}
}

func TestSecretsRedaction(t *testing.T) {
	s := New("sk-server-key", "abc") // too short to be treated as a secret: kept
	s.Add("sk-client-key")
	// A model error's status: the provider's code in the ErrorInfo's metadata.
	st, _ := status.New(codes.FailedPrecondition, "model error: key sk-client-key").WithDetails(
		&errdetails.ErrorInfo{Domain: "agentcore", Reason: "AUTH", Metadata: map[string]string{"code": "sk-client-key", "status": "401"}})
	err := s.RedactStatus(st.Err())
	var info *errdetails.ErrorInfo
	for _, d := range status.Convert(err).Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if strings.Contains(status.Convert(err).Message(), "sk-client-key") || strings.Contains(info.GetMetadata()["code"], "sk-client-key") {
		t.Errorf("a key survived: %v %v", err, info)
	}
	s.Remove("sk-client-key")
	if got := s.Redact("sk-client-key sk-server-key abc"); got != "sk-client-key [redacted] abc" {
		t.Errorf("redact after remove: %q", got)
	}
	var b strings.Builder
	w := s.Writer(&b)
	if _, err := w.Write([]byte("log line with sk-server-key\n")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "log line with [redacted]\n" {
		t.Errorf("writer wrote %q", b.String())
	}
	// The writer follows the secrets as they come and go.
	for _, tc := range []struct {
		add, remove string
		line, want  string
	}{
		{line: "no secret here\n", want: "no secret here\n"},
		{add: "sk-second-key", line: "sk-second-key twice sk-second-key\n", want: "[redacted] twice [redacted]\n"},
		{remove: "sk-second-key", line: "sk-second-key\n", want: "sk-second-key\n"},
	} {
		if tc.add != "" {
			s.Add(tc.add)
		}
		if tc.remove != "" {
			s.Remove(tc.remove)
		}
		b.Reset()
		if n, err := w.Write([]byte(tc.line)); err != nil || n != len(tc.line) || b.String() != tc.want {
			t.Errorf("after add %q remove %q: writer wrote %q (%d, %v), want %q", tc.add, tc.remove, b.String(), n, err, tc.want)
		}
	}
}
