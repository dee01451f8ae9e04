package llm

import (
	"time"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// ToolMode says how tools are offered to the model.
type ToolMode string

// The tool modes.
const (
	// ToolModeNative sends native tool fields only; the system prompt is sent as written.
	ToolModeNative ToolMode = "native"
	// ToolModeText describes tools in the system prompt and reads calls from text.
	ToolModeText ToolMode = "text"
	// ToolModeAuto uses native tools first and falls back to text when the
	// endpoint rejects them; calls a native model writes as text are read too.
	ToolModeAuto ToolMode = "auto"
)

// MediaFallback says what to do with media a model cannot take.
type MediaFallback string

// The media fallbacks.
const (
	// MediaFallbackError fails the request before it is sent.
	MediaFallbackError MediaFallback = "error"
	// MediaFallbackStrip keeps the text and drops the unsupported media.
	MediaFallbackStrip MediaFallback = "strip"
)

// NoRetry as Config.RetryMaxElapsed means a failed request is never retried.
const NoRetry time.Duration = -1

// Defaults agent-core does not make configurable.
const (
	// DefaultRetryBaseDelay is the first retry backoff; each next one doubles.
	DefaultRetryBaseDelay = time.Second
	// DefaultRetryMaxDelay caps one backoff when retry_max_delay is unset.
	DefaultRetryMaxDelay = 10 * time.Minute
)

// Capabilities switch features per model.
type Capabilities struct {
	// Image, Audio, Video and File allow those content parts.
	Image, Audio, Video, File bool
	// Tools sends native tool definitions.
	Tools bool
	// StructuredOutput sends the structured output format.
	StructuredOutput bool
	// ToolChoice sends tool_choice.
	ToolChoice bool
	// Reasoning sends reasoning from history back to the model.
	Reasoning bool
}

// CacheConfig is the prompt cache setting.
type CacheConfig struct {
	// Enabled sends the protocol's cache fields (default true).
	Enabled bool
	// Key is the cache key for chat and responses; empty means derived from
	// base URL, model and system prompt.
	Key string
	// Retention is a retention hint such as "24h".
	Retention string
	// Body holds extra request fields sent only when caching is on.
	Body map[string]any
}

// custom reports whether the cache is configured beyond on/off.
func (c CacheConfig) custom() bool {
	return c.Key != "" || c.Retention != "" || len(c.Body) > 0
}

// ProviderOptions are generation parameters and request extras.
type ProviderOptions struct {
	// Params are generation parameters; nil fields are not sent.
	Params provider.Params
	// ToolChoice is "", "auto", "none", "required" or a tool name; "" means auto
	// whenever tools are sent.
	ToolChoice string
	// Headers are extra HTTP headers.
	Headers map[string]string
	// Body is merged into the request JSON.
	Body map[string]any
	// VendorOptions are vendor blocks keyed by vendor: "openai" (chat and
	// responses), "anthropic", "google" (gemini).
	VendorOptions map[string]map[string]any
}

// OutputFormat asks for a structured result validated against a JSON Schema.
type OutputFormat struct {
	// Kind is object, array or json.
	Kind provider.OutputKind
	// Schema is the JSON Schema of the object (object), of each element
	// (array), or of the value (json; optional).
	Schema map[string]any
	// Name and Description are passed to the model.
	Name, Description string
}

// CompactConfig is the compaction model; empty fields come from the main config.
type CompactConfig struct {
	// Profile names a server profile; the server resolves it before ResolveConfig.
	Profile string
	BaseURL string
	APIKey  string
	Model   string
	// Protocol is empty when unset.
	Protocol provider.Protocol
	// Provider replaces the main provider options whole when non-nil.
	Provider *ProviderOptions
}

// Config is the resolved model configuration of an agent, agent-core's
// config with every default applied. Build one with ResolveConfig or
// DefaultConfig; the zero value is not the default.
type Config struct {
	// Profile is the profile name the config came from, for display; the
	// server merges the profile's fields before calling ResolveConfig.
	Profile string
	// BaseURL, APIKey and Model say where and what to ask.
	BaseURL, APIKey, Model string
	// Protocol is the wire protocol (default chat).
	Protocol provider.Protocol
	// System is the system prompt.
	System string
	// Stream requests a streamed response (default true).
	Stream bool
	// Cache is the prompt cache setting (default on).
	Cache CacheConfig
	// ToolMode is native (default), text or auto.
	ToolMode ToolMode
	// Capabilities default to all true except Reasoning.
	Capabilities Capabilities
	// MediaFallback is error (default) or strip.
	MediaFallback MediaFallback
	// Provider holds generation parameters and request extras.
	Provider ProviderOptions
	// MaxToolOutput cuts tool text output longer than this many characters; 0: no limit.
	MaxToolOutput int64
	// MaxLiveOutput caps the bytes of live output one tool call streams; 0: no limit.
	MaxLiveOutput int64
	// MaxTokens is the context budget in tokens; 0: no estimate, no compaction.
	MaxTokens int64
	// CompactThreshold is the share of MaxTokens that triggers compaction (default 0.8).
	CompactThreshold float64
	// Compact overrides the model used for compaction; nil: the main model.
	Compact *CompactConfig
	// Fallback lists the models a failing round is asked of next; nil: none.
	Fallback *FallbackConfig
	// Output asks for structured output; nil: plain text.
	Output *OutputFormat
	// MaxSteps limits model rounds per send; 0: no limit.
	MaxSteps int
	// MaxToolConcurrency limits tool calls running at once in a round; 0: no limit.
	MaxToolConcurrency int
	// RetryBaseDelay is the first retry backoff (default 1s); each next doubles.
	RetryBaseDelay time.Duration
	// RetryMaxDelay caps one backoff, Retry-After included (default 10 minutes).
	RetryMaxDelay time.Duration
	// RetryMaxElapsed bounds the time spent retrying; 0: no limit; NoRetry: never retry.
	RetryMaxElapsed time.Duration
	// RequestTimeout aborts one request (one attempt) after this long; 0: no limit.
	RequestTimeout time.Duration
	// NoToolPrompt is inserted before the last round allowed without a tool call.
	NoToolPrompt string
	// NoToolRounds ends a send after this many rounds without a tool call
	// (default 1); 0: never for that reason.
	NoToolRounds int
}

// DefaultConfig returns the configuration with every default applied and no
// endpoint.
func DefaultConfig() *Config {
	return &Config{
		Protocol:         provider.ProtocolChat,
		Stream:           true,
		Cache:            CacheConfig{Enabled: true},
		ToolMode:         ToolModeNative,
		Capabilities:     Capabilities{Image: true, Audio: true, Video: true, File: true, Tools: true, StructuredOutput: true, ToolChoice: true},
		MediaFallback:    MediaFallbackError,
		CompactThreshold: 0.8,
		RetryBaseDelay:   DefaultRetryBaseDelay,
		RetryMaxDelay:    DefaultRetryMaxDelay,
		NoToolRounds:     1,
	}
}

// RequireEndpoint reports a *ConfigError when the config cannot reach a model
// by itself (no base URL or no model). A caller that supplies its own eino
// model does not need it.
func (c *Config) RequireEndpoint() error {
	problems := &validator{}
	if c.BaseURL == "" {
		problems.add("config.base_url", "is required unless a model instance is supplied")
	}
	if c.Model == "" {
		problems.add("config.model", "is required unless a model instance is supplied")
	}
	return problems.err()
}

// CompactionConfig returns the configuration of the compaction model: the
// main config with the fields set in Compact replacing its own (provider
// replaced whole), no structured output and no tools. As in agent-core, an
// unset API key is inherited even when Compact changes the base URL.
func (c *Config) CompactionConfig() *Config {
	out := *c
	out.Output = nil
	out.Compact = nil
	out.Fallback = nil
	out.ToolMode = ToolModeNative
	if cc := c.Compact; cc != nil {
		if cc.Profile != "" {
			out.Profile = cc.Profile
		}
		if cc.BaseURL != "" {
			out.BaseURL = cc.BaseURL
		}
		if cc.APIKey != "" {
			out.APIKey = cc.APIKey
		}
		if cc.Model != "" {
			out.Model = cc.Model
		}
		if cc.Protocol != "" {
			out.Protocol = cc.Protocol
		}
		if cc.Provider != nil {
			out.Provider = *cc.Provider
		}
	}
	return &out
}
