package llm

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestResolveConfigDefaults(t *testing.T) {
	for _, in := range []*agentv1.AgentConfig{nil, {}} {
		cfg, err := ResolveConfig(in)
		if err != nil {
			t.Fatal(err)
		}
		want := &Config{
			Protocol:         provider.ProtocolChat,
			Stream:           true,
			Cache:            CacheConfig{Enabled: true},
			ToolMode:         ToolModeNative,
			Capabilities:     Capabilities{Image: true, Audio: true, Video: true, File: true, Tools: true, StructuredOutput: true, ToolChoice: true, Reasoning: false},
			MediaFallback:    MediaFallbackError,
			CompactThreshold: 0.8,
			RetryBaseDelay:   time.Second,
			RetryMaxDelay:    10 * time.Minute,
			NoToolRounds:     1,
		}
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("ResolveConfig(%v) =\n%+v\nwant\n%+v", in, cfg, want)
		}
		if err := cfg.RequireEndpoint(); err == nil {
			t.Error("RequireEndpoint accepted a config without base URL and model")
		}
	}
}

func TestResolveConfigFields(t *testing.T) {
	in := &agentv1.AgentConfig{
		Profile:       proto.String("cheap"),
		BaseUrl:       proto.String("https://api.example.com/v1"),
		ApiKey:        proto.String("sk-secret"),
		Model:         proto.String("m1"),
		Protocol:      agentv1.Protocol_PROTOCOL_ANTHROPIC,
		System:        proto.String("be brief"),
		Stream:        proto.Bool(false),
		Cache:         &agentv1.CacheConfig{Enabled: proto.Bool(true), Key: "k", Retention: "1h", Body: mustStruct(t, map[string]any{"ns": "a"})},
		ToolMode:      agentv1.ToolMode_TOOL_MODE_AUTO,
		Capabilities:  &agentv1.Capabilities{Image: proto.Bool(false), ToolChoice: proto.Bool(false), Reasoning: proto.Bool(true)},
		MediaFallback: agentv1.MediaFallback_MEDIA_FALLBACK_STRIP,
		Provider: &agentv1.ProviderOptions{
			Temperature: proto.Float64(0.3), TopP: proto.Float64(0.9), TopK: proto.Int32(40), MaxOutputTokens: proto.Int32(4096),
			Stop: []string{"END"}, Seed: proto.Int64(7), PresencePenalty: proto.Float64(0.1), FrequencyPenalty: proto.Float64(-0.2),
			ToolChoice: "required", Headers: map[string]string{"X-App": "demo"},
			Body:            mustStruct(t, map[string]any{"custom": true}),
			ProviderOptions: mustStruct(t, map[string]any{"anthropic": map[string]any{"thinking": map[string]any{"type": "enabled"}}}),
		},
		MaxToolOutput:      proto.Int64(32000),
		MaxTokens:          proto.Int64(100000),
		CompactThreshold:   proto.Float64(0.5),
		Compact:            &agentv1.CompactConfig{Model: proto.String("small"), Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(0)}},
		Output:             &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_OBJECT, Schema: mustStruct(t, map[string]any{"type": "object", "properties": map[string]any{"total": map[string]any{"type": "number"}}}), Name: "total"},
		MaxSteps:           proto.Int32(12),
		MaxToolConcurrency: proto.Int32(8),
		RetryMaxDelay:      durationpb.New(30 * time.Second),
		RetryMaxElapsed:    durationpb.New(2 * time.Minute),
		RequestTimeout:     durationpb.New(90 * time.Second),
		NoToolPrompt:       proto.String("use a tool"),
		NoToolRounds:       proto.Int32(0),
	}
	cfg, err := ResolveConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"profile", cfg.Profile, "cheap"},
		{"endpoint", [3]string{cfg.BaseURL, cfg.APIKey, cfg.Model}, [3]string{"https://api.example.com/v1", "sk-secret", "m1"}},
		{"protocol", cfg.Protocol, provider.ProtocolAnthropic},
		{"system", cfg.System, "be brief"},
		{"stream", cfg.Stream, false},
		{"cache", cfg.Cache, CacheConfig{Enabled: true, Key: "k", Retention: "1h", Body: map[string]any{"ns": "a"}}},
		{"tool mode", cfg.ToolMode, ToolModeAuto},
		{"capabilities", cfg.Capabilities, Capabilities{Image: false, Audio: true, Video: true, File: true, Tools: true, StructuredOutput: true, ToolChoice: false, Reasoning: true}},
		{"media fallback", cfg.MediaFallback, MediaFallbackStrip},
		{"temperature", *cfg.Provider.Params.Temperature, 0.3},
		{"top k", *cfg.Provider.Params.TopK, 40},
		{"max output", *cfg.Provider.Params.MaxOutputTokens, 4096},
		{"stop", cfg.Provider.Params.Stop, []string{"END"}},
		{"seed", *cfg.Provider.Params.Seed, int64(7)},
		{"penalty", *cfg.Provider.Params.FrequencyPenalty, -0.2},
		{"tool choice", cfg.Provider.ToolChoice, "required"},
		{"headers", cfg.Provider.Headers, map[string]string{"X-App": "demo"}},
		{"body", cfg.Provider.Body, map[string]any{"custom": true}},
		{"vendor", cfg.Provider.VendorOptions["anthropic"], map[string]any{"thinking": map[string]any{"type": "enabled"}}},
		{"limits", [4]int64{cfg.MaxToolOutput, cfg.MaxTokens, int64(cfg.MaxSteps), int64(cfg.MaxToolConcurrency)}, [4]int64{32000, 100000, 12, 8}},
		{"threshold", cfg.CompactThreshold, 0.5},
		{"output kind", cfg.Output.Kind, provider.OutputObject},
		{"output name", cfg.Output.Name, "total"},
		{"retry", [3]time.Duration{cfg.RetryMaxDelay, cfg.RetryMaxElapsed, cfg.RequestTimeout}, [3]time.Duration{30 * time.Second, 2 * time.Minute, 90 * time.Second}},
		{"no tool", [2]any{cfg.NoToolPrompt, cfg.NoToolRounds}, [2]any{"use a tool", 0}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}

	cc := cfg.CompactionConfig()
	if cc.Model != "small" || cc.BaseURL != cfg.BaseURL || cc.APIKey != cfg.APIKey || cc.Protocol != cfg.Protocol {
		t.Errorf("compaction endpoint = %q %q %q %q", cc.BaseURL, cc.APIKey, cc.Model, cc.Protocol)
	}
	if cc.Output != nil || cc.Compact != nil || cc.ToolMode != ToolModeNative {
		t.Errorf("compaction inherits output %v, compact %v, tool mode %v", cc.Output, cc.Compact, cc.ToolMode)
	}
	if cc.Provider.Params.Temperature == nil || *cc.Provider.Params.Temperature != 0 || cc.Provider.Params.TopP != nil || cc.Provider.Headers != nil {
		t.Errorf("compaction provider not replaced whole: %+v", cc.Provider)
	}
	if cfg.Output == nil || cfg.Model != "m1" {
		t.Error("CompactionConfig changed the main config")
	}
	if plain := DefaultConfig().CompactionConfig(); plain.Model != "" || plain.Stream != true {
		t.Errorf("compaction without compact config = %+v", plain)
	}
}

