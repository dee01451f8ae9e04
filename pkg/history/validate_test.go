package history

import (
	"errors"
	"strings"
	"testing"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestValidate(t *testing.T) {
	call := Assistant(ToolCall("c1", "read", `{"path":"a"}`))
	ok := ToolText("c1", "read", "fine")
	noKind := &agentv1.Part{}
	tests := []struct {
		name  string
		h     []*agentv1.Message
		index int
		field string // "" when the history is valid
		desc  string // a piece of the description
	}{
		{"valid", renderHistory(), 0, "", ""},
		{"result before its call is valid", []*agentv1.Message{User("a"), ok, call}, 0, "", ""},
		{"empty assistant is valid", []*agentv1.Message{{Role: agentv1.Role_ROLE_ASSISTANT}}, 0, "", ""},
		{"nil message", []*agentv1.Message{User("a"), nil}, 1, "", "null"},
		{"no role", []*agentv1.Message{{Parts: []*agentv1.Part{Text("a")}}}, 0, "role", "not set"},
		{"unknown role", []*agentv1.Message{{Role: 42, Parts: []*agentv1.Part{Text("a")}}}, 0, "role", "not set"},
		{"no parts", []*agentv1.Message{User("a"), {Role: agentv1.Role_ROLE_USER}}, 1, "parts", "no parts"},
		{"part without kind", []*agentv1.Message{UserParts(Text("a"), noKind)}, 0, "parts[1]", "no kind"},
		{"reasoning in a user message", []*agentv1.Message{UserParts(Reasoning("x"))}, 0, "parts[0]", "user message cannot hold a reasoning"},
		{"image in a system notice", []*agentv1.Message{{Role: agentv1.Role_ROLE_SYSTEM, Parts: []*agentv1.Part{Image(URL("https://x"))}}},
			0, "parts[0]", "system message cannot hold a image"},
		{"text in a tool message", []*agentv1.Message{call, Tool(Text("x"))}, 1, "parts[0]", "tool message cannot hold a text"},
		{"tool call in a user message", []*agentv1.Message{UserParts(ToolCall("c", "x", ""))}, 0, "parts[0]", "cannot hold a tool_call"},
		{"tool call in a summary", []*agentv1.Message{{Role: agentv1.Role_ROLE_ASSISTANT, Compact: true,
			Parts: []*agentv1.Part{ToolCall("c", "x", "")}}}, 0, "parts[0]", "summary message cannot hold a tool_call"},
		{"compact user", []*agentv1.Message{{Role: agentv1.Role_ROLE_USER, Compact: true, Parts: []*agentv1.Part{Text("s")}}},
			0, "compact", "only an assistant"},
		{"empty summary", []*agentv1.Message{{Role: agentv1.Role_ROLE_ASSISTANT, Compact: true}}, 0, "parts", "no parts"},
		{"call without id", []*agentv1.Message{Assistant(ToolCall("", "read", ""))}, 0, "parts[0].tool_call.id", "no id"},
		{"call without name", []*agentv1.Message{Assistant(ToolCall("c", "", ""))}, 0, "parts[0].tool_call.name", "no name"},
		{"bad arguments", []*agentv1.Message{Assistant(Text("x"), ToolCall("c", "read", `{"path":`))}, 0,
			"parts[1].tool_call.arguments", "not valid JSON"},
		{"duplicate call id", []*agentv1.Message{call, ok, Assistant(ToolCall("c1", "read", "{}"))}, 2,
			"parts[0].tool_call.id", "already used by history[0]"},
		{"orphan result", []*agentv1.Message{User("a"), ToolText("zz", "read", "x")}, 1,
			"parts[0].tool_result.tool_call_id", `no tool call with id "zz"`},
		{"result without call id", []*agentv1.Message{ToolText("", "read", "x")}, 0,
			"parts[0].tool_result.tool_call_id", "no tool_call_id"},
		{"second result for a call", []*agentv1.Message{call, ok, ToolText("c1", "read", "again")}, 2,
			"parts[0].tool_result.tool_call_id", "already answered by history[1]"},
		{"wrong tool name", []*agentv1.Message{call, ToolText("c1", "write", "x")}, 1,
			"parts[0].tool_result.tool_name", `call of "read", not "write"`},
		{"results of two assistant messages in one tool message", []*agentv1.Message{call, Assistant(ToolCall("c2", "read", "")),
			Tool(ToolResult("c1", "read", TextOutput("a"), false), ToolResult("c2", "read", TextOutput("b"), false))}, 2,
			"parts[1].tool_result.tool_call_id", "one assistant message"},
		{"result without output", []*agentv1.Message{call, Tool(ToolResult("c1", "read", nil, false))}, 1,
			"parts[0].tool_result.output", "no output"},
		{"bad JSON output", []*agentv1.Message{call, Tool(ToolResult("c1", "read",
			&agentv1.ToolOutput{Value: &agentv1.ToolOutput_Json{Json: "{"}}, false))}, 1,
			"parts[0].tool_result.output.json", "not valid JSON"},
		{"tool call inside content output", []*agentv1.Message{call, Tool(ToolResult("c1", "read",
			ContentOutput(Text("a"), ToolCall("x", "y", "")), false))}, 1,
			"parts[0].tool_result.output.content.parts[1]", "cannot hold a tool_call"},
		{"content output image without source", []*agentv1.Message{call, Tool(ToolResult("c1", "read",
			ContentOutput(Image(&agentv1.FilePart{})), false))}, 1,
			"parts[0].tool_result.output.content.parts[0].image", "neither data nor url"},
		{"file without source", []*agentv1.Message{UserParts(File(&agentv1.FilePart{MediaType: "application/pdf"}))}, 0,
			"parts[0].file", "neither data nor url"},
		{"file bytes without media type", []*agentv1.Message{UserParts(File(Bytes("", []byte("x"))))}, 0,
			"parts[0].file.media_type", "needs a media type"},
		{"image bytes without media type is valid", []*agentv1.Message{UserParts(Image(Bytes("", []byte("x"))))}, 0, "", ""},
		{"empty bytes", []*agentv1.Message{UserParts(Audio(Bytes("audio/wav", nil)))}, 0, "parts[0].audio.data", "empty"},
		{"ftp url", []*agentv1.Message{UserParts(Video(URL("ftp://x/v.mp4")))}, 0, "parts[0].video.url", "https, http or a data URL"},
		{"broken data url", []*agentv1.Message{UserParts(Image(URL("data:image/png;base64,@@")))}, 0, "parts[0].image.url", "data URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.h)
			if tt.field == "" && tt.desc == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want a *ValidationError", err)
			}
			v := ve.Violations[0]
			if v.Index != tt.index || v.Field != tt.field || !strings.Contains(v.Description, tt.desc) {
				t.Errorf("first violation = %+v, want index %d field %q description containing %q", v, tt.index, tt.field, tt.desc)
			}
		})
	}
}

func TestValidationErrorMessage(t *testing.T) {
	h := []*agentv1.Message{User("a"), {Role: agentv1.Role_ROLE_USER}}
	for range 30 {
		h = append(h, ToolText("nope", "read", "x"))
	}
	var ve *ValidationError
	if !errors.As(Validate(h), &ve) {
		t.Fatal("want a *ValidationError")
	}
	if len(ve.Violations) != maxViolations {
		t.Errorf("%d violations, want at most %d", len(ve.Violations), maxViolations)
	}
	want := "invalid history: history[1].parts: message has no parts (and 19 more)"
	if ve.Error() != want {
		t.Errorf("Error() = %q, want %q", ve.Error(), want)
	}
	if got := ve.Violations[1].Path("messages"); got != "messages[2].parts[0].tool_result.tool_call_id" {
		t.Errorf("Path = %q", got)
	}
}
