package llm

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Helpers that build history the way the engine stores it.

func text(s string) *agentv1.Part { return &agentv1.Part{Kind: &agentv1.Part_Text{Text: s}} }

func userMsg(parts ...*agentv1.Part) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_USER, Parts: parts}
}

func assistantMsg(parts ...*agentv1.Part) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_ASSISTANT, Parts: parts}
}

func toolMsg(parts ...*agentv1.Part) *agentv1.Message {
	return &agentv1.Message{Role: agentv1.Role_ROLE_TOOL, Parts: parts}
}

func call(id, name, args string) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_ToolCall{ToolCall: &agentv1.ToolCallPart{Id: id, Name: name, Arguments: args}}}
}

func resultText(id, name, s string) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_ToolResult{ToolResult: &agentv1.ToolResultPart{
		ToolCallId: id, ToolName: name, Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Text{Text: s}}}}}
}

func resultParts(id, name string, parts ...*agentv1.Part) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_ToolResult{ToolResult: &agentv1.ToolResultPart{
		ToolCallId: id, ToolName: name, Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Content{Content: &agentv1.ContentParts{Parts: parts}}}}}}
}

func imageURL(u string) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_Image{Image: &agentv1.FilePart{Source: &agentv1.FilePart_Url{Url: u}}}}
}

func fileData(mt string, data []byte) *agentv1.Part {
	return &agentv1.Part{Kind: &agentv1.Part_File{File: &agentv1.FilePart{MediaType: mt, Source: &agentv1.FilePart_Data{Data: data}}}}
}

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func allCaps() Capabilities {
	return DefaultConfig().Capabilities
}

func TestConvertSystem(t *testing.T) {
	history := []*agentv1.Message{
		{Role: agentv1.Role_ROLE_SYSTEM, Parts: []*agentv1.Part{text("notice one")}},
		{Role: agentv1.Role_ROLE_ASSISTANT, Compact: true, Parts: []*agentv1.Part{text("we did X")}},
		userMsg(text("hi")),
		{Role: agentv1.Role_ROLE_SYSTEM, Parts: []*agentv1.Part{text("later notice")}},
	}
	cv := &converter{caps: allCaps(), fallback: MediaFallbackError}
	got, err := cv.convert("be brief", history)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Role != schema.System || got[1].Role != schema.User || got[2].Role != schema.User {
		t.Fatalf("roles = %v", roles(got))
	}
	sys := got[0].Content
	for _, want := range []string{"be brief", summaryPreamble + "\nwe did X", "notice one"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system %q lacks %q", sys, want)
		}
	}
	if got[2].Content != "[system notice]\nlater notice" {
		t.Errorf("later notice = %q", got[2].Content)
	}

	none, err := cv.convert("", []*agentv1.Message{userMsg(text("hi"))})
	if err != nil || len(none) != 1 || none[0].Role != schema.User {
		t.Fatalf("no system: %v %v", roles(none), err)
	}
}

func TestConvertUserMedia(t *testing.T) {
	tests := []struct {
		name     string
		part     *agentv1.Part
		mime     string
		wantURL  string
		wantData bool
	}{
		{"legacy image by data URL", imageURL("data:image/png;base64,iVBORw0KGgo="), "image/png", "", true},
		{"legacy image by URL with extension", imageURL("https://x/cat.JPG"), "image/jpeg", "https://x/cat.JPG", false},
		{"legacy image by URL without extension", imageURL("https://x/cat"), "image/*", "https://x/cat", false},
		{"file bytes sniffed", fileData("", pngBytes), "image/png", "", true},
		{"file bytes with type", fileData("application/pdf", []byte("%PDF-1.4")), "application/pdf", "", true},
		{"plain data URL", &agentv1.Part{Kind: &agentv1.Part_File{File: &agentv1.FilePart{Source: &agentv1.FilePart_Url{Url: "data:text/plain,hi%20there"}}}}, "text/plain", "", true},
		{"legacy audio with type", &agentv1.Part{Kind: &agentv1.Part_Audio{Audio: &agentv1.FilePart{MediaType: "audio/wav; codecs=1", Source: &agentv1.FilePart_Data{Data: []byte("RIFF....WAVE")}}}}, "audio/wav", "", true},
		{"legacy video by URL", &agentv1.Part{Kind: &agentv1.Part_Video{Video: &agentv1.FilePart{Source: &agentv1.FilePart_Url{Url: "https://x/a.mp4"}}}}, "video/mp4", "https://x/a.mp4", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cv := &converter{caps: allCaps(), fallback: MediaFallbackError}
			got, err := cv.convert("", []*agentv1.Message{userMsg(text("look"), tt.part)})
			if err != nil {
				t.Fatal(err)
			}
			parts := got[0].UserInputMultiContent
			if len(parts) != 2 || parts[0].Text != "look" || parts[1].Type != schema.ChatMessagePartTypeFileURL || parts[1].File == nil {
				t.Fatalf("parts = %+v", parts)
			}
			f := parts[1].File
			if f.MIMEType != tt.mime {
				t.Errorf("MIME = %q, want %q", f.MIMEType, tt.mime)
			}
			if tt.wantURL != "" && (f.URL == nil || *f.URL != tt.wantURL) {
				t.Errorf("URL = %v, want %q", f.URL, tt.wantURL)
			}
			if tt.wantData != (f.Base64Data != nil) {
				t.Errorf("base64 data = %v, want %v", f.Base64Data, tt.wantData)
			}
			if f.Base64Data != nil && f.URL != nil {
				t.Error("both URL and data set")
			}
		})
	}
}

