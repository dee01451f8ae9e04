package gemini

import (
	"flag"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// TestGoldenRequest checks the request body, path and headers for one
// conversation with caching on (and reasoning sent back) and off.
func TestGoldenRequest(t *testing.T) {
	srv := fakemodel.StartTB(t)
	vendor := map[string]any{"thinkingConfig": map[string]any{"includeThoughts": true}, "safetySettings": []any{
		map[string]any{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_ONLY_HIGH"}}}
	tests := []struct {
		name   string
		cache  bool
		stream bool
		path   string
	}{
		{"request-cache-on", true, true, "/v1beta/models/gemini-golden:streamGenerateContent"},
		{"request-cache-off", false, false, "/v1beta/models/gemini-golden:generateContent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(adaptertest.GoldenConfig(srv.URL+"/v1beta", "gemini-golden", tt.cache, vendor))
			if err != nil {
				t.Fatal(err)
			}
			tm, _ := m.WithTools(adaptertest.Tools())
			srv.Push(fakemodel.Turn{Text: "ok"})
			adaptertest.Run(t, tm, tt.stream, adaptertest.Conversation())
			reqs := srv.Requests()
			req := reqs[len(reqs)-1]
			if req.Path != tt.path || req.Stream != tt.stream || (tt.stream && req.Query.Get("alt") != "sse") {
				t.Errorf("path %s?%s stream %v", req.Path, req.Query.Encode(), req.Stream)
			}
			for k, v := range map[string]string{"X-Goog-Api-Key": "test-key", "X-App": "example", "Content-Type": "application/json"} {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			adaptertest.Golden(t, tt.name, req.Body, *update)
		})
	}
}
