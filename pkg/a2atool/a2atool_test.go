package a2atool

import (
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// TestParseDefinition pins what a definition file may hold and the errors
// of what it may not, which name the field and never a header's value.
func TestParseDefinition(t *testing.T) {
	for _, c := range []struct {
		name, file, data string
		want             string // an error's text; "" for none
	}{
		{"minimal", "agent.a2a.json", `{"card": "https://a.example/.well-known/agent-card.json"}`, ""},
		{"whole", "room-booker.a2a.json", `{"card": "http://127.0.0.1:9/card.json", "headers": {"Authorization": "Bearer s3cret"}, "description": "d", "timeout": "2m", "discoveryTimeout": "5s"}`, ""},
		{"no card", "agent.a2a.json", `{}`, "card: missing"},
		{"relative card", "agent.a2a.json", `{"card": "/card.json"}`, "want an absolute http or https URL"},
		{"unknown field", "agent.a2a.json", `{"card": "https://a.example/c", "url": "x"}`, `unknown field "url"`},
		{"bad timeout", "agent.a2a.json", `{"card": "https://a.example/c", "timeout": "soon"}`, "timeout: want a positive duration"},
		{"bad header value", "agent.a2a.json", `{"card": "https://a.example/c", "headers": {"X-Key": "a\u0000b-s3cret"}}`, "headers.X-Key: value is not a valid header value"},
		{"bad name", "my agent.a2a.json", `{"card": "https://a.example/c"}`, "may only hold letters"},
		{"not json", "agent.a2a.json", `{"card": `, "unexpected EOF"},
		{"two objects", "agent.a2a.json", `{"card": "https://a.example/c"} {}`, "unexpected data after"},
	} {
		t.Run(c.name, func(t *testing.T) {
			def, err := ParseDefinition("/tools/"+c.file, []byte(c.data))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if def.Name != strings.TrimSuffix(c.file, Suffix) || def.Path != "/tools/"+c.file {
					t.Errorf("definition %+v", def)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/tools/"+c.file) {
				t.Fatalf("err = %v, want one naming the file and %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error echoes a header's value: %v", err)
			}
		})
	}
	def, err := ParseDefinition("/tools/x.a2a.json", []byte(`{"card": "https://a.example/c", "timeout": "2m"}`))
	if err != nil || def.Timeout != 2*time.Minute || def.discoveryTimeout() != DefaultDiscoveryTimeout {
		t.Errorf("timeouts of %+v: %v", def, err)
	}
}

// TestReplyResult pins the result of each way a remote task can end.
func TestReplyResult(t *testing.T) {
	msg := func(s string) *a2a.Message { return a2a.NewMessage(a2a.MessageRoleAgent, a2a.TextPart{Text: s}) }
	task := func(state a2a.TaskState, m *a2a.Message, arts ...*a2a.Artifact) *a2a.Task {
		return &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: state, Message: m}, Artifacts: arts}
	}
	for _, c := range []struct {
		name string
		evs  []a2a.Event
		text string
		err  bool
	}{
		{"message", []a2a.Event{msg("hi")}, "hi", false},
		{"completed with artifacts", []a2a.Event{
			task(a2a.TaskStateWorking, nil),
			&a2a.TaskArtifactUpdateEvent{TaskID: "t1", Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.TextPart{Text: "one"}}}},
			&a2a.TaskArtifactUpdateEvent{TaskID: "t1", Append: true, Artifact: &a2a.Artifact{ID: "a", Parts: a2a.ContentParts{a2a.DataPart{Data: map[string]any{"n": 2}}}}},
			&a2a.TaskStatusUpdateEvent{TaskID: "t1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Final: true},
		}, "one\n{\"n\":2}", false},
		{"completed with a message only", []a2a.Event{task(a2a.TaskStateCompleted, msg("done"))}, "done", false},
		{"input required", []a2a.Event{task(a2a.TaskStateInputRequired, msg("which room?"))}, `which room?` + "\nTo answer, call this tool again with task_id \"t1\"", false},
		{"failed", []a2a.Event{task(a2a.TaskStateFailed, msg("no rooms"))}, "the task t1 was failed: no rooms", true},
		{"still working", []a2a.Event{task(a2a.TaskStateWorking, nil)}, "ended while the task t1 was working", true},
		{"nothing", nil, "neither a message nor a task", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &reply{}
			for _, ev := range c.evs {
				r.add(ev)
			}
			res := r.result("booker")
			if (res.GetError() != "") != c.err || !strings.Contains(res.GetText(), c.text) {
				t.Errorf("result %v, want text with %q, error %v", res, c.text, c.err)
			}
		})
	}
}
