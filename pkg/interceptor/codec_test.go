package interceptor

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/redact"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestCodecKeepsHeldSecretsOut: what the server sends is encoded by its
// codec, which sends a redacted copy of a message holding a server-held
// secret, in any field at any depth, and every other message as gRPC's
// proto codec encodes it.
func TestCodecKeepsHeldSecretsOut(t *testing.T) {
	sec := redact.New("sk-held-0123456789")
	c := NewCodec(sec, nil)
	plain := NewCodec(nil, nil)
	tests := []struct {
		name   string
		m      proto.Message
		secret bool
	}{
		{"delta", &agentv1.SendResponse{Event: &agentv1.Event{RunId: "r", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{
			Delta: &agentv1.ModelDeltaEvent_Text{Text: "the key is sk-held-0123456789."}}}}}, true},
		{"tool result", &agentv1.Event{Kind: &agentv1.Event_ToolResult{ToolResult: &agentv1.ToolResultEvent{
			Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Text{Text: "KEY=sk-held-0123456789"}}}}}, true},
		{"map key", &agentv1.Agent{Id: "a", Config: &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Headers: map[string]string{"sk-held-0123456789": "v"}}}}, true},
		{"clean", &agentv1.Event{RunId: "run_1", Kind: &agentv1.Event_ModelDelta{ModelDelta: &agentv1.ModelDeltaEvent{
			Delta: &agentv1.ModelDeltaEvent_Text{Text: "nothing to hide"}}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := proto.Clone(tt.m)
			got, err := c.Marshal(tt.m)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := plain.Marshal(tt.m)
			wire := string(got.Materialize())
			if !proto.Equal(tt.m, orig) {
				t.Errorf("the message was changed: %v", tt.m)
			}
			if strings.Contains(wire, "sk-held") {
				t.Errorf("the held secret was sent: %q", wire)
			}
			if tt.secret != strings.Contains(wire, redact.Mark) {
				t.Errorf("redacted = %v, want %v: %q", !tt.secret, tt.secret, wire)
			}
			if !tt.secret && wire != string(want.Materialize()) {
				t.Errorf("a clean message's encoding differs from the proto codec's")
			}
		})
	}
}
