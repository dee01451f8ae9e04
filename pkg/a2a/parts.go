package a2a

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Artifact names.
const (
	artifactResult = "result"
	artifactFiles  = "files"
)

// inputParts turns an A2A message's parts into a run's input: text as
// text, data as its JSON text, files as file parts (inline bytes or URL).
func inputParts(msg *a2a.Message) ([]*agentv1.Part, error) {
	var out []*agentv1.Part
	for i, p := range msg.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			out = append(out, &agentv1.Part{Kind: &agentv1.Part_Text{Text: p.Text}})
		case a2a.DataPart:
			b, err := json.Marshal(p.Data)
			if err != nil {
				return nil, fmt.Errorf("%w: parts[%d]: %v", a2a.ErrInvalidParams, i, err)
			}
			out = append(out, &agentv1.Part{Kind: &agentv1.Part_Text{Text: string(b)}})
		case a2a.FilePart:
			f, err := inputFile(p)
			if err != nil {
				return nil, fmt.Errorf("%w: parts[%d]: %v", a2a.ErrInvalidParams, i, err)
			}
			out = append(out, &agentv1.Part{Kind: &agentv1.Part_File{File: f}})
		default:
			return nil, fmt.Errorf("%w: parts[%d]: a part of an unknown kind", a2a.ErrInvalidParams, i)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the message has no parts", a2a.ErrInvalidParams)
	}
	return out, nil
}

// inputFile is the file part of an A2A file.
func inputFile(p a2a.FilePart) (*agentv1.FilePart, error) {
	switch f := p.File.(type) {
	case a2a.FileBytes:
		data, err := base64.StdEncoding.DecodeString(f.Bytes)
		if err != nil {
			return nil, fmt.Errorf("file bytes are not base64: %v", err)
		}
		return &agentv1.FilePart{MediaType: f.MimeType, Filename: f.Name, Source: &agentv1.FilePart_Data{Data: data}}, nil
	case a2a.FileURI:
		return &agentv1.FilePart{MediaType: f.MimeType, Filename: f.Name, Source: &agentv1.FilePart_Url{Url: f.URI}}, nil
	}
	return nil, fmt.Errorf("a file with neither bytes nor uri")
}

// outputFile is the A2A file of a file part, or false when it has no content.
func outputFile(f *agentv1.FilePart) (a2a.FilePart, bool) {
	meta := a2a.FileMeta{MimeType: f.GetMediaType(), Name: f.GetFilename()}
	switch src := f.GetSource().(type) {
	case *agentv1.FilePart_Data:
		return a2a.FilePart{File: a2a.FileBytes{FileMeta: meta, Bytes: base64.StdEncoding.EncodeToString(src.Data)}}, true
	case *agentv1.FilePart_Url:
		return a2a.FilePart{File: a2a.FileURI{FileMeta: meta, URI: src.Url}}, true
	}
	return a2a.FilePart{}, false
}

// outputFiles are the files a tool result holds.
func outputFiles(out *agentv1.ToolOutput) []a2a.Part {
	var parts []a2a.Part
	for _, p := range out.GetContent().GetParts() {
		var f *agentv1.FilePart
		switch k := p.GetKind().(type) {
		case *agentv1.Part_File:
			f = k.File
		case *agentv1.Part_Image:
			f = k.Image
		case *agentv1.Part_Audio:
			f = k.Audio
		case *agentv1.Part_Video:
			f = k.Video
		}
		if fp, ok := outputFile(f); f != nil && ok {
			parts = append(parts, fp)
		}
	}
	return parts
}

// resultArtifact is the artifact of a run's result: its text, and its
// structured output as data (an object as it is, another value as
// {"value": …}).
func resultArtifact(res *agentv1.RunResultEvent) *a2a.Artifact {
	parts := a2a.ContentParts{a2a.TextPart{Text: res.GetText()}}
	if out := res.GetOutput(); out != nil {
		if obj := out.GetStructValue(); obj != nil {
			parts = append(parts, a2a.DataPart{Data: obj.AsMap()})
		} else {
			parts = append(parts, a2a.DataPart{Data: map[string]any{"value": out.AsInterface()}})
		}
	}
	return &a2a.Artifact{ID: artifactResult, Name: artifactResult, Description: "the run's final answer", Parts: parts}
}

// permissionAnswer reads a message answering a permission request: a data
// part {"allow": bool, "reason": string, "toolCallId": string}, or a text
// that is allow, yes, deny or no (then the rest of it is the reason).
func permissionAnswer(msg *a2a.Message) (allow bool, reason, callID string, err error) {
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case a2a.DataPart:
			v, ok := p.Data["allow"].(bool)
			if !ok {
				continue
			}
			reason, _ = p.Data["reason"].(string)
			callID, _ = p.Data["toolCallId"].(string)
			return v, reason, callID, nil
		case a2a.TextPart:
			word, rest, _ := strings.Cut(strings.TrimSpace(p.Text), " ")
			switch strings.ToLower(strings.Trim(word, ".,!:")) {
			case "allow", "yes", "approve", "y":
				return true, "", "", nil
			case "deny", "no", "n", "reject":
				return false, strings.TrimSpace(rest), "", nil
			}
		}
	}
	return false, "", "", fmt.Errorf("%w: the task waits for a permission: answer with a data part {\"allow\": true|false} or the text allow or deny", a2a.ErrInvalidParams)
}
