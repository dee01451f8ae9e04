package llm

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// FieldViolation names one bad field of a config.
type FieldViolation struct {
	// Field is the path, e.g. "config.compact_threshold".
	Field string
	// Description says what is wrong; it never repeats a secret.
	Description string
}

// ConfigError is an invalid configuration; it lists every bad field, in the
// shape of google.rpc.BadRequest.
type ConfigError struct {
	Violations []FieldViolation
}

func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Field + ": " + v.Description
	}
	return "invalid config: " + strings.Join(parts, "; ")
}

// validator collects field violations.
type validator struct {
	violations []FieldViolation
}

func (v *validator) add(field, format string, args ...any) {
	v.violations = append(v.violations, FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
}

func (v *validator) err() error {
	if len(v.violations) == 0 {
		return nil
	}
	return &ConfigError{Violations: v.violations}
}

// ResolveConfig turns the public config into a Config: defaults applied,
// every field checked. A bad field is reported as a *ConfigError naming its
// path under "config.". A nil public gives DefaultConfig. The profile field is
// only recorded: the server merges a profile's fields into public first.
func ResolveConfig(public *agentv1.AgentConfig) (*Config, error) {
	cfg := DefaultConfig()
	if public == nil {
		return cfg, nil
	}
	v := &validator{}
	cfg.Profile = public.GetProfile()
	cfg.BaseURL = public.GetBaseUrl()
	checkBaseURL(v, "config.base_url", cfg.BaseURL)
	cfg.APIKey = public.GetApiKey()
	checkAPIKey(v, "config.api_key", cfg.APIKey)
	cfg.Model = public.GetModel()
	if p, ok := protocolOf(v, "config.protocol", public.GetProtocol()); ok && p != "" {
		cfg.Protocol = p
	}
	cfg.System = public.GetSystem()
	if public.Stream != nil {
		cfg.Stream = public.GetStream()
	}
	if cc := public.GetCache(); cc != nil {
		if cc.Enabled != nil {
			cfg.Cache.Enabled = cc.GetEnabled()
		}
		cfg.Cache.Key = cc.GetKey()
		cfg.Cache.Retention = cc.GetRetention()
		cfg.Cache.Body = structMap(cc.GetBody())
	}
	switch public.GetToolMode() {
	case agentv1.ToolMode_TOOL_MODE_UNSPECIFIED, agentv1.ToolMode_TOOL_MODE_NATIVE:
	case agentv1.ToolMode_TOOL_MODE_TEXT:
		cfg.ToolMode = ToolModeText
	case agentv1.ToolMode_TOOL_MODE_AUTO:
		cfg.ToolMode = ToolModeAuto
	default:
		v.add("config.tool_mode", "unknown tool mode %d", public.GetToolMode())
	}
	if caps := public.GetCapabilities(); caps != nil {
		set := func(dst *bool, src *bool) {
			if src != nil {
				*dst = *src
			}
		}
		set(&cfg.Capabilities.Image, caps.Image)
		set(&cfg.Capabilities.Audio, caps.Audio)
		set(&cfg.Capabilities.Video, caps.Video)
		set(&cfg.Capabilities.File, caps.File)
		set(&cfg.Capabilities.Tools, caps.Tools)
		set(&cfg.Capabilities.StructuredOutput, caps.StructuredOutput)
		set(&cfg.Capabilities.ToolChoice, caps.ToolChoice)
		set(&cfg.Capabilities.Reasoning, caps.Reasoning)
	}
	switch public.GetMediaFallback() {
	case agentv1.MediaFallback_MEDIA_FALLBACK_UNSPECIFIED, agentv1.MediaFallback_MEDIA_FALLBACK_ERROR:
	case agentv1.MediaFallback_MEDIA_FALLBACK_STRIP:
		cfg.MediaFallback = MediaFallbackStrip
	default:
		v.add("config.media_fallback", "unknown media fallback %d", public.GetMediaFallback())
	}
	if p := public.GetProvider(); p != nil {
		cfg.Provider = providerOptions(v, "config.provider", p)
	}
	if public.MaxToolOutput != nil {
		cfg.MaxToolOutput = public.GetMaxToolOutput()
		if cfg.MaxToolOutput < 1 {
			v.add("config.max_tool_output", "must be at least 1 character")
		}
	}
	if public.MaxTokens != nil {
		cfg.MaxTokens = public.GetMaxTokens()
		if cfg.MaxTokens < 1 {
			v.add("config.max_tokens", "must be at least 1 token")
		}
	}
	if public.CompactThreshold != nil {
		cfg.CompactThreshold = public.GetCompactThreshold()
		if !(cfg.CompactThreshold > 0 && cfg.CompactThreshold <= 1) {
			v.add("config.compact_threshold", "must be greater than 0 and at most 1, got %v", cfg.CompactThreshold)
		}
	}
	if cc := public.GetCompact(); cc != nil {
		cfg.Compact = compactConfig(v, cc)
	}
	if o := public.GetOutput(); o != nil {
		cfg.Output = outputFormat(v, o)
	}
	if public.MaxSteps != nil {
		cfg.MaxSteps = int(public.GetMaxSteps())
		if cfg.MaxSteps < 1 {
			v.add("config.max_steps", "must be at least 1")
		}
	}
	if public.MaxToolConcurrency != nil {
		cfg.MaxToolConcurrency = int(public.GetMaxToolConcurrency())
		if cfg.MaxToolConcurrency < 1 {
			v.add("config.max_tool_concurrency", "must be at least 1")
		}
	}
	if d, ok := duration(v, "config.retry_max_delay", public.GetRetryMaxDelay(), false); ok {
		cfg.RetryMaxDelay = d
	}
	if d, ok := duration(v, "config.retry_max_elapsed", public.GetRetryMaxElapsed(), false); ok {
		cfg.RetryMaxElapsed = d
		if d == 0 {
			cfg.RetryMaxElapsed = NoRetry
		}
	}
	if d, ok := duration(v, "config.request_timeout", public.GetRequestTimeout(), true); ok {
		cfg.RequestTimeout = d
	}
	cfg.NoToolPrompt = public.GetNoToolPrompt()
	if public.NoToolRounds != nil {
		cfg.NoToolRounds = int(public.GetNoToolRounds())
		if cfg.NoToolRounds < 0 {
			v.add("config.no_tool_rounds", "must not be negative (0 means never end for that reason)")
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func checkBaseURL(v *validator, field, s string) {
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.add(field, "must be an absolute http or https URL")
		return
	}
	if u.User != nil {
		v.add(field, "must not hold credentials; use api_key")
	}
}

func checkAPIKey(v *validator, field, s string) {
	if s != "" && !httpguts.ValidHeaderFieldValue(s) {
		v.add(field, "must not contain control characters")
	}
}

func protocolOf(v *validator, field string, p agentv1.Protocol) (provider.Protocol, bool) {
	switch p {
	case agentv1.Protocol_PROTOCOL_UNSPECIFIED:
		return "", true
	case agentv1.Protocol_PROTOCOL_CHAT:
		return provider.ProtocolChat, true
	case agentv1.Protocol_PROTOCOL_RESPONSES:
		return provider.ProtocolResponses, true
	case agentv1.Protocol_PROTOCOL_ANTHROPIC:
		return provider.ProtocolAnthropic, true
	case agentv1.Protocol_PROTOCOL_GEMINI:
		return provider.ProtocolGemini, true
	}
	v.add(field, "unknown protocol %d", p)
	return "", false
}

// toolNamePattern is what every protocol accepts as a tool name.
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,128}$`)

func providerOptions(v *validator, field string, p *agentv1.ProviderOptions) ProviderOptions {
	out := ProviderOptions{ToolChoice: p.GetToolChoice()}
	par := &out.Params
	if p.Temperature != nil {
		t := p.GetTemperature()
		par.Temperature = &t
		if !(t >= 0 && t <= 2) {
			v.add(field+".temperature", "must be between 0 and 2, got %v", t)
		}
	}
	if p.TopP != nil {
		t := p.GetTopP()
		par.TopP = &t
		if !(t >= 0 && t <= 1) {
			v.add(field+".top_p", "must be between 0 and 1, got %v", t)
		}
	}
	if p.TopK != nil {
		k := int(p.GetTopK())
		par.TopK = &k
		if k < 1 {
			v.add(field+".top_k", "must be at least 1")
		}
	}
	if p.MaxOutputTokens != nil {
		n := int(p.GetMaxOutputTokens())
		par.MaxOutputTokens = &n
		if n < 1 {
			v.add(field+".max_output_tokens", "must be at least 1")
		}
	}
	if len(p.GetStop()) > 0 {
		par.Stop = append([]string(nil), p.GetStop()...)
		for i, s := range par.Stop {
			if s == "" {
				v.add(fmt.Sprintf("%s.stop[%d]", field, i), "must not be empty")
			}
		}
	}
	if p.Seed != nil {
		s := p.GetSeed()
		par.Seed = &s
	}
	penalty := func(name string, x *float64) *float64 {
		if x == nil {
			return nil
		}
		val := *x
		if !(val >= -2 && val <= 2) {
			v.add(field+"."+name, "must be between -2 and 2, got %v", val)
		}
		return &val
	}
	par.PresencePenalty = penalty("presence_penalty", p.PresencePenalty)
	par.FrequencyPenalty = penalty("frequency_penalty", p.FrequencyPenalty)
	switch tc := out.ToolChoice; {
	case tc == "", tc == "auto", tc == "none", tc == "required":
	case !toolNamePattern.MatchString(tc):
		v.add(field+".tool_choice", "must be auto, none, required or a tool name")
	}
	if len(p.GetHeaders()) > 0 {
		out.Headers = make(map[string]string, len(p.GetHeaders()))
		for k, val := range p.GetHeaders() {
			if !httpguts.ValidHeaderFieldName(k) {
				v.add(field+".headers", "%q is not a valid header name", k)
			} else if !httpguts.ValidHeaderFieldValue(val) {
				// The value may be a secret: name the header, not the value.
				v.add(field+".headers", "the value of %q contains control characters", k)
			}
			out.Headers[k] = val
		}
	}
	out.Body = structMap(p.GetBody())
	if po := p.GetProviderOptions(); po != nil {
		out.VendorOptions = map[string]map[string]any{}
		for vendor, val := range po.GetFields() {
			s := val.GetStructValue()
			if s == nil {
				v.add(field+".provider_options."+vendor, "must be an object")
				continue
			}
			out.VendorOptions[vendor] = s.AsMap()
		}
	}
	return out
}

func compactConfig(v *validator, c *agentv1.CompactConfig) *CompactConfig {
	out := &CompactConfig{
		Profile: c.GetProfile(),
		BaseURL: c.GetBaseUrl(),
		APIKey:  c.GetApiKey(),
		Model:   c.GetModel(),
	}
	checkBaseURL(v, "config.compact.base_url", out.BaseURL)
	checkAPIKey(v, "config.compact.api_key", out.APIKey)
	if p, ok := protocolOf(v, "config.compact.protocol", c.GetProtocol()); ok {
		out.Protocol = p
	}
	if p := c.GetProvider(); p != nil {
		po := providerOptions(v, "config.compact.provider", p)
		out.Provider = &po
	}
	return out
}

// outputNamePattern is what OpenAI accepts as a json_schema name.
var outputNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func outputFormat(v *validator, o *agentv1.OutputFormat) *OutputFormat {
	out := &OutputFormat{Schema: structMap(o.GetSchema()), Name: o.GetName(), Description: o.GetDescription()}
	switch o.GetKind() {
	case agentv1.OutputKind_OUTPUT_KIND_OBJECT:
		out.Kind = provider.OutputObject
	case agentv1.OutputKind_OUTPUT_KIND_ARRAY:
		out.Kind = provider.OutputArray
	case agentv1.OutputKind_OUTPUT_KIND_JSON:
		out.Kind = provider.OutputJSON
	case agentv1.OutputKind_OUTPUT_KIND_UNSPECIFIED:
		if out.Schema == nil && out.Name == "" && out.Description == "" {
			return nil // an empty message means no structured output
		}
		v.add("config.output.kind", "is required: object, array or json")
		return nil
	default:
		v.add("config.output.kind", "unknown output kind %d", o.GetKind())
		return nil
	}
	if out.Name != "" && !outputNamePattern.MatchString(out.Name) {
		v.add("config.output.name", "must be 1 to 64 letters, digits, _ or -")
	}
	if out.Schema == nil && out.Kind != provider.OutputJSON {
		v.add("config.output.schema", "is required for %s output", out.Kind)
		return out
	}
	if out.Schema != nil {
		if t, ok := out.Schema["type"]; ok && out.Kind == provider.OutputObject && t != "object" {
			v.add("config.output.schema", "must describe an object (type object) for object output")
		}
		if _, err := compileSchema(out.Schema); err != nil {
			v.add("config.output.schema", "is not a valid JSON Schema: %v", err)
		}
	}
	return out
}

// duration reads an optional duration; ok is false when unset or invalid.
func duration(v *validator, field string, d *durationpb.Duration, positive bool) (time.Duration, bool) {
	if d == nil {
		return 0, false
	}
	if err := d.CheckValid(); err != nil {
		v.add(field, "is not a valid duration")
		return 0, false
	}
	out := d.AsDuration()
	switch {
	case out < 0:
		v.add(field, "must not be negative")
		return 0, false
	case positive && out == 0:
		v.add(field, "must be positive")
		return 0, false
	case out == math.MaxInt64:
		v.add(field, "is too long")
		return 0, false
	}
	return out, true
}

// structMap converts a Struct to a map; nil stays nil.
func structMap(s *structpb.Struct) map[string]any {
	if s == nil {
		return nil
	}
	return s.AsMap()
}
