// Package responses is the OpenAI Responses API (POST {BaseURL}/responses)
// as an eino model.ToolCallingChatModel. It follows the adapter contract in
// package provider; this doc lists the mapping decisions.
//
// # Request
//
//   - The leading system messages become "instructions" (joined with a
//     blank line); a system message later in the conversation stays in
//     place as a system message item.
//   - User parts become input_text, input_image (URL or data URL, detail
//     auto unless given), input_file (file_data as a data URL with its
//     filename, or file_url) and input_audio (base64 only, wav or mp3). A file
//     part is sent by its MIME type: image/* as an image, audio/* as audio.
//     Video cannot be sent and is a request error.
//   - An assistant message becomes, in order: its reasoning items (only
//     when Config.SendReasoning is set and the message carries their
//     provider data, see below), an assistant message with output_text, and
//     one function_call item per tool call (empty arguments sent as {}). A
//     call that was a custom (freeform) tool call goes back as a
//     custom_tool_call with its input.
//   - A tool result becomes function_call_output (custom_tool_call_output
//     for a custom call) whose output is the text, or, when the result has
//     files, a list of input_text, input_image and input_file parts: the
//     Responses API takes images in tool results, so no fallback is needed.
//   - Tools are function tools with strict off, so that any JSON Schema is
//     accepted. tool_choice is auto, none, required or {"type":"function",
//     "name":...}, sent only with tools.
//   - Generation parameters: temperature, top_p and max_output_tokens. The
//     Responses API has no stop, seed, top_k or penalties; they are not sent
//     (put them in provider.Body for a gateway that takes them).
//   - Structured output is text.format json_schema (strict left off), or
//     json_object for the json kind without a schema.
//   - SendReasoning adds include ["reasoning.encrypted_content"] so the
//     reasoning can be sent back without server-side storage.
//   - Cache on: prompt_cache_key and prompt_cache_retention when set, then
//     Cache.Body. Cache off: none of them.
//   - Vendor options (the "openai" block): reasoningEffort and
//     reasoningSummary go in reasoning.effort and reasoning.summary,
//     textVerbosity in text.verbosity, include is added to ours; the AI
//     SDK's own switches are applied, not sent (strictJsonSchema sets
//     text.format.strict, structuredOutputs false asks for json_object,
//     systemMessageMode "developer" sends later system messages as developer
//     messages and "remove" drops every system message, forceReasoning is
//     dropped); every other key is sent at the top level with its name in
//     snake_case. Then Cache.Body, then provider.Body, each replacing
//     top-level keys.
//
// # Response
//
//   - Decoding is by type, then fields: an event's type is read first and
//     only the events listed below are decoded further; an output item's
//     type is read first and only message, reasoning, function_call and
//     custom_tool_call items are decoded. Every other event and item
//     (hosted tools: tool_search_call, code_interpreter_call, shell_call,
//     web_search_call...) is skipped whatever its fields hold, so it can
//     never cost a known item. Unknown fields of any JSON type are ignored,
//     and a known field of an unexpected type reads as absent
//     (provider.Decode); arguments sent as a JSON object are taken as its
//     text.
//   - Stream state is keyed by position: output_index, and content_index or
//     summary_index within it, never by item_id, which some gateways rewrite
//     on every event (item_id is used only by an event without
//     output_index). A second response.created in one stream is a protocol
//     error (unknown), never a merge.
//   - Text is the output_text (and refusal) of the message items; the text
//     of two message items (e.g. a commentary and a final answer) is joined
//     with a blank line. Content parts of other types are skipped.
//   - Reasoning is the summary text of the reasoning items (or their
//     reasoning_text content where a server sends that instead), parts
//     joined with a blank line. Each reasoning item's id and
//     encrypted_content go in Extra[provider.ExtraReasoningData] under
//     "openai.reasoning", a JSON array of {"id","encrypted_content"}, which
//     is what is sent back.
//   - function_call items are tool calls (call_id as the id). A
//     custom_tool_call's free-form input is not JSON, so its arguments are
//     the input as one JSON string ("SELECT …" with quotes), and the call is
//     marked provider.FreeformKey ({"openai.type":"custom"}) in
//     ToolCall.Extra[provider.ExtraToolCallData]; it is sent back as a
//     custom_tool_call with the input verbatim.
//   - A custom_tool_call is the client's only when it names a custom tool
//     the request offered (a {"type":"custom"} entry of the tools list sent,
//     which comes from provider.Body or the vendor options: the tools this
//     package encodes are function tools). One naming none is a call the
//     provider runs itself (xAI surfaces its server-side search tools this
//     way): it is not a tool call, wherever it stands in the response
//     (last, before other calls, in a response cut at max_output_tokens),
//     and it is not kept for sending back: the provider holds its output,
//     and the answer built on it is the message text. A function_call is
//     always the client's, also one naming no offered tool (the engine
//     answers it as an unknown tool). A client custom call, and the calls
//     after it, are emitted when the response completes, in order;
//     function calls before it stream live.
//   - When a ".done" event carries more text or arguments than its deltas
//     did (a gateway that skips deltas, or a recording with deltas cut out),
//     the missing tail is emitted, so the stream gives the full answer; the
//     terminal response's output fills in what the stream did not carry at
//     all (text when none streamed, reasoning when none streamed, calls by
//     call_id), so a stream that sends only response.completed is read from
//     its output. A whole body is played through the same state.
//   - Usage: input_tokens (cached included), input_tokens_details.
//     cached_tokens, output_tokens, output_tokens_details.reasoning_tokens.
//   - Finish reason: completed is stop, or tool_calls when there are tool
//     calls; incomplete is length for max_output_tokens, content_filter for
//     content_filter, other otherwise. The raw reason (completed, or the
//     incomplete reason) is in Extra[provider.ExtraRawFinishReason].
//
// # Errors
//
// A non-2xx status is classified by provider.FromStatus. An "error" event,
// a response.failed event, and a whole response whose status is failed are
// classified by their error code. A body or event that is not the expected
// JSON, a whole response that is not finished, and a stream that ends
// without response.completed, response.incomplete or response.failed are
// unknown. A stream request answered with a JSON body is read as that body.
package responses

