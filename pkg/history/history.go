// Package history builds, groups, renders and checks an agent's history.
//
// A history is a []*agentv1.Message, the public proto message model. The
// engine only appends to it, and a message is never changed once it is in a
// history: code that wants a different message makes a new one. Other
// packages rely on that (pkg/tokens caches a count per message pointer).
//
// The constructors here make messages of the right shape: a user message
// (text or content parts), an assistant message (text, reasoning, tool calls),
// a tool message (tool results), a compaction summary, a system notice. Turns
// is the project's one definition of a turn; Render prints a history as
// agent-core does; Validate checks a history a client sent.
package history

import (
	"encoding/json"
	"fmt"
	"strings"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Text returns a text part.
func Text(text string) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_Text{Text: text}}
}

// Reasoning returns a reasoning part (the model's thinking).
func Reasoning(text string) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_Reasoning{Reasoning: &agentv1.ReasoningPart{Text: text}}}
}

// Image returns an image part.
func Image(f *agentv1.FilePart) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_Image{Image: f}}
}

// Audio returns an audio part.
func Audio(f *agentv1.FilePart) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_Audio{Audio: f}}
}

// Video returns a video part.
func Video(f *agentv1.FilePart) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_Video{Video: f}}
}

// File returns a file part (any media type, images included).
func File(f *agentv1.FilePart) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_File{File: f}}
}

// URL returns a file source given by URL: https, http or a data URL. For a
// data URL the media type is taken from the URL.
func URL(url string) *agentv1.FilePart {
	f := &agentv1.FilePart{Source: &agentv1.FilePart_Url{Url: url}}
	if len(url) > 5 && strings.EqualFold(url[:5], "data:") {
		meta, _, _ := strings.Cut(url[5:], ",")
		mt, _, _ := strings.Cut(meta, ";")
		f.MediaType = strings.ToLower(strings.TrimSpace(mt))
	}
	return f
}

// Bytes returns an inline file source with its media type, e.g. image/png.
func Bytes(mediaType string, data []byte) *agentv1.FilePart {
	return &agentv1.FilePart{MediaType: mediaType, Source: &agentv1.FilePart_Data{Data: data}}
}

// ToolCall returns a tool-call part. arguments is JSON text; empty means no
// arguments.
func ToolCall(id, name, arguments string) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_ToolCall{ToolCall: &agentv1.ToolCallPart{
		Id: id, Name: name, Arguments: arguments,
	}}}
}

// TextOutput returns a tool output holding text.
func TextOutput(text string) *agentv1.ToolOutput {
	return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Text{Text: text}}
}

// JSONOutput returns a tool output holding v as JSON. A json.RawMessage or
// []byte is taken as JSON text and must be valid.
func JSONOutput(v any) (*agentv1.ToolOutput, error) {
	var text []byte
	switch raw := v.(type) {
	case json.RawMessage:
		text = raw
	case []byte:
		text = raw
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("history: tool output to JSON: %w", err)
		}
		text = b
	}
	if !json.Valid(text) {
		return nil, fmt.Errorf("history: tool output is not valid JSON")
	}
	return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Json{Json: string(text)}}, nil
}

// ContentOutput returns a tool output holding content parts (text and file
// parts only; Validate rejects others).
func ContentOutput(parts ...*agentv1.Part) *agentv1.ToolOutput {
	return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: parts}}}
}

// ToolResult returns a tool-result part answering the call callID. isError
// marks a failed call (tool error, crash, timeout, denial, unknown tool).
func ToolResult(callID, toolName string, out *agentv1.ToolOutput, isError bool) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_ToolResult{ToolResult: &agentv1.ToolResultPart{
		ToolCallId: callID, ToolName: toolName, Output: out, Error: isError,
	}}}
}

// User returns a user message holding text.
func User(text string) *agentv1.Message {
	return UserParts(Text(text))
}

// UserParts returns a user message holding content parts: text, image,
// audio, video and file parts.
func UserParts(parts ...*agentv1.Part) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_USER, Parts: parts}
}

// Assistant returns an assistant message holding text, reasoning and
// tool-call parts, in the order given.
func Assistant(parts ...*agentv1.Part) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_ASSISTANT, Parts: parts}
}

// AssistantText returns an assistant message holding text.
func AssistantText(text string) *agentv1.Message {
	return Assistant(Text(text))
}

// Tool returns a tool message holding tool-result parts. All results of one
// message must answer calls of the same assistant message.
func Tool(results ...*agentv1.Part) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_TOOL, Parts: results}
}

// ToolText returns a tool message with one text result, agent-core's
// History.tool.
func ToolText(callID, toolName, text string) *agentv1.Message {
	return Tool(ToolResult(callID, toolName, TextOutput(text), false))
}

// ToolError returns a tool message with one failed result whose text tells
// the model what went wrong.
func ToolError(callID, toolName, text string) *agentv1.Message {
	return Tool(ToolResult(callID, toolName, TextOutput(text), true))
}

// Compact returns a compaction summary: an assistant message marked compact
// with one text part.
func Compact(summary string) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_ASSISTANT, Compact: true, Parts: []*agentv1.Part{Text(summary)}}
}

// System returns a system notice placed in history by the caller (the
// agent's system prompt lives in its config, not here).
func System(text string) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_SYSTEM, Parts: []*agentv1.Part{Text(text)}}
}

// IsSummary reports whether m is a compaction summary.
func IsSummary(m *agentv1.Message) bool {
	return m.GetCompact() && m.GetRole() == agentv1.Role_ROLE_ASSISTANT
}

// SummaryText returns the text of a compaction summary (its text parts
// joined by newlines).
func SummaryText(m *agentv1.Message) string {
	var s string
	for _, p := range m.GetParts() {
		if t, ok := p.GetKind().(*agentv1.Part_Text); ok {
			if s != "" {
				s += "\n"
			}
			s += t.Text
		}
	}
	return s
}

// Media returns the file source of an image, audio, video or file part, or
// nil for other parts.
func Media(p *agentv1.Part) *agentv1.FilePart {
	switch k := p.GetKind().(type) {
	case *agentv1.Part_Image:
		return k.Image
	case *agentv1.Part_Audio:
		return k.Audio
	case *agentv1.Part_Video:
		return k.Video
	case *agentv1.Part_File:
		return k.File
	}
	return nil
}
