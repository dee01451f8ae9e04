package fakemodel

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// Turn is one scripted model reply.
type Turn struct {
	// Text is the whole answer text, sent as one delta when streaming.
	Text string
	// TextChunks, when set, are the text deltas (Text is then ignored).
	TextChunks []string
	// Reasoning is the model's reasoning ("thinking") text.
	Reasoning string
	// ReasoningSignature is the protocol's opaque reasoning token: Anthropic's
	// thinking signature, the Responses encrypted_content, Gemini's thought
	// signature.
	ReasoningSignature string
	// ToolCalls are the tool calls the model makes.
	ToolCalls []ToolCall
	// Usage is reported when set.
	Usage *Usage
	// FinishReason is stop, length, tool_calls or content_filter; empty means
	// tool_calls when there are tool calls and stop otherwise. Other values are
	// sent as they are.
	FinishReason string

	// Status, when 400 or more, makes an HTTP error reply with ErrorBody, or
	// the protocol's error body for that status when ErrorBody is empty. With
	// Raw it is the status sent with the raw body.
	Status int
	// ErrorBody is the body of an HTTP error reply.
	ErrorBody string
	// Header is added to the reply (e.g. Retry-After).
	Header http.Header
	// StreamError ends a stream with the protocol's error event after the
	// turn's content. A non-streaming request gets a success status with the
	// protocol's error body instead, as some gateways do.
	StreamError *StreamError

	// Delay is waited before the response headers are sent.
	Delay time.Duration
	// ChunkDelay is waited between streamed events.
	ChunkDelay time.Duration
	// CutAfter, when positive, drops the connection after that many events,
	// so the terminal event is not sent (with N at least the event count,
	// after all of them); a non-streaming reply is cut halfway.
	CutAfter int
	// StallAfter, when positive, stops sending after that many events (or
	// all of them) and holds the connection open until the client goes or
	// the server closes; a non-streaming reply stalls after its headers.
	StallAfter int
	// EndDelay is waited after a stream's last event before its body ends,
	// as a server or gateway that is slow to end the response.
	EndDelay time.Duration

	// Events, when set, are streamed instead of the events encoded from the
	// turn; ChunkDelay, CutAfter and StallAfter apply.
	Events []Event
	// Raw, when set, is sent verbatim as the body, with Status (default 200).
	Raw []byte
	// RawContentType is Raw's Content-Type; empty means text/event-stream for
	// a streaming request and application/json otherwise.
	RawContentType string
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	// ID is the call id; empty means one is made up.
	ID string
	// Name is the tool name.
	Name string
	// Arguments is the arguments JSON text.
	Arguments string
}

// Usage is scripted token usage, protocol-neutral.
type Usage struct {
	// Input counts every input token, cache reads and writes included;
	// encoders subtract the cached parts where the protocol counts them apart.
	Input int
	// Output counts every output token, reasoning included.
	Output int
	// CacheRead counts input tokens served from the prompt cache.
	CacheRead int
	// CacheWrite counts input tokens written to the prompt cache.
	CacheWrite int
	// Reasoning counts output tokens spent on reasoning.
	Reasoning int
}

// StreamError is an error reported inside a stream.
type StreamError struct {
	// Type is the provider's error type or code, e.g. rate_limit_exceeded.
	Type string
	// Message is the error message.
	Message string
}

// Event is one server-sent event.
type Event struct {
	// Name is the "event:" field; empty sends none.
	Name string
	// Data is sent as "data:" lines, one per line of Data.
	Data string
}

// text returns the turn's text deltas.
func (t Turn) text() []string {
	if t.TextChunks != nil {
		return t.TextChunks
	}
	if t.Text == "" {
		return nil
	}
	return []string{t.Text}
}

// fullText returns the turn's whole text.
func (t Turn) fullText() string { return strings.Join(t.text(), "") }

// finish returns the neutral finish reason.
func (t Turn) finish() string {
	if t.FinishReason != "" {
		return t.FinishReason
	}
	if len(t.ToolCalls) > 0 {
		return provider.FinishToolCalls
	}
	return provider.FinishStop
}

// callID returns the id of the turn's i-th tool call.
func (t Turn) callID(i int) string {
	if id := t.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_fake_%d", i)
}
