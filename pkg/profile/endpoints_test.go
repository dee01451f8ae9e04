package profile

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestCheckKeyBinding(t *testing.T) {
	main := &config.Profile{Name: "main", BaseURL: "https://api.example.com/v1", APIKey: "sk-main",
		AllowedBaseURLs: []string{"https://eu.example.com/v1"}}
	keyless := &config.Profile{Name: "keyless", BaseURL: "https://other.example.com/v1"}
	cheap := &config.Profile{Name: "cheap", BaseURL: "https://cheap.example.com/v1", APIKey: "sk-cheap"}
	s := proto.String
	hdr := func(k string) *agentv1.ProviderOptions {
		return &agentv1.ProviderOptions{Headers: map[string]string{k: "x"}}
	}
	tests := []struct {
		name       string
		c          *agentv1.AgentConfig
		main, comp *config.Profile
		want       string // the fields refused, comma-separated
	}{
		{"the profile as it is", &agentv1.AgentConfig{Profile: s("main")}, main, nil, ""},
		{"its own base url again", &agentv1.AgentConfig{BaseUrl: s("https://api.example.com/v1/")}, main, nil, ""},
		{"an allowed endpoint", &agentv1.AgentConfig{BaseUrl: s("https://eu.example.com/v1")}, main, nil, ""},
		{"another endpoint", &agentv1.AgentConfig{BaseUrl: s("http://127.0.0.1:9/v1")}, main, nil, "config.base_url"},
		{"another endpoint with the client's key", &agentv1.AgentConfig{BaseUrl: s("http://127.0.0.1:9/v1"), ApiKey: s("sk-own")}, main, nil, ""},
		{"credential header", &agentv1.AgentConfig{Provider: hdr("Authorization")}, main, nil, "config.provider.headers"},
		{"other header", &agentv1.AgentConfig{Provider: hdr("X-Trace")}, main, nil, ""},
		{"credential header with the client's key", &agentv1.AgentConfig{ApiKey: s("sk-own"), Provider: hdr("x-api-key")}, main, nil, ""},
		{"compaction elsewhere inherits the key", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{BaseUrl: s("http://127.0.0.1:9")}}, main, nil, "config.compact.base_url"},
		{"compaction elsewhere with its own key", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{BaseUrl: s("http://127.0.0.1:9"), ApiKey: s("k")}}, main, nil, ""},
		{"compaction profile with its own key", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{Profile: s("cheap")}}, main, cheap, ""},
		{"compaction profile moved elsewhere", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{Profile: s("cheap"), BaseUrl: s("http://127.0.0.1:9")}}, main, cheap, "config.compact.base_url"},
		{"keyless compaction profile gets the main key", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{Profile: s("keyless")}}, main, keyless, "config.compact.profile"},
		{"compaction key sent to the client's main endpoint", &agentv1.AgentConfig{BaseUrl: s("http://127.0.0.1:9"), ApiKey: s("own"),
			Compact: &agentv1.CompactConfig{Profile: s("cheap")}}, nil, &config.Profile{Name: "cheap", APIKey: "sk-cheap"}, "config.base_url"},
		{"compaction header", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{Provider: hdr("api-key")}}, main, nil, "config.compact.provider.headers"},
		{"no profile, no server key", &agentv1.AgentConfig{BaseUrl: s("http://127.0.0.1:9"), Provider: hdr("authorization")}, nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range checkKeyBinding(tc.c, tc.main, tc.comp) {
				got = append(got, v.Field)
				if strings.Contains(v.Description, "sk-") {
					t.Errorf("a key in the description: %s", v.Description)
				}
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("refused %v, want %q", got, tc.want)
			}
		})
	}
}