import (
	"context"
	"net/http"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/internal/openai"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Keys this package uses in provider data maps.
const (
	// ReasoningKey holds the reasoning items' ids and encrypted contents
	// (a JSON array) in Extra[provider.ExtraReasoningData].
	ReasoningKey = "openai.reasoning"
	// CallTypeKey marks a custom tool call ("custom") in
	// ToolCall.Extra[provider.ExtraToolCallData]: provider.FreeformKey.
	CallTypeKey = provider.FreeformKey
)

// Model is a Responses API model. It is safe for concurrent use.
type Model struct {
	cfg   provider.Config
	tools []*schema.ToolInfo
}

var _ model.ToolCallingChatModel = (*Model)(nil)

// New returns a model for cfg. Model is required.
func New(cfg provider.Config) (*Model, error) {
	cfg, err := cfg.WithDefaults(DefaultBaseURL)
	if err != nil {
		return nil, provider.RequestError("responses: %w", err)
	}
	return &Model{cfg: cfg}, nil
}

// WithTools returns a copy of the model that offers tools.
func (m *Model) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.tools = tools
	return &c, nil
}

// Generate sends one non-streaming request.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	resp, custom, err := m.post(ctx, input, false, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadWhole(ctx, resp, wholeReader(custom))
}

// Stream sends one streaming request. The stream's goroutine ends when the
// response ends, when the reader is closed (noticed at the next event), or
// when ctx is done.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	resp, custom, err := m.post(ctx, input, true, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadStream(ctx, resp, wholeReader(custom), func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, custom, emit)
	})
}

// StreamEach implements provider.Streamer: Stream without its goroutine.
func (m *Model) StreamEach(ctx context.Context, input []*schema.Message, emit func(*schema.Message) bool, opts ...model.Option) error {
	resp, custom, err := m.post(ctx, input, true, opts)
	if err != nil {
		return err
	}
	return provider.ReadEach(ctx, resp, wholeReader(custom), func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, custom, emit)
	}, emit)
}

// post sends the request; custom names the custom tools it offered, which
// tell the client's custom calls from the provider's (stream.providers).
func (m *Model) post(ctx context.Context, input []*schema.Message, stream bool, opts []model.Option) (resp *http.Response, custom map[string]bool, err error) {
	call := provider.ApplyOptions(m.cfg, m.tools, opts...)
	body, err := buildRequest(m.cfg, call, input, stream)
	if err != nil {
		return nil, nil, err
	}
	custom = customTools(body["tools"])
	resp, err = provider.PostJSON(ctx, m.cfg, m.cfg.BaseURL+"/responses", openai.Header(m.cfg, stream), body)
	return resp, custom, err
}

// wholeReader is decodeWhole for a request that offered the custom tools
// named in custom.
func wholeReader(custom map[string]bool) func([]byte) ([]*schema.Message, error) {
	return func(body []byte) ([]*schema.Message, error) { return decodeWhole(body, custom) }
}
