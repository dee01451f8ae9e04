package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/secret"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMergeConfig(t *testing.T) {
	body := func(k string) *structpb.Struct {
		s, _ := structpb.NewStruct(map[string]any{k: true})
		return s
	}
	base := &agentv1.AgentConfig{
		Model:        proto.String("big"),
		System:       proto.String("be brief"),
		Protocol:     agentv1.Protocol_PROTOCOL_ANTHROPIC,
		Provider:     &agentv1.ProviderOptions{Temperature: proto.Float64(0.5), TopP: proto.Float64(0.9)},
		Capabilities: &agentv1.Capabilities{Image: proto.Bool(false), Tools: proto.Bool(true)},
		Cache:        &agentv1.CacheConfig{Enabled: proto.Bool(true), Key: "k", Body: body("a")},
		Compact: &agentv1.CompactConfig{Model: proto.String("small"), ApiKey: proto.String("sk-c"),
			Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(0)}},
		Output:         &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_JSON, Name: "x"},
		RequestTimeout: durationpb.New(30e9),
		MaxSteps:       proto.Int32(10),
	}
	tests := []struct {
		name     string
		override *agentv1.AgentConfig
		want     func(*agentv1.AgentConfig)
	}{
		{"nil changes nothing", nil, func(*agentv1.AgentConfig) {}},
		{"set scalars replace, unset keep", &agentv1.AgentConfig{Model: proto.String("other"), MaxSteps: proto.Int32(0)},
			func(c *agentv1.AgentConfig) { c.Model = proto.String("other"); c.MaxSteps = proto.Int32(0) }},
		{"an enum replaces when set", &agentv1.AgentConfig{Protocol: agentv1.Protocol_PROTOCOL_GEMINI},
			func(c *agentv1.AgentConfig) { c.Protocol = agentv1.Protocol_PROTOCOL_GEMINI }},
		{"provider replaces whole", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(0.1)}},
			func(c *agentv1.AgentConfig) { c.Provider = &agentv1.ProviderOptions{Temperature: proto.Float64(0.1)} }},
		{"an empty provider clears it", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{}},
			func(c *agentv1.AgentConfig) { c.Provider = &agentv1.ProviderOptions{} }},
		{"capabilities merge field by field", &agentv1.AgentConfig{Capabilities: &agentv1.Capabilities{Reasoning: proto.Bool(true)}},
			func(c *agentv1.AgentConfig) { c.Capabilities.Reasoning = proto.Bool(true) }},
		{"cache merges, its body replaces", &agentv1.AgentConfig{Cache: &agentv1.CacheConfig{Body: body("b")}},
			func(c *agentv1.AgentConfig) { c.Cache.Body = body("b") }},
		{"compact merges, its provider replaces", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{
			BaseUrl: proto.String("https://cheap.example"), Provider: &agentv1.ProviderOptions{TopK: proto.Int32(3)}}},
			func(c *agentv1.AgentConfig) {
				c.Compact.BaseUrl = proto.String("https://cheap.example")
				c.Compact.Provider = &agentv1.ProviderOptions{TopK: proto.Int32(3)}
			}},
		{"output and durations replace whole", &agentv1.AgentConfig{
			Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_JSON}, RequestTimeout: durationpb.New(5e9)},
			func(c *agentv1.AgentConfig) {
				c.Output = &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_JSON}
				c.RequestTimeout = durationpb.New(5e9)
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := proto.Clone(base)
			var overBefore proto.Message
			if tc.override != nil {
				overBefore = proto.Clone(tc.override)
			}
			got := agent.MergeConfig(base, tc.override)
			want := proto.Clone(base).(*agentv1.AgentConfig)
			tc.want(want)
			if !proto.Equal(got, want) {
				t.Fatalf("got  %v\nwant %v", got, want)
			}
			if !proto.Equal(base, before) || tc.override != nil && !proto.Equal(tc.override, overBefore) {
				t.Fatal("an argument changed")
			}
			if tc.override.GetProvider() != nil && got.GetProvider() == tc.override.GetProvider() {
				t.Fatal("the result shares a message with the override")
			}
			if tc.override != nil {
				kept := proto.Clone(got)
				wipe(tc.override.ProtoReflect())
				if !proto.Equal(got, kept) {
					t.Fatalf("changing the override after the merge changed the result: %v", got)
				}
			}
		})
	}
}

// wipe clears every field of m in place, down to the messages, lists and
// maps it holds.
func wipe(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && fd.Message() != nil; i++ {
				wipe(l.Get(i).Message())
			}
			l.Truncate(0)
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Message() != nil {
					wipe(mv.Message())
				}
				mp.Clear(k)
				return true
			})
		case fd.Message() != nil:
			wipe(v.Message())
		}
		m.Clear(fd)
		return true
	})
}

