// Package llm asks a model for one response: it resolves the model
// configuration, converts history to the wire, picks the protocol adapter
// (chat, responses, anthropic, gemini) or uses a caller's eino model, streams
// deltas, retries what can be retried, speaks the text tool protocol when the
// model has no native tools, and reads structured output. It is
// agent-core's LLM.chat; the agent loop lives above it.
//
// Every model failure is an *Error (provider.Error) with a stable Kind.
// Invalid configuration is a *ConfigError naming the bad field.
package llm

import (
	"time"

	"github.com/cloudwego/eino/components/model"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/texttool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Error is every failure of a model request.
type Error = provider.Error

// Kind classifies an Error.
type Kind = provider.Kind

// The error kinds, as agent-core names them.
const (
	KindAborted = provider.KindAborted
	KindAuth    = provider.KindAuth
	KindLimit   = provider.KindLimit
	KindTimeout = provider.KindTimeout
	KindServer  = provider.KindServer
	KindNetwork = provider.KindNetwork
	KindRequest = provider.KindRequest
	KindUnknown = provider.KindUnknown
)

// Tool is a tool offered to the model: name, description, input JSON Schema.
type Tool = texttool.Tool

// Request is one model request.
type Request struct {
	// Config is the resolved configuration (required).
	Config *Config
	// System is the system prompt to send; empty means Config.System. The
	// engine passes the prompt it built (skills, the latest summary…).
	System string
	// Messages is the history to send, already windowed by the caller.
	Messages []*agentv1.Message
	// Tools are the tools the model may call.
	Tools []Tool
	// ToolSet, when set, is used instead of Tools: the tools converted once
	// (see ToolDef), so that the request only copies their definitions.
	ToolSet *ToolSet
	// Model, when set, is used instead of an adapter built from Config: the
	// caller's eino model with its own connection. Then Config's base URL,
	// key and protocol are not needed; provider.body, a custom cache object,
	// vendor options and parameters eino cannot express are a *ConfigError;
	// the default cache is skipped; headers need a model that implements
	// HeaderModel. The model must not change the messages it is given.
	Model model.ToolCallingChatModel
	// ConversionCache, when set, keeps the eino form of Messages and Tools
	// for the next request, which then converts only what is new (an
	// agent's run passes the same one to each of its requests).
	ConversionCache *ConversionCache
	// OnDelta receives each streamed piece of the response, in order, on the
	// calling goroutine. Text-protocol <tool_call> text is passed through.
	OnDelta func(Delta)
	// OnRetry is called before each retry.
	OnRetry func(Retry)
	// Reached says that the model service answered an earlier request of
	// the caller's run: a failure to reach it now (a restart, a network
	// blip) is retried as other network errors are, not cut short by
	// Options.RetryUnreachable.
	Reached bool
}

// HeaderModel is a caller's eino model that can take extra request headers
// (provider.headers).
type HeaderModel interface {
	// WithHeaders returns a model that adds h to every request.
	WithHeaders(h map[string]string) (model.ToolCallingChatModel, error)
}

// Delta is one streamed piece of a response: exactly one field is set.
type Delta struct {
	Text      string
	Reasoning string
	ToolCall  *ToolCallDelta
}

// ToolCallDelta is a streamed piece of a native tool call.
type ToolCallDelta struct {
	// Index is the call's position in the response.
	Index int
	// ID and Name are set on the call's first piece.
	ID, Name string
	// Arguments is a piece of the arguments JSON.
	Arguments string
}

// Retry describes a retry about to happen.
type Retry struct {
	// Attempt is 1 for the first retry.
	Attempt int
	// Err is the error that is retried.
	Err *Error
	// Delay is the wait before the retry.
	Delay time.Duration
}

// InvalidToolCall is a call the model wrote that cannot be run: unreadable
// text-protocol JSON, or native arguments that are not a JSON object. The
// assistant message holds it as a tool-call part with the same ID; the
// engine answers it with an error tool result carrying Feedback.
type InvalidToolCall struct {
	// ID is the id of the tool-call part in Result.Message.
	ID string
	// Name is the tool name, when it could be read.
	Name string
	// Arguments is what the model wrote.
	Arguments string
	// Feedback is the tool result text that tells the model to rewrite the call.
	Feedback string
}

// Result is a model response.
type Result struct {
	// Message is the assistant message for history: reasoning, text and
	// standard tool-call parts (even in text mode), usage, finish reason.
	Message *agentv1.Message
	// Text is the answer text, without text-protocol call blocks.
	Text string
	// Reasoning is the model's reasoning text.
	Reasoning string
	// ToolCalls are the calls to run, in order.
	ToolCalls []*agentv1.ToolCallPart
	// InvalidToolCalls are the calls to answer with their Feedback.
	InvalidToolCalls []InvalidToolCall
	// Usage counts the tokens of this response (failed attempts report no
	// usage, so only the attempt that succeeded is counted).
	Usage *agentv1.Usage
	// FinishReason is stop, length, tool_calls, content_filter, error or other.
	FinishReason string
	// Output is the validated structured output; nil unless Config.Output is
	// set and the response has no tool calls.
	Output *structpb.Value
	// TextProtocol says the response was read with the text tool protocol.
	TextProtocol bool
	// ResponseModel is the model the response says answered; empty when
	// the protocol adapter did not report it.
	ResponseModel string
}
