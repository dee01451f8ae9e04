package telemetry

import (
	"encoding/json"
	"strings"

	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Message content in the GenAI conventions' JSON shapes
// (gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions):
// a message is {role, parts}, a part {type, …}. Media become a part with
// their type and media type, never their bytes.

type genaiPart struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
	MimeType  string          `json:"mime_type,omitempty"`
	URI       string          `json:"uri,omitempty"`
}

type genaiMessage struct {
	Role         string      `json:"role"`
	Parts        []genaiPart `json:"parts"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

// systemJSON is gen_ai.system_instructions for a system prompt.
func systemJSON(system string) string {
	if system == "" {
		return "[]"
	}
	return marshal([]genaiPart{{Type: "text", Content: system}})
}

// messagesJSON is gen_ai.input.messages for a request's messages.
func messagesJSON(msgs []*agentv1.Message) string {
	out := make([]genaiMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, genaiMessageOf(m))
	}
	return marshal(out)
}

// outputJSON is gen_ai.output.messages for a response.
func outputJSON(res *llm.Result) string {
	if res.Message == nil {
		return marshal([]genaiMessage{{Role: "assistant", Parts: []genaiPart{{Type: "text", Content: res.Text}}, FinishReason: res.FinishReason}})
	}
	m := genaiMessageOf(res.Message)
	m.FinishReason = res.FinishReason
	return marshal([]genaiMessage{m})
}

func genaiMessageOf(m *agentv1.Message) genaiMessage {
	role := strings.ToLower(strings.TrimPrefix(m.GetRole().String(), "ROLE_"))
	g := genaiMessage{Role: role, Parts: make([]genaiPart, 0, len(m.GetParts()))}
	for _, p := range m.GetParts() {
		switch k := p.GetKind().(type) {
		case *agentv1.Part_Text:
			g.Parts = append(g.Parts, genaiPart{Type: "text", Content: k.Text})
		case *agentv1.Part_Reasoning:
			g.Parts = append(g.Parts, genaiPart{Type: "reasoning", Content: k.Reasoning.GetText()})
		case *agentv1.Part_ToolCall:
			args := json.RawMessage(k.ToolCall.GetArguments())
			if !json.Valid(args) {
				args = nil
			}
			g.Parts = append(g.Parts, genaiPart{Type: "tool_call", ID: k.ToolCall.GetId(), Name: k.ToolCall.GetName(), Arguments: args})
		case *agentv1.Part_ToolResult:
			g.Parts = append(g.Parts, genaiPart{Type: "tool_call_response", ID: k.ToolResult.GetToolCallId(),
				Response: tool.OutputText(k.ToolResult.GetOutput())})
		case *agentv1.Part_Image:
			g.Parts = append(g.Parts, media("image", k.Image))
		case *agentv1.Part_File:
			g.Parts = append(g.Parts, media("file", k.File))
		case *agentv1.Part_Audio:
			g.Parts = append(g.Parts, media("audio", k.Audio))
		case *agentv1.Part_Video:
			g.Parts = append(g.Parts, media("video", k.Video))
		}
	}
	return g
}

// media describes a media part by its type, media type and URL (not a
// data: URL, which holds the bytes).
func media(typ string, f *agentv1.FilePart) genaiPart {
	p := genaiPart{Type: typ, MimeType: f.GetMediaType()}
	if u := f.GetUrl(); !strings.HasPrefix(u, "data:") {
		p.URI = u
	}
	return p
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
