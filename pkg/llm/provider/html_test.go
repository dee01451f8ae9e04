package provider

import (
	"net/http"
	"strings"
	"testing"
)

// TestHTMLErrorBody checks that an HTML error page becomes its title, or
// its first line of visible text, never the whole markup.
func TestHTMLErrorBody(t *testing.T) {
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	tests := []struct {
		name   string
		header http.Header
		body   string
		want   string
	}{
		{"a title", html, "<!DOCTYPE html>\n<html><head><title>\n  501 Not Implemented\n</title><style>body{x:y}</style></head>" +
			"<body><h1>Not Implemented</h1><p>POST to /v1/chat/completions not supported</p></body></html>", "501 Not Implemented"},
		{"no title: the first text, scripts and styles skipped", nil, "<html><head><script>var a = 1;</script><style>p{}</style></head>" +
			"<body>\n\n  <h1>Bad Gateway</h1>\n<p>nginx</p></body></html>", "Bad Gateway"},
		{"entities", html, "<html><title>Error &amp; more</title></html>", "Error & more"},
		{"an empty title", html, "<html><title> </title><body>Service Unavailable</body></html>", "Service Unavailable"},
		{"JSON stays JSON", nil, `{"error":{"message":"model not found","type":"invalid_request_error"}}`, "model not found"},
		{"plain text stays", nil, "upstream connect error", "upstream connect error"},
		{"a page with no text", html, "<html><body></body></html>", "Not Implemented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := FromStatus(http.StatusNotImplemented, tt.header, []byte(tt.body))
			if e.Message != tt.want || strings.Contains(e.Message, "<") {
				t.Errorf("message %q, want %q", e.Message, tt.want)
			}
		})
	}
	long := "<title>" + strings.Repeat("é", 400) + "</title>"
	if m := FromStatus(502, html, []byte(long)).Message; len(m) > maxHTMLSummary+len("…") || !strings.HasSuffix(m, "…") {
		t.Errorf("a long title is kept whole or cut mid-rune: %d bytes", len(m))
	}
}