func TestResolveConfigRetryElapsedZeroMeansNoRetry(t *testing.T) {
	cfg, err := ResolveConfig(&agentv1.AgentConfig{RetryMaxElapsed: durationpb.New(0), RetryMaxDelay: durationpb.New(0)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryMaxElapsed != NoRetry || cfg.RetryMaxDelay != 0 {
		t.Errorf("elapsed %v delay %v", cfg.RetryMaxElapsed, cfg.RetryMaxDelay)
	}
}

func TestResolveConfigViolations(t *testing.T) {
	objectSchema := func(m map[string]any) *structpb.Struct { return mustStruct(t, m) }
	tests := []struct {
		name  string
		in    *agentv1.AgentConfig
		field string
	}{
		{"relative base url", &agentv1.AgentConfig{BaseUrl: proto.String("api.example.com")}, "config.base_url"},
		{"ftp base url", &agentv1.AgentConfig{BaseUrl: proto.String("ftp://x/v1")}, "config.base_url"},
		{"credentials in url", &agentv1.AgentConfig{BaseUrl: proto.String("https://u:p@x/v1")}, "config.base_url"},
		{"api key newline", &agentv1.AgentConfig{ApiKey: proto.String("sk\nx")}, "config.api_key"},
		{"unknown protocol", &agentv1.AgentConfig{Protocol: 42}, "config.protocol"},
		{"unknown tool mode", &agentv1.AgentConfig{ToolMode: 9}, "config.tool_mode"},
		{"unknown media fallback", &agentv1.AgentConfig{MediaFallback: 9}, "config.media_fallback"},
		{"threshold zero", &agentv1.AgentConfig{CompactThreshold: proto.Float64(0)}, "config.compact_threshold"},
		{"threshold above one", &agentv1.AgentConfig{CompactThreshold: proto.Float64(1.5)}, "config.compact_threshold"},
		{"max tool output", &agentv1.AgentConfig{MaxToolOutput: proto.Int64(0)}, "config.max_tool_output"},
		{"max tokens", &agentv1.AgentConfig{MaxTokens: proto.Int64(-1)}, "config.max_tokens"},
		{"max steps", &agentv1.AgentConfig{MaxSteps: proto.Int32(0)}, "config.max_steps"},
		{"concurrency", &agentv1.AgentConfig{MaxToolConcurrency: proto.Int32(0)}, "config.max_tool_concurrency"},
		{"no tool rounds", &agentv1.AgentConfig{NoToolRounds: proto.Int32(-1)}, "config.no_tool_rounds"},
		{"request timeout zero", &agentv1.AgentConfig{RequestTimeout: durationpb.New(0)}, "config.request_timeout"},
		{"negative delay", &agentv1.AgentConfig{RetryMaxDelay: durationpb.New(-time.Second)}, "config.retry_max_delay"},
		{"invalid duration", &agentv1.AgentConfig{RetryMaxElapsed: &durationpb.Duration{Seconds: 1, Nanos: -1}}, "config.retry_max_elapsed"},
		{"temperature", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Temperature: proto.Float64(3)}}, "config.provider.temperature"},
		{"top p", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{TopP: proto.Float64(1.1)}}, "config.provider.top_p"},
		{"top k", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{TopK: proto.Int32(0)}}, "config.provider.top_k"},
		{"max output", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{MaxOutputTokens: proto.Int32(0)}}, "config.provider.max_output_tokens"},
		{"empty stop", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Stop: []string{"a", ""}}}, "config.provider.stop[1]"},
		{"penalty", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{PresencePenalty: proto.Float64(5)}}, "config.provider.presence_penalty"},
		{"tool choice", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{ToolChoice: "call it please"}}, "config.provider.tool_choice"},
		{"header name", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Headers: map[string]string{"Bad Header": "x"}}}, "config.provider.headers"},
		{"header value", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Key": "a\r\nb"}}}, "config.provider.headers"},
		{"vendor not object", &agentv1.AgentConfig{Provider: &agentv1.ProviderOptions{ProviderOptions: objectSchema(map[string]any{"openai": "low"})}}, "config.provider.provider_options.openai"},
		{"compact base url", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{BaseUrl: proto.String("nope")}}, "config.compact.base_url"},
		{"compact provider", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{Provider: &agentv1.ProviderOptions{TopP: proto.Float64(-1)}}}, "config.compact.provider.top_p"},
		{"compact protocol", &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{Protocol: 7}}, "config.compact.protocol"},
		{"output without kind", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Schema: objectSchema(map[string]any{"type": "object"})}}, "config.output.kind"},
		{"output unknown kind", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: 8}}, "config.output.kind"},
		{"object without schema", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_OBJECT}}, "config.output.schema"},
		{"array without schema", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_ARRAY}}, "config.output.schema"},
		{"object schema of a string", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_OBJECT, Schema: objectSchema(map[string]any{"type": "string"})}}, "config.output.schema"},
		{"schema that does not compile", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_JSON, Schema: objectSchema(map[string]any{"type": 5})}}, "config.output.schema"},
		{"schema with a file reference", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_JSON, Schema: objectSchema(map[string]any{"$ref": "file:///etc/passwd"})}}, "config.output.schema"},
		{"output name", &agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_JSON, Name: "my output!"}}, "config.output.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResolveConfig(tt.in)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if len(ce.Violations) != 1 || ce.Violations[0].Field != tt.field {
				t.Fatalf("violations = %+v, want one for %s", ce.Violations, tt.field)
			}
			if strings.Contains(err.Error(), "sk") && tt.field == "config.api_key" || strings.Contains(err.Error(), "a\r\nb") {
				t.Errorf("error echoes a secret: %v", err)
			}
		})
	}
}

func TestResolveConfigCollectsEveryViolation(t *testing.T) {
	_, err := ResolveConfig(&agentv1.AgentConfig{
		BaseUrl:          proto.String("x"),
		CompactThreshold: proto.Float64(2),
		MaxSteps:         proto.Int32(-3),
	})
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Violations) != 3 {
		t.Fatalf("err = %v, want three violations", err)
	}
	for _, f := range []string{"config.base_url", "config.compact_threshold", "config.max_steps"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not name %s", err, f)
		}
	}
}

func TestResolveConfigEmptyOutputIsNone(t *testing.T) {
	cfg, err := ResolveConfig(&agentv1.AgentConfig{Output: &agentv1.OutputFormat{}})
	if err != nil || cfg.Output != nil {
		t.Fatalf("cfg.Output = %v, err %v", cfg.Output, err)
	}
	cfg, err = ResolveConfig(&agentv1.AgentConfig{Output: &agentv1.OutputFormat{Kind: agentv1.OutputKind_OUTPUT_KIND_JSON}})
	if err != nil || cfg.Output == nil || cfg.Output.Kind != provider.OutputJSON || cfg.Output.Schema != nil {
		t.Fatalf("json output without schema: %+v, %v", cfg.Output, err)
	}
}
