package mcp

import (
	"io"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestProgressBody(t *testing.T) {
	progress := func(token string, n int) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"` + token + `","progress":` + strings.Repeat("1", n) + `}}`
	}
	big := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", maxProgressEvent) + ` notifications/progress"}]}}`
	stream := "event: message\ndata: " + progress("a", 1) + "\n\n" +
		": a comment\r\ndata: " + progress("b", 2) + "\r\n\r\n" +
		"data: " + big + "\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"c\",\"progress\":3}}\n\n" +
		"data: " + progress("unfinished", 4) + "\n"
	cases := []struct {
		name  string
		chunk int
	}{
		{"one read", len(stream)},
		{"byte by byte", 1},
		{"odd chunks", 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			body := &progressBody{ReadCloser: io.NopCloser(&chunked{s: stream, n: c.chunk}), deliver: func(p *sdk.ProgressNotificationParams) {
				got = append(got, p.ProgressToken.(string)+progressText(p))
			}}
			data, err := io.ReadAll(body)
			if err != nil || string(data) != stream {
				t.Fatalf("the body was not passed through: %v", err)
			}
			if want := "a1\n b11\n c3\n"; strings.Join(got, " ") != want {
				t.Errorf("delivered %q, want %q", strings.Join(got, " "), want)
			}
		})
	}
}

// chunked reads s n bytes at a time.
type chunked struct {
	s string
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}
