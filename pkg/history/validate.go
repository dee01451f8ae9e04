package history

import (
	"encoding/json"
	"fmt"
	"strings"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// maxViolations bounds how many problems one ValidationError lists.
const maxViolations = 20

// Violation is one problem in a history.
type Violation struct {
	// Index of the message in the history.
	Index int
	// Field inside the message, e.g. "parts[1].tool_call.arguments"; empty
	// when the message as a whole is at fault.
	Field string
	// Description says what is wrong, for a person.
	Description string
}

// Path returns the violation's field path under prefix, e.g.
// Path("history") = "history[3].parts[1].tool_call.arguments".
func (v Violation) Path(prefix string) string {
	p := fmt.Sprintf("%s[%d]", prefix, v.Index)
	if v.Field != "" {
		p += "." + v.Field
	}
	return p
}

// ValidationError lists what is wrong with a history (at most 20 problems).
type ValidationError struct {
	Violations []Violation
}

// Error names the first problem and how many more there are.
func (e *ValidationError) Error() string {
	v := e.Violations[0]
	s := fmt.Sprintf("invalid history: %s: %s", v.Path("history"), v.Description)
	if n := len(e.Violations) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// Validate checks a history a client sent and returns a *ValidationError
// naming each bad message and field, or nil. It checks that:
//   - every message has a role and at least one part (an assistant message
//     may be empty: a model can answer nothing), and every part has a kind;
//   - parts fit the role: user messages hold text and media, system notices
//     text, assistant messages text, reasoning and tool calls, summaries
//     text, tool messages tool results;
//   - tool calls have an id unique in the history, a name, and arguments
//     that are empty or valid JSON;
//   - tool results answer a call in the history, at most one result per
//     call, with the call's tool name if they give one, and the results of
//     one tool message answer calls of one assistant message;
//   - tool outputs are set, and content outputs hold only text and media;
//   - media parts have a source: bytes with a media type (images may omit
//     it), or an http(s) or valid data URL.
func Validate(h []*agentv1.Message) error {
	v := validator{calls: make(map[string]call)}
	for i, m := range h {
		if m.GetRole() == agentv1.Role_ROLE_ASSISTANT {
			for j, p := range m.GetParts() {
				c := p.GetToolCall()
				if c == nil || c.GetId() == "" {
					continue
				}
				if prev, dup := v.calls[c.GetId()]; dup {
					v.add(i, fmt.Sprintf("parts[%d].tool_call.id", j),
						fmt.Sprintf("tool call id %q is already used by history[%d]", c.GetId(), prev.index))
					continue
				}
				v.calls[c.GetId()] = call{index: i, name: c.GetName()}
			}
		}
	}
	answered := make(map[string]int)
	for i, m := range h {
		v.message(i, m, answered)
		if len(v.out) >= maxViolations {
			break
		}
	}
	if len(v.out) == 0 {
		return nil
	}
	return &ValidationError{Violations: v.out}
}

type call struct {
	index int
	name  string
}

type validator struct {
	calls map[string]call
	out   []Violation
}

func (v *validator) add(i int, field, desc string) {
	if len(v.out) < maxViolations {
		v.out = append(v.out, Violation{Index: i, Field: field, Description: desc})
	}
}

func (v *validator) message(i int, m *agentv1.Message, answered map[string]int) {
	if m == nil {
		v.add(i, "", "message is null")
		return
	}
	role := m.GetRole()
	if role == agentv1.Role_ROLE_UNSPECIFIED || agentv1.Role_name[int32(role)] == "" {
		v.add(i, "role", "role is not set")
		return
	}
	if m.GetCompact() && role != agentv1.Role_ROLE_ASSISTANT {
		v.add(i, "compact", "only an assistant message can be a compaction summary")
	}
	if len(m.GetParts()) == 0 && (role != agentv1.Role_ROLE_ASSISTANT || m.GetCompact()) {
		v.add(i, "parts", "message has no parts")
		return
	}
	owner := -1 // the assistant message whose calls this tool message answers
	for j, p := range m.GetParts() {
		field := fmt.Sprintf("parts[%d]", j)
		kind := PartKind(p)
		if kind == "" {
			v.add(i, field, "part has no kind")
			continue
		}
		if !allowed(role, m.GetCompact(), kind) {
			v.add(i, field, fmt.Sprintf("a %s message cannot hold a %s part", roleLabel(role, m.GetCompact()), kind))
			continue
		}
		switch k := p.GetKind().(type) {
		case *agentv1.Part_ToolCall:
			v.toolCall(i, field+".tool_call", k.ToolCall)
		case *agentv1.Part_ToolResult:
			owner = v.toolResult(i, field+".tool_result", k.ToolResult, answered, owner)
		case *agentv1.Part_Image, *agentv1.Part_Audio, *agentv1.Part_Video, *agentv1.Part_File:
			v.media(i, field+"."+kind, kind, Media(p))
		}
	}
}

func (v *validator) toolCall(i int, field string, c *agentv1.ToolCallPart) {
	if c.GetId() == "" {
		v.add(i, field+".id", "tool call has no id")
	}
	if c.GetName() == "" {
		v.add(i, field+".name", "tool call has no name")
	}
	if args := c.GetArguments(); strings.TrimSpace(args) != "" && !json.Valid([]byte(args)) {
		v.add(i, field+".arguments", "tool call arguments are not valid JSON")
	}
}

func (v *validator) toolResult(i int, field string, r *agentv1.ToolResultPart, answered map[string]int, owner int) int {
	id := r.GetToolCallId()
	if id == "" {
		v.add(i, field+".tool_call_id", "tool result has no tool_call_id")
		return owner
	}
	c, ok := v.calls[id]
	switch {
	case !ok:
		v.add(i, field+".tool_call_id", fmt.Sprintf("no tool call with id %q in the history", id))
	case answered[id] != 0:
		v.add(i, field+".tool_call_id", fmt.Sprintf("tool call %q is already answered by history[%d]", id, answered[id]-1))
	case r.GetToolName() != "" && r.GetToolName() != c.name:
		v.add(i, field+".tool_name", fmt.Sprintf("tool call %q is a call of %q, not %q", id, c.name, r.GetToolName()))
	case owner >= 0 && c.index != owner:
		v.add(i, field+".tool_call_id", fmt.Sprintf(
			"results of one tool message must answer calls of one assistant message (history[%d], not history[%d])", owner, c.index))
	}
	if ok {
		if answered[id] == 0 {
			answered[id] = i + 1
		}
		if owner < 0 {
			owner = c.index
		}
	}
	if r.GetOutput().GetValue() == nil {
		v.add(i, field+".output", "tool result has no output")
		return owner
	}
	switch out := r.GetOutput().GetValue().(type) {
	case *agentv1.ToolOutput_Json:
		if !json.Valid([]byte(out.Json)) {
			v.add(i, field+".output.json", "tool output is not valid JSON")
		}
	case *agentv1.ToolOutput_Content:
		for j, p := range out.Content.GetParts() {
			pf := fmt.Sprintf("%s.output.content.parts[%d]", field, j)
			kind := PartKind(p)
			switch kind {
			case "text":
			case "image", "audio", "video", "file":
				v.media(i, pf+"."+kind, kind, Media(p))
			case "":
				v.add(i, pf, "part has no kind")
			default:
				v.add(i, pf, fmt.Sprintf("tool output content cannot hold a %s part", kind))
			}
		}
	}
	return owner
}

func (v *validator) media(i int, field, kind string, f *agentv1.FilePart) {
	switch src := f.GetSource().(type) {
	case *agentv1.FilePart_Data:
		if len(src.Data) == 0 {
			v.add(i, field+".data", "file data is empty")
		}
		if f.GetMediaType() == "" && kind != "image" {
			v.add(i, field+".media_type", "inline "+kind+" data needs a media type")
		}
	case *agentv1.FilePart_Url:
		u := src.Url
		switch {
		case strings.HasPrefix(strings.ToLower(u), "data:"):
			if _, err := ParseDataURL(u); err != nil {
				v.add(i, field+".url", err.Error())
			}
		case strings.HasPrefix(u, "https://"), strings.HasPrefix(u, "http://"):
		default:
			v.add(i, field+".url", "url must be https, http or a data URL")
		}
	default:
		v.add(i, field, "file part has neither data nor url")
	}
}

// PartKind names a part's kind as its proto field does: "text",
// "reasoning", "image", "file", "audio", "video", "tool_call" or
// "tool_result"; "" when unset.
func PartKind(p *agentv1.Part) string {
	switch p.GetKind().(type) {
	case *agentv1.Part_Text:
		return "text"
	case *agentv1.Part_Reasoning:
		return "reasoning"
	case *agentv1.Part_Image:
		return "image"
	case *agentv1.Part_File:
		return "file"
	case *agentv1.Part_Audio:
		return "audio"
	case *agentv1.Part_Video:
		return "video"
	case *agentv1.Part_ToolCall:
		return "tool_call"
	case *agentv1.Part_ToolResult:
		return "tool_result"
	}
	return ""
}

func allowed(role agentv1.Role, compact bool, kind string) bool {
	switch role {
	case agentv1.Role_ROLE_USER:
		switch kind {
		case "text", "image", "audio", "video", "file":
			return true
		}
	case agentv1.Role_ROLE_SYSTEM:
		return kind == "text"
	case agentv1.Role_ROLE_ASSISTANT:
		if compact {
			return kind == "text"
		}
		return kind == "text" || kind == "reasoning" || kind == "tool_call"
	case agentv1.Role_ROLE_TOOL:
		return kind == "tool_result"
	}
	return false
}

func roleLabel(role agentv1.Role, compact bool) string {
	if compact {
		return "summary"
	}
	return roleName(role)
}