func TestConvertCapabilities(t *testing.T) {
	history := []*agentv1.Message{
		userMsg(text("see"), imageURL("https://x/a.png"), fileData("application/pdf", []byte("%PDF"))),
		assistantMsg(call("c1", "shot", "{}")),
		toolMsg(resultParts("c1", "shot", text("screen:"), fileData("image/png", pngBytes))),
		userMsg(imageURL("https://x/b.png")),
	}
	noImage := allCaps()
	noImage.Image = false

	t.Run("error names the part and the switch", func(t *testing.T) {
		cv := &converter{caps: noImage, fallback: MediaFallbackError}
		_, err := cv.convert("", history)
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindRequest || pe.Code != "unsupported_media" || pe.Retryable {
			t.Fatalf("err = %#v", err)
		}
		for _, want := range []string{"message 0 part 1", "capabilities.image", "strip"} {
			if !strings.Contains(pe.Message, want) {
				t.Errorf("message %q lacks %q", pe.Message, want)
			}
		}
	})
	t.Run("strip keeps text and other media", func(t *testing.T) {
		cv := &converter{caps: noImage, fallback: MediaFallbackStrip}
		before := make([]*agentv1.Message, len(history))
		for i, m := range history {
			before[i] = proto.Clone(m).(*agentv1.Message)
		}
		got, err := cv.convert("", history)
		for i := range history {
			if !proto.Equal(before[i], history[i]) {
				t.Errorf("converting changed history message %d", i)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if r := roles(got); strings.Join(r, ",") != "user,assistant,tool,user" {
			t.Fatalf("roles = %v", r)
		}
		first := got[0].UserInputMultiContent
		if len(first) != 2 || first[0].Text != "see" || first[1].File.MIMEType != "application/pdf" {
			t.Errorf("first user = %+v", first)
		}
		if got[2].Content != "screen:\n"+strippedNote || len(got[2].UserInputMultiContent) != 0 {
			t.Errorf("tool result = %q %+v", got[2].Content, got[2].UserInputMultiContent)
		}
		if got[3].Content != strippedNote {
			t.Errorf("emptied user message = %q", got[3].Content)
		}
	})
	t.Run("file switch governs other files", func(t *testing.T) {
		noFile := allCaps()
		noFile.File = false
		cv := &converter{caps: noFile, fallback: MediaFallbackError}
		_, err := cv.convert("", history[:1])
		if err == nil || !strings.Contains(err.Error(), "capabilities.file") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestConvertAssistantAndTools(t *testing.T) {
	reasoning := &agentv1.Part{Kind: &agentv1.Part_Reasoning{Reasoning: &agentv1.ReasoningPart{Text: "think", ProviderData: map[string]string{"signature": "sig"}}}}
	gemCall := call("c1", "add", `{"a":1}`)
	gemCall.GetToolCall().ProviderData = map[string]string{"thought_signature": "ts"}
	history := []*agentv1.Message{
		userMsg(text("add")),
		assistantMsg(reasoning, text("adding"), gemCall, call("c2", "lost", "{}")),
		toolMsg(resultText("c1", "add", "2"), resultText("c9", "orphan", "?")),
		assistantMsg(reasoning),
		assistantMsg(call("c3", "data", "{}")),
		toolMsg(&agentv1.Part{Kind: &agentv1.Part_ToolResult{ToolResult: &agentv1.ToolResultPart{ToolCallId: "c3", ToolName: "data", Error: true,
			Output: &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Json{Json: `{"n":1}`}}}}}),
		assistantMsg(call("c4", "shot", "{}")),
		toolMsg(resultParts("c4", "shot", text("here"), fileData("image/png", pngBytes))),
	}
	for _, sendReasoning := range []bool{false, true} {
		caps := allCaps()
		caps.Reasoning = sendReasoning
		cv := &converter{caps: caps, fallback: MediaFallbackError}
		got, err := cv.convert("", history)
		if err != nil {
			t.Fatal(err)
		}
		want := "user,assistant,tool,assistant,tool,assistant,tool"
		if sendReasoning {
			want = "user,assistant,tool,assistant,assistant,tool,assistant,tool"
		}
		if r := strings.Join(roles(got), ","); r != want {
			t.Fatalf("reasoning %v: roles = %s, want %s", sendReasoning, r, want)
		}
		a := got[1]
		if a.Content != "adding" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "c1" || a.ToolCalls[0].Function.Arguments != `{"a":1}` {
			t.Errorf("assistant = %+v", a)
		}
		if d := provider.StringMap(a.ToolCalls[0].Extra[provider.ExtraToolCallData]); d["thought_signature"] != "ts" {
			t.Errorf("tool call data = %v", a.ToolCalls[0].Extra)
		}
		if sendReasoning {
			if a.ReasoningContent != "think" || provider.StringMap(a.Extra[provider.ExtraReasoningData])["signature"] != "sig" {
				t.Errorf("reasoning not sent: %q %v", a.ReasoningContent, a.Extra)
			}
		} else if a.ReasoningContent != "" || a.Extra != nil {
			t.Errorf("reasoning sent with capabilities.reasoning false: %q %v", a.ReasoningContent, a.Extra)
		}
		tool := got[2]
		if tool.ToolCallID != "c1" || tool.ToolName != "add" || tool.Content != "2" {
			t.Errorf("tool result = %+v", tool)
		}
		last := got[len(got)-1]
		if last.Role != schema.Tool || len(last.UserInputMultiContent) != 2 || last.UserInputMultiContent[0].Text != "here" || last.UserInputMultiContent[1].File.MIMEType != "image/png" {
			t.Errorf("content tool result = %+v", last)
		}
		jsonResult := got[len(got)-3]
		if jsonResult.Content != `{"n":1}` {
			t.Errorf("json tool result = %q", jsonResult.Content)
		}
		if failed, _ := jsonResult.Extra[provider.ExtraToolError].(bool); !failed {
			t.Errorf("failed tool result not marked: %v", jsonResult.Extra)
		}
		if tool.Extra[provider.ExtraToolError] != nil {
			t.Errorf("successful tool result marked failed: %v", tool.Extra)
		}
	}
}

func TestConvertTextMode(t *testing.T) {
	history := []*agentv1.Message{
		userMsg(text("add")),
		assistantMsg(text("sure"), call("c1", "add", `{"a":1,"b":2}`)),
		toolMsg(resultText("c1", "add", "3")),
		assistantMsg(call("c2", "shot", "{}")),
		toolMsg(resultParts("c2", "shot", text("screen"), fileData("image/png", pngBytes))),
		userMsg(text("go on")),
	}
	tools := []Tool{{Name: "add", Description: "adds"}, {Name: "shot"}}
	cv := &converter{caps: allCaps(), fallback: MediaFallbackError, text: true, tools: tools}
	got, err := cv.convert("be brief", history)
	if err != nil {
		t.Fatal(err)
	}
	if r := strings.Join(roles(got), ","); r != "system,user,assistant,user,assistant,user" {
		t.Fatalf("roles = %s", r)
	}
	if !strings.HasPrefix(got[0].Content, "be brief\n\n# Tools") || !strings.Contains(got[0].Content, "## add") {
		t.Errorf("system = %q", got[0].Content)
	}
	for _, m := range got {
		if len(m.ToolCalls) > 0 || m.Role == schema.Tool {
			t.Fatalf("native tool shape in text mode: %+v", m)
		}
	}
	if !strings.HasPrefix(got[2].Content, "sure\n\n<tool_call>\n") || !strings.Contains(got[2].Content, `{"name":"add","arguments":{"a":1,"b":2}}`) {
		t.Errorf("assistant = %q", got[2].Content)
	}
	if got[3].Content != "<tool_result name=\"add\">\n3\n</tool_result>" {
		t.Errorf("tool result = %q", got[3].Content)
	}
	merged := got[5].UserInputMultiContent
	if len(merged) != 3 || merged[0].Text != "<tool_result name=\"shot\">\nscreen\n</tool_result>" || merged[1].File == nil || merged[2].Text != "go on" {
		t.Errorf("merged user = %+v", merged)
	}
}

func TestConvertInvalidHistory(t *testing.T) {
	tests := []struct {
		name    string
		history []*agentv1.Message
		where   string
	}{
		{"tool call in a user message", []*agentv1.Message{userMsg(text("x"), call("c", "n", "{}"))}, "message 0 part 1"},
		{"text in a tool message", []*agentv1.Message{userMsg(text("x")), toolMsg(text("y"))}, "message 1 part 0"},
		{"tool call without id", []*agentv1.Message{assistantMsg(call("", "n", "{}"))}, "message 0 part 0"},
		{"unknown role", []*agentv1.Message{{Role: agentv1.Role_ROLE_UNSPECIFIED}}, "message 0"},
		{"file without source", []*agentv1.Message{userMsg(&agentv1.Part{Kind: &agentv1.Part_File{File: &agentv1.FilePart{}}})}, "message 0 part 0"},
		{"bad base64 data URL", []*agentv1.Message{userMsg(imageURL("data:image/png;base64,!!!"))}, "message 0 part 0"},
	}
	for _, tt := range tests {
		cv := &converter{caps: allCaps(), fallback: MediaFallbackError}
		_, err := cv.convert("", tt.history)
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindRequest || !strings.Contains(pe.Message, tt.where) {
			t.Errorf("%s: err = %v, want a request error at %s", tt.name, err, tt.where)
		}
	}
}

func roles(msgs []*schema.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role)
	}
	return out
}
