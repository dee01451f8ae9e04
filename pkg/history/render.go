package history

import (
	"strings"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Labels are the words Render puts around parts that are not plain text.
type Labels struct {
	Reasoning string // before reasoning: "[思考] …"
	Call      string // before a tool call: "[调用 read {…}]"
	Result    string // after the tool name of a result: "[read 返回] …"
	Failed    string // after the tool name of a failed result: "[read 出错] …"
	Summary   string // before a compaction summary: "[总结] …"
	Image     string // "[图片]"
	Audio     string // "[音频]"
	Video     string // "[视频]"
	File      string // "[文件]", or "[文件 a.pdf]" when the file has a name
}

// Chinese are agent-core's own labels, as its History.render prints them
// (the "original" labels of LabelsNamed).
func Chinese() Labels {
	return Labels{
		Reasoning: "思考", Call: "调用", Result: "返回", Failed: "出错", Summary: "总结",
		Image: "图片", Audio: "音频", Video: "视频", File: "文件",
	}
}

// English are the same labels in English, the default.
func English() Labels {
	return Labels{
		Reasoning: "thinking", Call: "call", Result: "result", Failed: "error", Summary: "summary",
		Image: "image", Audio: "audio", Video: "video", File: "file",
	}
}

// LabelsNamed returns the labels called name: "english" (or "en"), or
// "original" (or "zh"), agent-core's; false for another name.
func LabelsNamed(name string) (Labels, bool) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "english", "en":
		return English(), true
	case "original", "zh":
		return Chinese(), true
	}
	return Labels{}, false
}

// Render prints a history as text, one line per message in history order,
// as agent-core's History.render does, with English labels:
//
//	user: read the config for me
//	assistant: [thinking] I'll read it [call read {"path":"a.json"}]
//	tool: [read result] {"port":8080}
//	user: and this picture? [image]
//
// RenderWith(h, Chinese()) prints agent-core's own labels ([调用 read …],
// [read 返回]).
func Render(h []*agentv1.Message) string {
	return RenderWith(h, English())
}

// RenderWith is Render with other labels, e.g. English().
func RenderWith(h []*agentv1.Message, l Labels) string {
	var b strings.Builder
	for i, m := range h {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(roleName(m.GetRole()))
		b.WriteString(":")
		if IsSummary(m) {
			b.WriteString(" [" + l.Summary + "]")
		}
		renderParts(&b, m.GetParts(), l)
	}
	return b.String()
}

func roleName(r agentv1.Role) string {
	switch r {
	case agentv1.Role_ROLE_SYSTEM:
		return "system"
	case agentv1.Role_ROLE_USER:
		return "user"
	case agentv1.Role_ROLE_ASSISTANT:
		return "assistant"
	case agentv1.Role_ROLE_TOOL:
		return "tool"
	}
	return "unknown"
}

// renderParts writes each part preceded by a space.
func renderParts(b *strings.Builder, parts []*agentv1.Part, l Labels) {
	for _, p := range parts {
		b.WriteByte(' ')
		switch k := p.GetKind().(type) {
		case *agentv1.Part_Text:
			b.WriteString(k.Text)
		case *agentv1.Part_Reasoning:
			b.WriteString("[" + l.Reasoning + "] " + k.Reasoning.GetText())
		case *agentv1.Part_ToolCall:
			b.WriteString("[" + l.Call + " " + k.ToolCall.GetName())
			if args := k.ToolCall.GetArguments(); args != "" {
				b.WriteString(" " + args)
			}
			b.WriteString("]")
		case *agentv1.Part_ToolResult:
			r := k.ToolResult
			word := l.Result
			if r.GetError() {
				word = l.Failed
			}
			b.WriteString("[" + r.GetToolName() + " " + word + "]")
			renderOutput(b, r.GetOutput(), l)
		case *agentv1.Part_Image:
			b.WriteString(mediaLabel(l.Image, k.Image))
		case *agentv1.Part_Audio:
			b.WriteString(mediaLabel(l.Audio, k.Audio))
		case *agentv1.Part_Video:
			b.WriteString(mediaLabel(l.Video, k.Video))
		case *agentv1.Part_File:
			label := l.File
			if strings.HasPrefix(k.File.GetMediaType(), "image/") {
				label = l.Image
			}
			b.WriteString(mediaLabel(label, k.File))
		default:
			b.WriteString("[?]")
		}
	}
}

func renderOutput(b *strings.Builder, out *agentv1.ToolOutput, l Labels) {
	switch v := out.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		b.WriteString(" " + v.Text)
	case *agentv1.ToolOutput_Json:
		b.WriteString(" " + v.Json)
	case *agentv1.ToolOutput_Content:
		renderParts(b, v.Content.GetParts(), l)
	}
}

func mediaLabel(word string, f *agentv1.FilePart) string {
	if name := f.GetFilename(); name != "" {
		return "[" + word + " " + name + "]"
	}
	return "[" + word + "]"
}