// TestExpanderRemembers checks the expansion a session's expander keeps:
// the same config with the same profiles gives the same result without a
// new merge, a changed config (a new message: sessions replace their
// config whole) or a changed profile (a reload) is expanded again, and
// the tenant's rights and the key binding are checked at every call.
func TestExpanderRemembers(t *testing.T) {
	authn, err := auth.New(auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{}
	main := &config.Profile{Name: "main", BaseURL: "https://api.example.com/v1", Model: "big", APIKey: "sk-main"}
	cfg.Profiles = map[string]*config.Profile{"main": main}
	exp := New(cfg, authn.Lookup).Expander(auth.DefaultTenant)
	c := &agentv1.AgentConfig{Profile: proto.String("main"), System: proto.String("be brief")}
	first, err := exp(c)
	if err != nil {
		t.Fatal(err)
	}
	if first.GetBaseUrl() != main.BaseURL || first.GetModel() != "big" || first.GetSystem() != "be brief" {
		t.Fatalf("expanded %v", first)
	}
	if again, err := exp(c); err != nil || again != first {
		t.Errorf("the same config expanded again: %p, %v; want the remembered %p", again, err, first)
	}
	c2 := &agentv1.AgentConfig{Profile: proto.String("main"), System: proto.String("be long")}
	if got, err := exp(c2); err != nil || got == first || got.GetSystem() != "be long" {
		t.Errorf("a new config: %v, %v", got, err)
	}
	reloaded := &config.Profile{Name: "main", BaseURL: "https://api.example.com/v2", Model: "bigger", APIKey: "sk-main"}
	cfg.Profiles = map[string]*config.Profile{"main": reloaded}
	if got, err := exp(c2); err != nil || got.GetBaseUrl() != reloaded.BaseURL || got.GetModel() != "bigger" {
		t.Errorf("after a reload of the profile: %v, %v", got, err)
	}
	moved := &agentv1.AgentConfig{Profile: proto.String("main"), BaseUrl: proto.String("https://evil.example/v1")}
	for range 2 {
		if _, err := exp(moved); err == nil || !strings.Contains(err.Error(), "config.base_url") {
			t.Errorf("the profile's key sent elsewhere: %v", err)
		}
	}
	delete(cfg.Profiles, "main")
	if _, err := exp(c2); err == nil || !strings.Contains(err.Error(), "no profile main") {
		t.Errorf("a profile gone: %v", err)
	}
}

// TestEffective: the model an agent's config reaches is the one a send
// would use, and none when a send would refuse the config.
func TestEffective(t *testing.T) {
	authn, err := auth.New(auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{DefaultProfile: "main", Profiles: map[string]*config.Profile{
		"main": {Name: "main", BaseURL: "https://api.example.com/v1/chat?x=1", Model: "big", APIKey: "sk-main"},
	}}
	p := New(cfg, authn.Lookup)
	s := proto.String
	tests := []struct {
		name string
		c    *agentv1.AgentConfig
		want string // profile/follows/model/host, "" for none
	}{
		{"follows the default", &agentv1.AgentConfig{}, "main/true/big/api.example.com"},
		{"names it", &agentv1.AgentConfig{Profile: s("main")}, "main/false/big/api.example.com"},
		{"its own model", &agentv1.AgentConfig{Profile: s("main"), Model: s("small")}, "main/false/small/api.example.com"},
		{"its own endpoint and key", &agentv1.AgentConfig{BaseUrl: s("http://127.0.0.1:9/v1"), ApiKey: s("own"), Model: s("m")}, "/false/m/127.0.0.1:9"},
		{"the profile's key sent elsewhere", &agentv1.AgentConfig{Profile: s("main"), BaseUrl: s("https://evil.example/v1")}, ""},
		{"a profile that is not there", &agentv1.AgentConfig{Profile: s("gone")}, ""},
		{"an endpoint and no model", &agentv1.AgentConfig{BaseUrl: s("http://127.0.0.1:9/v1"), ApiKey: s("own")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if e := p.Effective(tc.c, auth.DefaultTenant); e != nil {
				got = fmt.Sprintf("%s/%v/%s/%s", e.GetProfile(), e.GetFollowsDefault(), e.GetModel(), e.GetBaseUrlHost())
			}
			if got != tc.want {
				t.Errorf("Effective = %q, want %q", got, tc.want)
			}
		})
	}
}
