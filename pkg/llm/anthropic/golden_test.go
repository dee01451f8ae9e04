package anthropic

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
	vendor := map[string]any{"metadata": map[string]any{"userId": "u-1"}}
	tests := []struct {
		name   string
		cache  bool
		stream bool
	}{
		{"request-cache-on", true, true},
		{"request-cache-off", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(adaptertest.GoldenConfig(srv.URL+"/v1", "claude-golden", tt.cache, vendor))
			if err != nil {
				t.Fatal(err)
			}
			tm, _ := m.WithTools(adaptertest.Tools())
			srv.Push(fakemodel.Turn{Text: "ok"})
			adaptertest.Run(t, tm, tt.stream, adaptertest.Conversation())
			reqs := srv.Requests()
			req := reqs[len(reqs)-1]
			if req.Path != "/v1/messages" || req.Stream != tt.stream {
				t.Errorf("path %s stream %v", req.Path, req.Stream)
			}
			for k, v := range map[string]string{"X-Api-Key": "test-key", "Anthropic-Version": APIVersion, "X-App": "example", "Content-Type": "application/json"} {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			adaptertest.Golden(t, tt.name, req.Body, *update)
		})
	}
}
