package chat

import (
	"flag"
	"testing"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/internal/goldentest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies")

// TestGoldenRequests sends one conversation with every kind of message and
// compares the request body with testdata/*.golden.json.
func TestGoldenRequests(t *testing.T) {
	temp, topP, maxOut, seed, pres := 0.2, 0.9, 512, int64(7), 0.1
	tests := []struct {
		name   string
		cfg    provider.Config
		stream bool
	}{
		{
			name: "cache-on", stream: true,
			cfg: provider.Config{SendReasoning: true,
				Cache: provider.Cache{Enabled: true, Key: "agent:conversation-1", Retention: "24h", Body: map[string]any{"cache_namespace": "agent"}}},
		},
		{
			name: "cache-off",
			cfg:  provider.Config{Cache: provider.Cache{Enabled: false, Key: "agent:conversation-1", Retention: "24h", Body: map[string]any{"cache_namespace": "agent"}}},
		},
		{
			name: "provider-body", stream: true,
			cfg: provider.Config{
				Params:     provider.Params{Temperature: &temp, TopP: &topP, MaxOutputTokens: &maxOut, Stop: []string{"END"}, Seed: &seed, PresencePenalty: &pres},
				ToolChoice: "required",
				Output:     &provider.Output{Kind: provider.OutputObject, Name: "answer card", Schema: map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}}},
				VendorOptions: map[string]any{"reasoningEffort": "low", "parallelToolCalls": false, "textVerbosity": "low",
					"strictJsonSchema": true, "systemMessageMode": "developer", "forceReasoning": true},
				Headers: map[string]string{"X-App": "example"},
				Body:    map[string]any{"custom_field": true, "temperature": 0.7},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(fakemodel.Turn{Text: "ok"})
			cfg := tt.cfg
			cfg.BaseURL, cfg.APIKey, cfg.Model = srv.URL+"/v1/", "sk-secret", "gpt-test"
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tm, _ := m.WithTools(goldentest.Tools())
			adaptertest.Run(t, tm, tt.stream, goldentest.Conversation())
			req := srv.Requests()[0]
			if req.Path != "/v1/chat/completions" {
				t.Errorf("path %s", req.Path)
			}
			if got := req.Header.Get("Authorization"); got != "Bearer sk-secret" {
				t.Errorf("Authorization = %q", got)
			}
			for k, v := range cfg.Headers {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			adaptertest.Golden(t, "request-"+tt.name, req.Body, *update)
		})
	}
}
