// Package provider holds what every model protocol adapter shares: the
// adapter's configuration, the one error type with its kinds, the one
// classifier that maps HTTP and stream failures to kinds, and the keys under
// which adapters put what eino's schema.Message has no field for.
//
// An adapter (pkg/llm/chat, responses, anthropic, gemini) is an eino
// model.ToolCallingChatModel built from a Config. Its contract:
//
//   - Generate does one non-streaming request; Stream does one SSE request.
//     Concatenating the streamed chunks with schema.ConcatMessages gives the
//     same message Generate returns for the same response.
//   - A streamed chunk carries a delta: Content (text), ReasoningContent, or
//     ToolCalls with Index set (ID and Function.Name on the call's first
//     chunk, Function.Arguments as pieces). The final chunk carries
//     ResponseMeta with the normalised finish reason and the usage.
//   - Usage.PromptTokens counts every input token, cached ones included;
//     PromptTokenDetails.CachedTokens is the cache read;
//     Extra[ExtraCacheWriteTokens] (int) is the cache write;
//     CompletionTokensDetails.ReasoningTokens where the provider reports it.
//   - Reasoning provider data (signatures, encrypted content, item ids) goes
//     in Extra[ExtraReasoningData] (map[string]string); per-call provider data
//     (e.g. Gemini thought signatures) in ToolCall.Extra[ExtraToolCallData].
//   - A tool result message of a failed call has Extra[ExtraToolError] = true.
//   - Every failure is a *Error, from Generate, Stream or the stream's Recv.
//     Adapters never retry: pkg/llm does.
//   - Adapters honour eino common options (model.WithTemperature,
//     WithMaxTokens, WithTopP, WithStop, WithToolChoice, WithTools) over Config.
package provider

import (
	"net/http"
	"strconv"
	"time"
)

// Protocol names a wire protocol.
type Protocol string

// The four protocols.
const (
	ProtocolChat      Protocol = "chat"
	ProtocolResponses Protocol = "responses"
	ProtocolAnthropic Protocol = "anthropic"
	ProtocolGemini    Protocol = "gemini"
)

// Keys in schema.Message.Extra and schema.ToolCall.Extra.
const (
	// ExtraCacheWriteTokens holds input tokens written to the cache (int).
	ExtraCacheWriteTokens = "agentcore.cache_write_tokens"
	// ExtraReasoningData holds reasoning provider data (map[string]string).
	ExtraReasoningData = "agentcore.reasoning_data"
	// ExtraToolCallData holds per-call provider data (map[string]string).
	ExtraToolCallData = "agentcore.tool_call_data"
	// ExtraRawFinishReason holds the provider's own finish reason (string).
	ExtraRawFinishReason = "agentcore.raw_finish_reason"
	// ExtraToolError marks a schema.Tool message whose call failed (bool);
	// protocols with an error flag on tool results (Anthropic's is_error) set it.
	ExtraToolError = "agentcore.tool_error"
	// ExtraResponseModel holds the model name the response reports (string),
	// which may differ from the one asked for (a dated version, a router's pick).
	ExtraResponseModel = "agentcore.response_model"
)

// A call to a custom (freeform) tool takes the model's free text, not JSON:
// its ToolCall.Extra[ExtraToolCallData] holds FreeformKey = FreeformCall, and
// its arguments are that text as one JSON string, so that history keeps it
// verbatim and JSON-valid. The OpenAI adapters send it back as written.
const (
	FreeformKey  = "openai.type"
	FreeformCall = "custom"
)

// Normalised finish reasons.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
	FinishError         = "error"
	FinishOther         = "other"
)

// Config is what an adapter needs to talk to one model.
type Config struct {
	// BaseURL is the service address, e.g. https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent the way the protocol expects. Never logged.
	APIKey string
	// Model is the model name.
	Model string
	// HTTPClient is used for every request; nil means a default client.
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers map[string]string
	// Body is merged into the request JSON (top-level keys, ours replaced).
	Body map[string]any
	// Params are generation parameters; nil fields are not sent.
	Params Params
	// ToolChoice is "", "auto", "none", "required" or a tool name. Empty or
	// OmitToolChoice means the field is not sent.
	ToolChoice string
	// OmitToolChoice leaves tool_choice out even when set (capabilities.toolChoice false).
	OmitToolChoice bool
	// Cache controls prompt caching fields.
	Cache Cache
	// Output asks for structured output; nil means plain text.
	Output *Output
	// VendorOptions is this vendor's own options block, merged the vendor's way.
	VendorOptions map[string]any
	// SendReasoning sends reasoning from input messages back to the model.
	SendReasoning bool
}

// Params are generation parameters.
type Params struct {
	Temperature      *float64
	TopP             *float64
	TopK             *int
	MaxOutputTokens  *int
	Stop             []string
	Seed             *int64
	PresencePenalty  *float64
	FrequencyPenalty *float64
}

// Cache is the prompt cache setting resolved for one request.
type Cache struct {
	// Enabled sends the protocol's cache fields.
	Enabled bool
	// Key is the prompt_cache_key (chat, responses); pkg/llm fills the default.
	Key string
	// Retention is e.g. "24h" or "1h".
	Retention string
	// Body holds extra fields merged into the request when caching is on.
	Body map[string]any
}

// OutputKind is the shape of structured output.
type OutputKind string

// Output kinds.
const (
	OutputObject OutputKind = "object"
	OutputArray  OutputKind = "array"
	OutputJSON   OutputKind = "json"
)

// Output is a structured output request. Schema is the JSON Schema of the
// whole response: for arrays pkg/llm wraps the element schema as
// {"type":"object","properties":{"elements":{"type":"array","items":…}}}.
type Output struct {
	Kind        OutputKind
	Name        string
	Description string
	Schema      map[string]any
}

// Kind classifies a model error.
type Kind string

// The error kinds, as agent-core names them.
const (
	KindAborted Kind = "aborted"
	KindAuth    Kind = "auth"
	KindLimit   Kind = "limit"
	KindTimeout Kind = "timeout"
	KindServer  Kind = "server"
	KindNetwork Kind = "network"
	KindRequest Kind = "request"
	KindUnknown Kind = "unknown"
)

// Error is every failure of a model request.
type Error struct {
	Kind Kind
	// Status is the upstream HTTP status, 0 if none.
	Status int
	// Code is the provider's error type or code, e.g. rate_limit_error.
	Code string
	// Message is the provider's message, or ours.
	Message string
	// Retryable says whether sending the same request again may succeed.
	Retryable bool
	// RetryAfter is the server's requested delay, 0 if none.
	RetryAfter time.Duration
	// Endpoint is the host and path the request went to (never its query,
	// which may hold a key, nor credentials); empty when not known.
	Endpoint string
	// Unreachable says that the request never reached the model service:
	// the connection was refused, the host name did not resolve, or the
	// TLS handshake failed. Such an error is KindNetwork (or KindTimeout
	// for a dial that timed out), retryable as those are.
	Unreachable bool
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	s := string(e.Kind) + " error"
	if e.Status != 0 {
		s += " (HTTP " + strconv.Itoa(e.Status) + ")"
	}
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Endpoint != "" {
		s += " calling " + e.Endpoint
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
