package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// unknownMediaType is the media type of a file part whose server gave none.
const unknownMediaType = "application/octet-stream"

// errorResult is a failed call whose output is the message.
func errorResult(msg string) *pluginv1.ToolResult {
	return &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: msg}, Error: msg}
}

// toolResult maps a tools/call result. Content becomes content parts;
// structured content becomes the JSON output when the content is empty or is
// only its JSON text (what servers send for older clients), and is added as a
// text part otherwise; isError becomes an error result whose message is the
// content's text.
func toolResult(r *sdk.CallToolResult) (*pluginv1.ToolResult, error) {
	out := &pluginv1.ToolResult{}
	parts := contentParts(r.Content)
	if r.StructuredContent != nil {
		structured, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("structured content: %w", err)
		}
		if len(parts) == 0 || sameJSON(parts, structured) {
			out.Output = &pluginv1.ToolResult_Json{Json: string(structured)}
		} else {
			parts = append(parts, textPart(string(structured)))
		}
	}
	if out.Output == nil {
		setOutput(out, parts)
	}
	if r.IsError {
		out.Error = strings.TrimSpace(joinText(parts, "\n"))
		if out.Error == "" {
			out.Error = "the MCP tool reported an error"
		}
	}
	return out, nil
}

// sameJSON reports whether parts is one text part holding the JSON value data.
func sameJSON(parts []*pluginv1.ContentPart, data []byte) bool {
	if len(parts) != 1 || parts[0].GetFile() != nil {
		return false
	}
	var a, b any
	if json.Unmarshal([]byte(parts[0].GetText()), &a) != nil || json.Unmarshal(data, &b) != nil {
		return false
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// promptResult renders a prompt's messages as text, each led by its role
// ("user: ...", "assistant: ..."), keeping images and other files as file parts.
func promptResult(r *sdk.GetPromptResult) *pluginv1.ToolResult {
	var parts []*pluginv1.ContentPart
	for _, m := range r.Messages {
		label := string(m.Role) + ":"
		content := contentParts([]sdk.Content{m.Content})
		if len(content) == 1 && content[0].GetFile() == nil {
			parts = append(parts, textPart(label+" "+content[0].GetText()))
			continue
		}
		parts = append(parts, textPart(label))
		parts = append(parts, content...)
	}
	out := &pluginv1.ToolResult{}
	setOutput(out, mergeText(parts, "\n\n"))
	return out
}

// resourceResult maps what resources/read returned.
func resourceResult(r *sdk.ReadResourceResult) *pluginv1.ToolResult {
	parts := make([]*pluginv1.ContentPart, 0, len(r.Contents))
	for _, c := range r.Contents {
		if c != nil {
			parts = append(parts, resourcePart(c))
		}
	}
	out := &pluginv1.ToolResult{}
	setOutput(out, parts)
	return out
}

// setOutput sets r's output to parts; a single text part becomes plain text.
func setOutput(r *pluginv1.ToolResult, parts []*pluginv1.ContentPart) {
	switch {
	case len(parts) == 0:
		r.Output = &pluginv1.ToolResult_Text{}
	case len(parts) == 1 && parts[0].GetFile() == nil:
		r.Output = &pluginv1.ToolResult_Text{Text: parts[0].GetText()}
	default:
		r.Output = &pluginv1.ToolResult_Content{Content: &pluginv1.ContentParts{Parts: parts}}
	}
}

// contentParts maps MCP content: text, images, audio and embedded resources;
// a resource link becomes a line of text naming it.
func contentParts(contents []sdk.Content) []*pluginv1.ContentPart {
	parts := make([]*pluginv1.ContentPart, 0, len(contents))
	for _, c := range contents {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, textPart(c.Text))
		case *sdk.ImageContent:
			parts = append(parts, filePart(c.MIMEType, c.Data, ""))
		case *sdk.AudioContent:
			parts = append(parts, filePart(c.MIMEType, c.Data, ""))
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				parts = append(parts, resourcePart(c.Resource))
			}
		case *sdk.ResourceLink:
			parts = append(parts, textPart("resource: "+describeResource(c.URI, c.Name, c.Title, c.Description, c.MIMEType)))
		case nil:
		default:
			// Content kinds a tool result may not hold (sampling tool use): keep them readable.
			if data, err := c.MarshalJSON(); err == nil {
				parts = append(parts, textPart(string(data)))
			}
		}
	}
	return parts
}

// resourcePart is a resource's text, or its blob as a file part.
func resourcePart(c *sdk.ResourceContents) *pluginv1.ContentPart {
	if c.Blob != nil {
		return filePart(c.MIMEType, c.Blob, fileName(c.URI))
	}
	return textPart(c.Text)
}

// fileName is the last segment of a resource URI ("test://dir/logo.png" →
// "logo.png"), or "" when it ends with a slash.
func fileName(uri string) string {
	uri, _, _ = strings.Cut(uri, "#")
	uri, _, _ = strings.Cut(uri, "?")
	return uri[strings.LastIndexAny(uri, "/:")+1:]
}

func textPart(text string) *pluginv1.ContentPart {
	return &pluginv1.ContentPart{Part: &pluginv1.ContentPart_Text{Text: text}}
}

func filePart(mediaType string, data []byte, filename string) *pluginv1.ContentPart {
	if mediaType == "" {
		mediaType = unknownMediaType
	}
	return &pluginv1.ContentPart{Part: &pluginv1.ContentPart_File{File: &pluginv1.FilePart{
		MediaType: mediaType,
		Source:    &pluginv1.FilePart_Data{Data: data},
		Filename:  filename,
	}}}
}

// joinText joins the text of the text parts.
func joinText(parts []*pluginv1.ContentPart, sep string) string {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.GetFile() == nil {
			texts = append(texts, p.GetText())
		}
	}
	return strings.Join(texts, sep)
}

// mergeText joins each run of adjacent text parts into one, with sep between them.
func mergeText(parts []*pluginv1.ContentPart, sep string) []*pluginv1.ContentPart {
	var out []*pluginv1.ContentPart
	var run []*pluginv1.ContentPart
	flush := func() {
		if len(run) > 0 {
			out = append(out, textPart(joinText(run, sep)))
			run = nil
		}
	}
	for _, p := range parts {
		if p.GetFile() != nil {
			flush()
			out = append(out, p)
			continue
		}
		run = append(run, p)
	}
	flush()
	return out
}
