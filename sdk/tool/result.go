package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// Result is a result with flags. Return it from a handler when a plain value
// is not enough.
type Result struct {
	// Output is the value handed to the model, converted like a plain return value.
	Output any
	// Stop ends the agent's loop after this round (reason tool-stop).
	Stop bool
	// Error marks the result as a failure that Output describes.
	Error bool
}

// Stop returns a result that ends the agent's loop, with output for the model.
func Stop(output any) Result { return Result{Output: output, Stop: true} }

// Part is one block of multimodal output. Build parts with [Text], [File],
// [FileURL] and [Image].
type Part struct {
	// Type is "text" or "file"; the legacy "image", "audio" and "video" (and
	// "file-data", "file-url") are accepted and sent as file parts.
	Type string
	// Text of a text part.
	Text string
	// MediaType of a file part, e.g. image/png. Legacy image, audio and video
	// parts may leave it empty when it can be told from the data or URL.
	MediaType string
	// Data holds the file's bytes; set exactly one of Data and URL.
	Data []byte
	// URL says where the file is (https, http or data URL).
	URL string
	// Filename is optional.
	Filename string
}

// Content is an ordered list of parts, returned as one result.
type Content []Part

// Text returns a text part.
func Text(s string) Part { return Part{Type: "text", Text: s} }

// File returns a file part holding data.
func File(mediaType string, data []byte, filename string) Part {
	return Part{Type: "file", MediaType: mediaType, Data: data, Filename: filename}
}

// FileURL returns a file part pointing at url.
func FileURL(mediaType, url string) Part { return Part{Type: "file", MediaType: mediaType, URL: url} }

// Image returns an image part holding data (e.g. a PNG).
func Image(mediaType string, data []byte) Part {
	return Part{Type: "file", MediaType: mediaType, Data: data}
}

// toResult turns what a handler returned into the protocol's result. It
// never fails: values that cannot be sent become error results.
func toResult(v any, err error) *pluginv1.ToolResult {
	if err != nil {
		return errorResult(err.Error())
	}
	stop, failed := false, false
	if r, ok := v.(Result); ok {
		v, stop, failed = r.Output, r.Stop, r.Error
	} else if r, ok := v.(*Result); ok && r != nil {
		v, stop, failed = r.Output, r.Stop, r.Error
	}
	res, cerr := convertOutput(v)
	if cerr != nil {
		return errorResult(cerr.Error())
	}
	res.Stop = stop
	if failed {
		res.Error = "the tool reported a failure"
	}
	return res
}

func errorResult(msg string) *pluginv1.ToolResult {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	if msg == "" {
		msg = "the tool failed"
	}
	return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: msg}, Error: msg}
}

// textResult returns a text result, the message and its oneof wrapper in
// one allocation.
func textResult(text string) *pluginv1.ToolResult {
	m := &struct {
		res  pluginv1.ToolResult
		text pluginv1.ToolResult_Text
	}{text: pluginv1.ToolResult_Text{Text: text}}
	m.res.Output = &m.text
	return &m.res
}

func convertOutput(v any) (*pluginv1.ToolResult, error) {
	switch v := v.(type) {
	case Result, *Result:
		return nil, errors.New("invalid result: a Result cannot hold another Result")
	case string:
		return textResult(strings.ToValidUTF8(v, "\uFFFD")), nil
	case json.RawMessage:
		if !json.Valid(v) {
			return nil, errors.New("invalid result: the tool returned json.RawMessage that is not valid JSON")
		}
		return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Json{Json: strings.ToValidUTF8(string(v), "\uFFFD")}}, nil
	case Part:
		return convertContent(Content{v})
	case Content:
		return convertContent(v)
	case []Part:
		return convertContent(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("invalid result: the value the tool returned (%T) cannot be serialised as JSON: %w", v, err)
	}
	return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Json{Json: string(b)}}, nil
}

func convertContent(parts []Part) (*pluginv1.ToolResult, error) {
	if len(parts) == 0 {
		return nil, errors.New("invalid result: content has no parts")
	}
	out := make([]*pluginv1.ContentPart, 0, len(parts))
	for i, p := range parts {
		cp, err := convertPart(p)
		if err != nil {
			return nil, fmt.Errorf("invalid result: content part %d: %w", i, err)
		}
		out = append(out, cp)
	}
	return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Content{Content: &pluginv1.ContentParts{Parts: out}}}, nil
}