func TestRedact(t *testing.T) {
	c := &agentv1.AgentConfig{
		ApiKey:   proto.String("sk-1"),
		Model:    proto.String("m"),
		Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Token": "secret"}},
		Compact:  &agentv1.CompactConfig{ApiKey: proto.String("sk-2"), Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Other": "secret2"}}},
	}
	r := secret.Redact(c)
	if r.ApiKey != nil || r.GetCompact().ApiKey != nil || r.GetProvider().GetHeaders()["X-Token"] != "" ||
		r.GetCompact().GetProvider().GetHeaders()["X-Other"] != "" || r.GetModel() != "m" {
		t.Fatalf("redacted %v", r)
	}
	if _, ok := r.GetProvider().GetHeaders()["X-Token"]; !ok || c.GetApiKey() != "sk-1" || c.GetProvider().GetHeaders()["X-Token"] != "secret" {
		t.Fatal("Redact dropped a header name or changed its argument")
	}
}

// A fallback model's key and header values are secrets like the main
// model's: redacted, named by path, listed, and put back.
func TestFallbackSecrets(t *testing.T) {
	c := &agentv1.AgentConfig{
		Model: proto.String("m"),
		Fallback: &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{
			{Model: proto.String("small")},
			{BaseUrl: proto.String("http://b.test"), Model: proto.String("b"), ApiKey: proto.String("sk-fb"),
				Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Fb": "hdr-fb"}}},
		}},
	}
	paths := secret.Paths(c)
	if strings.Join(paths, " ") != "config.fallback.models[1].api_key config.fallback.models[1].provider.headers.X-Fb" {
		t.Fatalf("secret.Paths = %v", paths)
	}
	if got := strings.Join(secret.Values(c), " "); got != "sk-fb hdr-fb" {
		t.Errorf("Secrets = %s", got)
	}
	r := secret.Redact(c)
	fb := r.GetFallback().GetModels()[1]
	if fb.ApiKey != nil || fb.GetProvider().GetHeaders()["X-Fb"] != "" || c.GetFallback().GetModels()[1].GetApiKey() != "sk-fb" {
		t.Fatalf("redacted %v (from %v)", r, c)
	}
	back, missing := secret.With(r, c, append(paths, "config.fallback.models[7].api_key"))
	if !proto.Equal(back, c) || len(missing) != 1 {
		t.Errorf("WithSecrets = %v, missing %v", back, missing)
	}
	if !secret.Given(paths[1], &agentv1.AgentConfig{Fallback: &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{}, {Provider: &agentv1.ProviderOptions{}}}}}) {
		t.Error("an override replacing the fallback's provider options does not give its headers")
	}
}

func TestProfilesAndState(t *testing.T) {
	srv := fakemodel.StartTB(t)
	s, err := agent.New(agent.Options{
		LLM:    client,
		Config: &agentv1.AgentConfig{Profile: proto.String("default"), System: proto.String("hi")},
		ExpandProfile: func(c *agentv1.AgentConfig) (*agentv1.AgentConfig, error) {
			if c.GetProfile() == "" { // the expander sees every config
				return c, nil
			}
			if c.GetProfile() != "default" {
				return nil, &agent.ValidationError{Violations: []agent.FieldViolation{{Field: "config.profile", Description: "unknown profile"}}}
			}
			return agent.MergeConfig(baseConfig(srv), c), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Push(fakemodel.Turn{Text: "from the profile's endpoint"})
	if res, err := s.Send(context.Background(), agent.SendOptions{Input: input("x")}); err != nil || res.Text != "from the profile's endpoint" {
		t.Fatalf("%v, %v", res, err)
	}
	if system(srv.Requests()[0]) != "hi" {
		t.Fatal("the profile replaced the session's own system prompt")
	}
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("x"), Config: &agentv1.AgentConfig{Profile: proto.String("nope")}}); !hasField(err, "config.profile") {
		t.Fatalf("unknown profile: %v", err)
	}
	if err := s.SetConfig(&agentv1.AgentConfig{MaxSteps: proto.Int32(-1)}); !hasField(err, "config.max_steps") {
		t.Fatalf("SetConfig: %v", err)
	}
	if err := s.SetConfig(&agentv1.AgentConfig{Profile: proto.String("default"), ApiKey: proto.String("sk-x"), Model: proto.String("m2")}); err != nil {
		t.Fatal(err)
	}
	st := s.State()
	if st.ID != s.ID() || !strings.HasPrefix(st.ID, "agent_") || st.Running || !st.HasAPIKey || st.Config.ApiKey != nil ||
		st.Config.GetModel() != "m2" || st.HistoryLength != 2 || st.Usage == nil {
		t.Fatalf("state %+v", st)
	}

	// Without the hook a profile name cannot be used.
	_, err = agent.New(agent.Options{LLM: client, Config: &agentv1.AgentConfig{Profile: proto.String("default")}})
	if !hasField(err, "config.profile") {
		t.Fatalf("profile without a hook: %v", err)
	}
}

// hasField reports whether err is a *ValidationError naming field.
func hasField(err error, field string) bool {
	var ve *agent.ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	for _, v := range ve.Violations {
		if v.Field == field {
			return true
		}
	}
	return false
}
