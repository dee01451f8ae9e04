package mcp

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

func TestToolResult(t *testing.T) {
	cases := []struct {
		name string
		in   *sdk.CallToolResult
		want string
	}{
		{"no content", &sdk.CallToolResult{}, "text "},
		{"two texts stay apart", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, "content [text a | text b]"},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}}, `json {"n":1}`},
		{"structured with its own JSON text", &sdk.CallToolResult{
			Content: []sdk.Content{&sdk.TextContent{Text: "{ \"n\" : 1 }"}}, StructuredContent: map[string]any{"n": 1},
		}, `json {"n":1}`},
		{"structured beside other content", &sdk.CallToolResult{
			Content: []sdk.Content{&sdk.TextContent{Text: "the count"}}, StructuredContent: []int{1, 2},
		}, "content [text the count | text [1,2]]"},
		{"error without text", &sdk.CallToolResult{IsError: true}, "text  ERROR the MCP tool reported an error"},
		{"error with an image", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{
			&sdk.TextContent{Text: "bad"}, &sdk.ImageContent{Data: []byte{1}},
		}}, `content [text bad | file application/octet-stream "" 1 bytes] ERROR bad`},
		{"blob without a name", &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem:/", MIMEType: "image/gif", Blob: []byte{1, 2}}},
		}}, `content [file image/gif "" 2 bytes]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := toolResult(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if s := summary(got); s != c.want {
				t.Errorf("got  %q\nwant %q", s, c.want)
			}
		})
	}
}

func TestSinkRoutesStderrUntilDetached(t *testing.T) {
	var s sink
	var got []byte
	s.attach(context.Background(), "t", func(c *pluginv1.OutputChunk) {
		if c.Stream != pluginv1.OutputStream_OUTPUT_STREAM_STDERR {
			t.Errorf("stream %v", c.Stream)
		}
		got = append(got, c.Data...)
	})
	data := []byte("héllo ✓ \xff\n")
	for i := range data { // split inside runes: bytes pass through as they are
		buf := []byte{data[i]}
		if _, err := s.Write(buf); err != nil {
			t.Fatal(err)
		}
		buf[0] = 'X' // the sink must not keep the writer's buffer
	}
	if string(got) != string(data) {
		t.Errorf("got %q, want %q", got, data)
	}
	s.detach()
	if _, err := s.Write([]byte("later\n")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "later") {
		t.Error("output after detach was routed")
	}
	if tail := s.stderrTail(); !strings.HasSuffix(tail, "\uFFFD\nlater") {
		t.Errorf("tail %q: want the latest stderr, made valid UTF-8", tail)
	}
}

func TestProgressText(t *testing.T) {
	cases := []struct {
		in   sdk.ProgressNotificationParams
		want string
	}{
		{sdk.ProgressNotificationParams{Progress: 0.5}, "0.5\n"},
		{sdk.ProgressNotificationParams{Progress: 3, Total: 10, Message: " copying \n"}, "3/10 copying\n"},
	}
	for _, c := range cases {
		if got := progressText(&c.in); got != c.want {
			t.Errorf("progressText(%+v) = %q, want %q", c.in, got, c.want)
		}
	}
}
