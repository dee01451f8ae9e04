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
	problems := &validator{}
	cfg.Profile = public.GetProfile()
	cfg.BaseURL = public.GetBaseUrl()
	checkBaseURL(problems, "config.base_url", cfg.BaseURL)
	cfg.APIKey = public.GetApiKey()
	checkAPIKey(problems, "config.api_key", cfg.APIKey)
	cfg.Model = public.GetModel()
	if p, ok := protocolOf(problems, "config.protocol", public.GetProtocol()); ok && p != "" {
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
		problems.add("config.tool_mode", "unknown tool mode %d", public.GetToolMode())
	}
	// The resume policy is the server's (see agentv1.OnInterrupt); only its
	// values are checked here, with the rest of the config.
	if _, ok := agentv1.OnInterrupt_name[int32(public.GetOnInterrupt())]; !ok {
		problems.add("config.on_interrupt", "unknown value %d: want ON_INTERRUPT_FAIL or ON_INTERRUPT_RESUME", public.GetOnInterrupt())
	}
	if _, ok := agentv1.CutCalls_name[int32(public.GetCutCalls())]; !ok {
		problems.add("config.cut_calls", "unknown value %d: want CUT_CALLS_REPORT or CUT_CALLS_ASK", public.GetCutCalls())
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
		problems.add("config.media_fallback", "unknown media fallback %d", public.GetMediaFallback())
	}
	if p := public.GetProvider(); p != nil {
		cfg.Provider = providerOptions(problems, "config.provider", p)
	}
	if public.MaxToolOutput != nil {
		cfg.MaxToolOutput = public.GetMaxToolOutput()
		if cfg.MaxToolOutput < 1 {
			problems.add("config.max_tool_output", "must be at least 1 character")
		}
	}
	if public.MaxLiveOutput != nil {
		cfg.MaxLiveOutput = public.GetMaxLiveOutput()
		if cfg.MaxLiveOutput < 1 {
			problems.add("config.max_live_output", "must be at least 1 byte")
		}
	}
	if public.MaxTokens != nil {
		cfg.MaxTokens = public.GetMaxTokens()
		if cfg.MaxTokens < 1 {
			problems.add("config.max_tokens", "must be at least 1 token")
		}
	}
	if public.CompactThreshold != nil {
		cfg.CompactThreshold = public.GetCompactThreshold()
		if !(cfg.CompactThreshold > 0 && cfg.CompactThreshold <= 1) {
			problems.add("config.compact_threshold", "must be greater than 0 and at most 1, got %v", cfg.CompactThreshold)
		}
	}
	if cc := public.GetCompact(); cc != nil {
		cfg.Compact = compactConfig(problems, cc)
	}
	if f := public.GetFallback(); f != nil {
		cfg.Fallback = fallbackConfig(problems, f)
	}
	if o := public.GetOutput(); o != nil {
		cfg.Output = outputFormat(problems, o)
	}
	if public.MaxSteps != nil {
		cfg.MaxSteps = int(public.GetMaxSteps())
		if cfg.MaxSteps < 1 {
			problems.add("config.max_steps", "must be at least 1")
		}
	}
	if public.MaxToolConcurrency != nil {
		cfg.MaxToolConcurrency = int(public.GetMaxToolConcurrency())
		if cfg.MaxToolConcurrency < 1 {
			problems.add("config.max_tool_concurrency", "must be at least 1")
		}
	}
	if d, ok := duration(problems, "config.retry_max_delay", public.GetRetryMaxDelay(), false); ok {
		cfg.RetryMaxDelay = d
	}
	if d, ok := duration(problems, "config.retry_max_elapsed", public.GetRetryMaxElapsed(), false); ok {
		cfg.RetryMaxElapsed = d
		if d == 0 {
			cfg.RetryMaxElapsed = NoRetry
		}
	}
	if d, ok := duration(problems, "config.request_timeout", public.GetRequestTimeout(), true); ok {
		cfg.RequestTimeout = d
	}
	cfg.NoToolPrompt = public.GetNoToolPrompt()
	if public.NoToolRounds != nil {
		cfg.NoToolRounds = int(public.GetNoToolRounds())
		if cfg.NoToolRounds < 0 {
			problems.add("config.no_tool_rounds", "must not be negative (0 means never end for that reason)")
		}
	}
	if err := problems.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func checkBaseURL(problems *validator, field, s string) {
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems.add(field, "must be an absolute http or https URL")
		return
	}
	if u.User != nil {
		problems.add(field, "must not hold credentials; use api_key")
	}
}

func checkAPIKey(problems *validator, field, s string) {
	if s != "" && !httpguts.ValidHeaderFieldValue(s) {
		problems.add(field, "must not contain control characters")
	}
}

func protocolOf(problems *validator, field string, p agentv1.Protocol) (provider.Protocol, bool) {
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
	problems.add(field, "unknown protocol %d", p)
	return "", false
}

