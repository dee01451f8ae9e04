package profile

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestFallbackExpansion: a fallback naming a profile gets its endpoint and
// key, the main profile's fallbacks apply unless the config lists its own,
// a tenant gets only the profile fallbacks it may use, and no fallback
// sends a profile's key elsewhere than to that profile's endpoints.
func TestFallbackExpansion(t *testing.T) {
	s := proto.String
	fb := func(ms ...*agentv1.FallbackModel) *agentv1.FallbackConfig { return &agentv1.FallbackConfig{Models: ms} }
	cfg := &config.Config{Profiles: map[string]*config.Profile{
		"main": {Name: "main", BaseURL: "https://api.example.com/v1", Model: "big", APIKey: "sk-main",
			Fallback: fb(&agentv1.FallbackModel{Profile: s("claude")}, &agentv1.FallbackModel{Profile: s("closed")})},
		"claude": {Name: "claude", BaseURL: "https://claude.example.com/v1", Model: "opus", APIKey: "sk-claude",
			Protocol: agentv1.Protocol_PROTOCOL_ANTHROPIC, AllowedBaseURLs: []string{"https://eu.claude.example.com/v1"}},
		"closed": {Name: "closed", BaseURL: "https://closed.example.com/v1", Model: "c", APIKey: "sk-closed"},
	}}
	tenant := &auth.Tenant{ID: "t", Profiles: []string{"main", "claude"}}
	p := New(cfg, func(string) (*auth.Tenant, bool) { return tenant, true })
	tests := []struct {
		name string
		c    *agentv1.AgentConfig
		want string // "profile/host/key/model" of each fallback, or the fields refused
	}{
		{"the profile's fallbacks, those the tenant may use", &agentv1.AgentConfig{Profile: s("main")},
			"claude/claude.example.com/sk-claude/opus"},
		{"the config's own", &agentv1.AgentConfig{Profile: s("main"), Fallback: fb(&agentv1.FallbackModel{Model: s("small")})},
			"/main-endpoint/main-key/small"},
		{"a profile the tenant may not use", &agentv1.AgentConfig{Profile: s("main"), Fallback: fb(&agentv1.FallbackModel{Profile: s("closed")})},
			"refused config.fallback.models[0].profile"},
		{"a profile's key at an allowed endpoint", &agentv1.AgentConfig{Profile: s("main"),
			Fallback: fb(&agentv1.FallbackModel{Profile: s("claude"), BaseUrl: s("https://eu.claude.example.com/v1"), Model: s("haiku")})},
			"claude/eu.claude.example.com/sk-claude/haiku"},
		{"a profile's key sent elsewhere", &agentv1.AgentConfig{Profile: s("main"),
			Fallback: fb(&agentv1.FallbackModel{Profile: s("claude"), BaseUrl: s("https://evil.example/v1")})},
			"refused config.fallback.models[0].base_url"},
		{"a profile's key with credential headers", &agentv1.AgentConfig{Profile: s("main"),
			Fallback: fb(&agentv1.FallbackModel{Profile: s("claude"), Provider: &agentv1.ProviderOptions{Headers: map[string]string{"x-api-key": "x"}}})},
			"refused config.fallback.models[0].provider.headers"},
		{"the main key with credential headers", &agentv1.AgentConfig{Profile: s("main"),
			Fallback: fb(&agentv1.FallbackModel{Model: s("small"), Provider: &agentv1.ProviderOptions{Headers: map[string]string{"Authorization": "x"}}})},
			"refused config.fallback.models[0].provider.headers"},
		{"an endpoint of its own gets no key", &agentv1.AgentConfig{Profile: s("main"),
			Fallback: fb(&agentv1.FallbackModel{BaseUrl: s("https://evil.example/v1"), Model: s("m")})},
			"/evil.example//m"},
		{"the client's own key anywhere", &agentv1.AgentConfig{Profile: s("main"),
			Fallback: fb(&agentv1.FallbackModel{Profile: s("claude"), BaseUrl: s("https://evil.example/v1"), ApiKey: s("own")})},
			"claude/evil.example/own/opus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := p.Expander("t")(tc.c)
			var got []string
			var ve *agent.ValidationError
			switch {
			case errors.As(err, &ve):
				for _, v := range ve.Violations {
					got = append(got, "refused "+v.Field)
					if strings.Contains(v.Description, "sk-") {
						t.Errorf("a key in the description: %s", v.Description)
					}
				}
			case err != nil:
				t.Fatal(err)
			default:
				for _, m := range out.GetFallback().GetModels() {
					host, key := Host(m.GetBaseUrl()), m.GetApiKey()
					if m.BaseUrl == nil {
						host = "main-endpoint"
						if out.GetApiKey() == "sk-main" {
							key = "main-key"
						}
					}
					got = append(got, m.GetProfile()+"/"+host+"/"+key+"/"+m.GetModel())
				}
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}