func convertPart(p Part) (*pluginv1.ContentPart, error) {
	switch p.Type {
	case "text":
		if len(p.Data) > 0 || p.URL != "" {
			return nil, errors.New("a text part holds text only, not data or a URL")
		}
		return &pluginv1.ContentPart{Part: &pluginv1.ContentPart_Text{Text: strings.ToValidUTF8(p.Text, "\uFFFD")}}, nil
	case "file", "file-data", "file-url", "image", "audio", "video":
	default:
		return nil, fmt.Errorf("type %q is not allowed: a part is text or file (legacy image, audio and video become files)", p.Type)
	}
	switch {
	case len(p.Data) > 0 && p.URL != "":
		return nil, fmt.Errorf("%s part has both data and a URL; give one", p.Type)
	case len(p.Data) == 0 && p.URL == "":
		return nil, fmt.Errorf("%s part has neither data nor a URL", p.Type)
	case p.Type == "file-data" && p.URL != "":
		return nil, errors.New("file-data part has a URL instead of data")
	case p.Type == "file-url" && len(p.Data) > 0:
		return nil, errors.New("file-url part has data instead of a URL")
	}
	f := &pluginv1.FilePart{MediaType: p.MediaType, Filename: p.Filename}
	if p.URL != "" {
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "data") {
			return nil, fmt.Errorf("%s part URL %q is not an http(s) or data URL", p.Type, p.URL)
		}
		f.Source = &pluginv1.FilePart_Url{Url: p.URL}
	} else {
		f.Source = &pluginv1.FilePart_Data{Data: p.Data}
	}
	if f.MediaType == "" {
		f.MediaType = guessMediaType(p)
	}
	if f.MediaType == "" {
		return nil, fmt.Errorf("%s part has no media type and none can be told from its content", p.Type)
	}
	if _, _, err := mime.ParseMediaType(f.MediaType); err != nil {
		return nil, fmt.Errorf("%s part media type %q: %w", p.Type, f.MediaType, err)
	}
	return &pluginv1.ContentPart{Part: &pluginv1.ContentPart_File{File: f}}, nil
}

// guessMediaType tells the media type of a legacy image, audio or video part
// from its data or URL, or returns "".
func guessMediaType(p Part) string {
	kind := p.Type
	if kind != "image" && kind != "audio" && kind != "video" {
		return ""
	}
	var mt string
	if len(p.Data) > 0 {
		mt = http.DetectContentType(p.Data)
	} else if u, err := url.Parse(p.URL); err == nil && u.Scheme != "data" {
		mt = mime.TypeByExtension(path.Ext(u.Path))
	}
	mt, _, _ = strings.Cut(mt, ";")
	if !strings.HasPrefix(mt, kind+"/") {
		return ""
	}
	return mt
}

// capResult cuts a result to about limit bytes, as the host would (or
// refuse, past what its transport takes): file parts over it are replaced
// by a note, largest first, then text is cut from the middle. A limit of 0
// or less leaves the result as it is.
func capResult(r *pluginv1.ToolResult, limit int) *pluginv1.ToolResult {
	if limit <= 0 || proto.Size(r) <= limit {
		return r
	}
	switch v := r.GetOutput().(type) {
	case *pluginv1.ToolResult_Text:
		return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: cutMiddle(v.Text, limit)}, Stop: r.GetStop(), Error: cutMiddle(r.GetError(), limit/8)}
	case *pluginv1.ToolResult_Json:
		return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: cutMiddle(v.Json, limit)}, Stop: r.GetStop(), Error: r.GetError()}
	case *pluginv1.ToolResult_Content:
		parts := v.Content.GetParts()
		for proto.Size(r) > limit {
			big, size := -1, 0
			for i, p := range parts {
				if p.GetFile() != nil && proto.Size(p) > size {
					big, size = i, proto.Size(p)
				}
			}
			if big < 0 {
				break
			}
			parts[big] = &pluginv1.ContentPart{Part: &pluginv1.ContentPart_Text{Text: fmt.Sprintf(
				"[%s file of %d bytes left out: the result was larger than the %d bytes the host takes]", parts[big].GetFile().GetMediaType(), size, limit)}}
		}
		if over := proto.Size(r) - limit; over > 0 {
			total := 0
			for _, p := range parts {
				total += len(p.GetText())
			}
			for _, p := range parts {
				if t, ok := p.GetPart().(*pluginv1.ContentPart_Text); ok && total > 0 {
					t.Text = cutMiddle(t.Text, max(len(t.Text)-over*len(t.Text)/total-1, 1))
				}
			}
		}
	}
	return r
}

// cutMiddle cuts s to about limit bytes from the middle, at UTF-8
// boundaries, with a notice in place of the cut.
func cutMiddle(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	notice := fmt.Sprintf("\n\n[… %d of %d bytes cut from the middle by the tool: the result was larger than the host takes. "+
		"Narrow the request or fetch the rest in pages.]\n\n", len(s)-limit, len(s))
	limit = max(limit-len(notice), 0)
	head, ti := limit-limit/2, len(s)-limit/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for ti < len(s) && !utf8.RuneStart(s[ti]) {
		ti++
	}
	return s[:head] + notice + s[ti:]
}