// toolNamePattern is what every protocol accepts as a tool name.
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,128}$`)

func providerOptions(problems *validator, field string, public *agentv1.ProviderOptions) ProviderOptions {
	out := ProviderOptions{ToolChoice: public.GetToolChoice()}
	par := &out.Params
	if public.Temperature != nil {
		t := public.GetTemperature()
		par.Temperature = &t
		if !(t >= 0 && t <= 2) {
			problems.add(field+".temperature", "must be between 0 and 2, got %v", t)
		}
	}
	if public.TopP != nil {
		t := public.GetTopP()
		par.TopP = &t
		if !(t >= 0 && t <= 1) {
			problems.add(field+".top_p", "must be between 0 and 1, got %v", t)
		}
	}
	if public.TopK != nil {
		k := int(public.GetTopK())
		par.TopK = &k
		if k < 1 {
			problems.add(field+".top_k", "must be at least 1")
		}
	}
	if public.MaxOutputTokens != nil {
		n := int(public.GetMaxOutputTokens())
		par.MaxOutputTokens = &n
		if n < 1 {
			problems.add(field+".max_output_tokens", "must be at least 1")
		}
	}
	if len(public.GetStop()) > 0 {
		par.Stop = append([]string(nil), public.GetStop()...)
		for i, s := range par.Stop {
			if s == "" {
				problems.add(fmt.Sprintf("%s.stop[%d]", field, i), "must not be empty")
			}
		}
	}
	if public.Seed != nil {
		s := public.GetSeed()
		par.Seed = &s
	}
	penalty := func(name string, x *float64) *float64 {
		if x == nil {
			return nil
		}
		val := *x
		if !(val >= -2 && val <= 2) {
			problems.add(field+"."+name, "must be between -2 and 2, got %v", val)
		}
		return &val
	}
	par.PresencePenalty = penalty("presence_penalty", public.PresencePenalty)
	par.FrequencyPenalty = penalty("frequency_penalty", public.FrequencyPenalty)
	switch tc := out.ToolChoice; {
	case tc == "", tc == "auto", tc == "none", tc == "required":
	case !toolNamePattern.MatchString(tc):
		problems.add(field+".tool_choice", "must be auto, none, required or a tool name")
	}
	if len(public.GetHeaders()) > 0 {
		out.Headers = make(map[string]string, len(public.GetHeaders()))
		for k, val := range public.GetHeaders() {
			if !httpguts.ValidHeaderFieldName(k) {
				problems.add(field+".headers", "%q is not a valid header name", k)
			} else if !httpguts.ValidHeaderFieldValue(val) {
				// The value may be a secret: name the header, not the value.
				problems.add(field+".headers", "the value of %q contains control characters", k)
			}
			out.Headers[k] = val
		}
	}
	out.Body = structMap(public.GetBody())
	if po := public.GetProviderOptions(); po != nil {
		out.VendorOptions = map[string]map[string]any{}
		for vendor, val := range po.GetFields() {
			s := val.GetStructValue()
			if s == nil {
				problems.add(field+".provider_options."+vendor, "must be an object")
				continue
			}
			out.VendorOptions[vendor] = s.AsMap()
		}
	}
	return out
}

func compactConfig(problems *validator, c *agentv1.CompactConfig) *CompactConfig {
	out := &CompactConfig{
		Profile: c.GetProfile(),
		BaseURL: c.GetBaseUrl(),
		APIKey:  c.GetApiKey(),
		Model:   c.GetModel(),
	}
	checkBaseURL(problems, "config.compact.base_url", out.BaseURL)
	checkAPIKey(problems, "config.compact.api_key", out.APIKey)
	if p, ok := protocolOf(problems, "config.compact.protocol", c.GetProtocol()); ok {
		out.Protocol = p
	}
	if p := c.GetProvider(); p != nil {
		po := providerOptions(problems, "config.compact.provider", p)
		out.Provider = &po
	}
	return out
}

// outputNamePattern is what OpenAI accepts as a json_schema name.
var outputNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func outputFormat(problems *validator, o *agentv1.OutputFormat) *OutputFormat {
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
		problems.add("config.output.kind", "is required: object, array or json")
		return nil
	default:
		problems.add("config.output.kind", "unknown output kind %d", o.GetKind())
		return nil
	}
	if out.Name != "" && !outputNamePattern.MatchString(out.Name) {
		problems.add("config.output.name", "must be 1 to 64 letters, digits, _ or -")
	}
	if out.Schema == nil && out.Kind != provider.OutputJSON {
		problems.add("config.output.schema", "is required for %s output", out.Kind)
		return out
	}
	if out.Schema != nil {
		if t, ok := out.Schema["type"]; ok && out.Kind == provider.OutputObject && t != "object" {
			problems.add("config.output.schema", "must describe an object (type object) for object output")
		}
		if _, err := compileSchema(out.Schema); err != nil {
			problems.add("config.output.schema", "is not a valid JSON Schema: %v", err)
		}
	}
	return out
}

// duration reads an optional duration; ok is false when unset or invalid.
func duration(problems *validator, field string, d *durationpb.Duration, positive bool) (time.Duration, bool) {
	if d == nil {
		return 0, false
	}
	if err := d.CheckValid(); err != nil {
		problems.add(field, "is not a valid duration")
		return 0, false
	}
	out := d.AsDuration()
	switch {
	case out < 0:
		problems.add(field, "must not be negative")
		return 0, false
	case positive && out == 0:
		problems.add(field, "must be positive")
		return 0, false
	case out == math.MaxInt64:
		problems.add(field, "is too long")
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
