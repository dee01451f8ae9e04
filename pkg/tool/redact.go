package tool

import (
	"strings"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// RedactOutput returns out with redact applied to its text: a text or JSON
// value, the text parts of content, and the data of text files (text/*,
// JSON). It returns out itself when nothing changed; out is never changed
// (it may be shared). A nil redact returns out.
func RedactOutput(out *agentv1.ToolOutput, redact func(string) string) *agentv1.ToolOutput {
	if redact == nil || out == nil {
		return out
	}
	switch v := out.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		if r := redact(v.Text); r != v.Text {
			return TextOutput(r)
		}
	case *agentv1.ToolOutput_Json:
		if r := redact(v.Json); r != v.Json {
			return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Json{Json: r}}
		}
	case *agentv1.ToolOutput_Content:
		var parts []*agentv1.Part // a copy, once a part changes
		for i, p := range v.Content.GetParts() {
			np := redactPart(p, redact)
			if np == p {
				continue
			}
			if parts == nil {
				parts = append([]*agentv1.Part(nil), v.Content.GetParts()...)
			}
			parts[i] = np
		}
		if parts != nil {
			return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: parts}}}
		}
	}
	return out
}

// redactPart returns p, or a cleaned copy.
func redactPart(p *agentv1.Part, redact func(string) string) *agentv1.Part {
	if t, ok := p.GetKind().(*agentv1.Part_Text); ok {
		if r := redact(t.Text); r != t.Text {
			return &agentv1.Part{Kind: &agentv1.Part_Text{Text: r}}
		}
		return p
	}
	f := p.GetFile()
	if f == nil || f.GetData() == nil || !textMedia(f.GetMediaType()) {
		return p
	}
	r := redact(string(f.GetData()))
	if r == string(f.GetData()) {
		return p
	}
	np := proto.Clone(p).(*agentv1.Part)
	np.GetFile().Source = &agentv1.FilePart_Data{Data: []byte(r)}
	return np
}

// textMedia reports whether a media type is text a person (or a model) reads.
func textMedia(mt string) bool {
	mt, _, _ = strings.Cut(strings.ToLower(mt), ";")
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json")
}
