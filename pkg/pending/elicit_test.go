package pending

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestElicitedContent: the schema's defaults fill the fields an answer
// leaves out (SEP-1034), never the ones it gives; the result is checked.
func TestElicitedContent(t *testing.T) {
	schema, _ := structpb.NewStruct(map[string]any{
		"type": "object", "required": []any{"name"},
		"properties": map[string]any{
			"name":     map[string]any{"type": "string"},
			"greeting": map[string]any{"type": "string", "default": "hello"},
			"age":      map[string]any{"type": "integer", "minimum": 0},
			"size":     map[string]any{"type": "string", "enum": []any{"S", "M"}, "default": "M"},
		},
	})
	for _, c := range []struct {
		name    string
		content map[string]any
		want    map[string]any
		err     string
	}{
		{name: "defaults filled", content: map[string]any{"name": "Ada"}, want: map[string]any{"name": "Ada", "greeting": "hello", "size": "M"}},
		{name: "given values kept", content: map[string]any{"name": "Ada", "greeting": "hi", "age": 36, "size": "S"},
			want: map[string]any{"name": "Ada", "greeting": "hi", "age": float64(36), "size": "S"}},
		{name: "a required field missing", content: map[string]any{}, err: "name"},
		{name: "a wrong type", content: map[string]any{"name": 5}, err: "does not match the requested schema"},
		{name: "not in the enum", content: map[string]any{"name": "Ada", "size": "XL"}, err: "does not match"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, _ := structpb.NewStruct(c.content)
			out, err := elicitedContent(schema, in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, _ := structpb.NewStruct(c.want)
			if !proto.Equal(out, want) {
				t.Errorf("content %v, want %v", out, want)
			}
		})
	}
}

// TestStoredAnswer: an answer survives its stored form (the decision other
// replicas read); anything else stored under an elicitation's id cancels.
func TestStoredAnswer(t *testing.T) {
	content, _ := structpb.NewStruct(map[string]any{"name": "Ada"})
	for _, a := range []hostreq.ElicitationAnswer{
		{Action: agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT, Content: content},
		{Action: agentv1.ElicitationAction_ELICITATION_ACTION_DECLINE},
		{Action: agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL, TimedOut: true},
	} {
		allow, reason, err := encodeElicitation(a)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeElicitation(agent.Decision{Allow: allow, Reason: reason})
		if allow != (a.Action == agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT) || got.Action != a.Action ||
			got.TimedOut != a.TimedOut || !proto.Equal(got.Content, a.Content) {
			t.Errorf("%v: stored as %v %q, read back as %v", a, allow, reason, got)
		}
	}
	for _, reason := range []string{"no one answered within the permission timeout", `{"action": "NOPE"}`, `{"action": "ELICITATION_ACTION_ACCEPT", "content": 5}`} {
		if got := decodeElicitation(agent.Decision{Reason: reason}); got.Action != agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL {
			t.Errorf("%q read as %v, want a cancel", reason, got)
		}
	}
}
