package llm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestResolveFallback(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		f    *agentv1.FallbackConfig
		want string // a field the error names; "" for none
	}{
		{"profile only", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{Profile: s("backup")}}}, ""},
		{"model on the main endpoint", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{Model: s("small")}}}, ""},
		{"endpoint of its own", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{BaseUrl: s("http://b.test/v1"), Model: s("m"), Protocol: agentv1.Protocol_PROTOCOL_ANTHROPIC}},
			On: []agentv1.ErrorKind{agentv1.ErrorKind_ERROR_KIND_REQUEST}}, ""},
		{"base url without a model", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{BaseUrl: s("http://b.test/v1")}}}, "config.fallback.models[0].model"},
		{"nothing named", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{Profile: s("a")}, {}}}, "config.fallback.models[1]"},
		{"bad base url", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{BaseUrl: s("b.test"), Model: s("m")}}}, "config.fallback.models[0].base_url"},
		{"aborted", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{Model: s("m")}}, On: []agentv1.ErrorKind{agentv1.ErrorKind_ERROR_KIND_ABORTED}}, "config.fallback.on[0]"},
		{"unspecified", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{Model: s("m")}}, On: []agentv1.ErrorKind{0}}, "config.fallback.on[0]"},
		{"unknown kind", &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{Model: s("m")}}, On: []agentv1.ErrorKind{99}}, "config.fallback.on[0]"},
		{"kinds without models", &agentv1.FallbackConfig{On: []agentv1.ErrorKind{agentv1.ErrorKind_ERROR_KIND_SERVER}}, "config.fallback.models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResolveConfig(&agentv1.AgentConfig{Fallback: tt.f})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.want+":") {
				t.Fatalf("err = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

func TestFallbackConfigKeepsKeysToTheirEndpoints(t *testing.T) {
	main := DefaultConfig()
	main.BaseURL, main.APIKey, main.Model, main.Protocol = "http://main.test/v1", "main-key", "big", provider.ProtocolResponses
	main.Provider = ProviderOptions{ToolChoice: "auto", Headers: map[string]string{"X-Gateway": "g"}, Body: map[string]any{"store": false},
		VendorOptions: map[string]map[string]any{"openai": {"reasoningEffort": "low"}}}
	main.Cache.Body = map[string]any{"prompt_cache_key": "k"}
	own := &ProviderOptions{ToolChoice: "none"}
	main.Fallback = &FallbackConfig{Models: []FallbackModel{
		{Model: "small"},
		{BaseURL: "http://other.test", Model: "claude", Protocol: provider.ProtocolAnthropic},
		{Profile: "backup", BaseURL: "http://backup.test", APIKey: "backup-key", Model: "b", Provider: own},
	}}
	same := main.FallbackConfig(0)
	if same.BaseURL != main.BaseURL || same.APIKey != "main-key" || same.Model != "small" || same.Protocol != provider.ProtocolResponses ||
		same.Provider.Headers["X-Gateway"] != "g" || same.Fallback != nil {
		t.Errorf("a fallback on the main endpoint = %+v", same)
	}
	other := main.FallbackConfig(1)
	if other.APIKey != "" || other.BaseURL != "http://other.test" || other.Protocol != provider.ProtocolAnthropic || other.Model != "claude" {
		t.Errorf("a fallback with an endpoint of its own = %+v; it must not get the main key", other)
	}
	if other.Provider.Headers != nil || other.Provider.Body != nil || other.Cache.Body != nil ||
		other.Provider.ToolChoice != "auto" || other.Provider.VendorOptions["openai"] == nil {
		t.Errorf("a fallback with an endpoint of its own: provider %+v, cache body %v", other.Provider, other.Cache.Body)
	}
	backup := main.FallbackConfig(2)
	if backup.APIKey != "backup-key" || backup.Profile != "backup" || backup.Protocol != provider.ProtocolChat || backup.Provider.ToolChoice != "none" {
		t.Errorf("a profile's fallback = %+v", backup)
	}
	if main.Model != "big" || main.APIKey != "main-key" {
		t.Errorf("the main config changed: %+v", main)
	}
}

func TestFallsBack(t *testing.T) {
	models := []FallbackModel{{Model: "small"}}
	server := &Error{Kind: KindServer, Status: 503}
	tests := []struct {
		name string
		f    *FallbackConfig
		err  error
		want bool
	}{
		{"default kinds: server", &FallbackConfig{Models: models}, server, true},
		{"default kinds: wrapped", &FallbackConfig{Models: models}, fmt.Errorf("round: %w", server), true},
		{"default kinds: auth", &FallbackConfig{Models: models}, &Error{Kind: KindAuth}, false},
		{"default kinds: request", &FallbackConfig{Models: models}, &Error{Kind: KindRequest}, false},
		{"named kinds only", &FallbackConfig{Models: models, On: []Kind{KindLimit}}, server, false},
		{"named kind", &FallbackConfig{Models: models, On: []Kind{KindLimit}}, &Error{Kind: KindLimit}, true},
		{"aborted never", &FallbackConfig{Models: models, On: []Kind{KindAborted}}, &Error{Kind: KindAborted}, false},
		{"not a model error", &FallbackConfig{Models: models}, &ConfigError{}, false},
		{"an answer that failed its schema", &FallbackConfig{Models: models, On: []Kind{KindUnknown}}, invalidOutput("no"), false},
		{"no models", &FallbackConfig{}, server, false},
		{"no config", nil, server, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := tt.f.FallsBack(tt.err); got != tt.want {
				t.Errorf("FallsBack = %v, want %v", got, tt.want)
			}
		})
	}
}

// A history written by one protocol goes out in another without the
// first one's reasoning and provider data.
func TestConvertDropsAnotherProtocolsData(t *testing.T) {
	signed := &agentv1.Part{Kind: &agentv1.Part_Reasoning{Reasoning: &agentv1.ReasoningPart{Text: "claude thinks",
		ProviderData: map[string]string{"anthropic.thinking": `[{"signature":"s","length":13}]`}}}}
	plain := &agentv1.Part{Kind: &agentv1.Part_Reasoning{Reasoning: &agentv1.ReasoningPart{Text: "deepseek thinks"}}}
	gemCall := call("c1", "add", `{"a":1}`)
	gemCall.GetToolCall().ProviderData = map[string]string{"gemini.thought_signature": "ts", "openai.type": "custom"}
	history := []*agentv1.Message{
		userMsg(text("add")),
		assistantMsg(signed, gemCall),
		toolMsg(resultText("c1", "add", "2")),
		assistantMsg(plain, text("done")),
	}
	caps := allCaps()
	caps.Reasoning = true
	tests := []struct {
		protocol        provider.Protocol
		first, last     string // the reasoning sent in each assistant message
		callKeys        string
		reasoningSigned bool
	}{
		{provider.ProtocolAnthropic, "claude thinks", "deepseek thinks", "", true},
		{provider.ProtocolChat, "", "deepseek thinks", "openai.type", false},
		{provider.ProtocolGemini, "", "deepseek thinks", "gemini.thought_signature", false},
		{"", "claude thinks", "deepseek thinks", "gemini.thought_signature,openai.type", true},
	}
	for _, tt := range tests {
		t.Run(string(tt.protocol), func(t *testing.T) {
			got, err := (&converter{caps: caps, fallback: MediaFallbackError, protocol: tt.protocol}).convert("", history)
			if err != nil {
				t.Fatal(err)
			}
			if r := strings.Join(roles(got), ","); r != "user,assistant,tool,assistant" {
				t.Fatalf("roles = %s", r)
			}
			a, last := got[1], got[3]
			if a.ReasoningContent != tt.first || last.ReasoningContent != tt.last {
				t.Errorf("reasoning sent = %q, %q; want %q, %q", a.ReasoningContent, last.ReasoningContent, tt.first, tt.last)
			}
			if _, signed := a.Extra[provider.ExtraReasoningData]; signed != tt.reasoningSigned {
				t.Errorf("reasoning data sent = %v, want %v", a.Extra, tt.reasoningSigned)
			}
			var keys []string
			for k := range provider.StringMap(a.ToolCalls[0].Extra[provider.ExtraToolCallData]) {
				keys = append(keys, k)
			}
			if strings.Join(slices.Sorted(slices.Values(keys)), ",") != tt.callKeys {
				t.Errorf("tool call data keys = %v, want %s", keys, tt.callKeys)
			}
			if gemCall.GetToolCall().GetProviderData()["gemini.thought_signature"] != "ts" {
				t.Error("the history's tool call data changed")
			}
		})
	}
}
