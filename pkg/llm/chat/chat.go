// Package chat is the OpenAI Chat Completions protocol (POST
// {BaseURL}/chat/completions) as an eino model.ToolCallingChatModel, for
// OpenAI and the many gateways that copy it. It follows the adapter contract
// in package provider; this doc lists the mapping decisions.
//
// # Request
//
//   - System messages are "system" messages, in place.
//   - User text is a string; parts become text, image_url (images by URL or
//     as a data URL), input_audio (base64 only; format wav or mp3 from the
//     MIME type) and file (base64 only, as file_data with its filename). A
//     file part is sent by its MIME type: image/* as an image, audio/* as
//     audio. Video, audio by URL and non-image files by URL cannot be sent
//     and are a request error.
//   - Assistant messages carry content (null when there is only tool
//     calls), tool_calls (empty arguments are sent as {}), and, when
//     Config.SendReasoning is set, reasoning_content as DeepSeek-style
//     gateways take it back.
//   - A tool result is a "tool" message whose content is the result text.
//     Chat Completions takes no images in tool messages, so a result with
//     files keeps its text, says in the tool message which files follow, and
//     the files go in one user message placed right after the run of tool
//     messages (a user message between tool messages would break the
//     tool_calls pairing).
//   - Tools are function tools; a tool without parameters gets an empty
//     object schema. tool_choice is auto, none, required or
//     {"type":"function",...} for a tool name, and is sent only with tools.
//   - Generation parameters: temperature, top_p, stop, seed,
//     presence_penalty, frequency_penalty, and top_k for the gateways that
//     take it (OpenAI itself rejects top_k: set it only for such gateways).
//     The output limit is max_completion_tokens for api.openai.com and Azure
//     OpenAI (reasoning models refuse max_tokens there) and max_tokens for
//     every other endpoint, where it is the field gateways know.
//   - Structured output is response_format json_schema (object and array
//     kinds, strict left to the server's default so that any schema is
//     accepted), or json_object for the json kind without a schema.
//   - Streaming sets stream_options.include_usage so the usage arrives.
//   - Cache on: prompt_cache_key and prompt_cache_retention when set, then
//     Cache.Body. Cache off: none of them.
//   - Vendor options (the "openai" block) are merged at the top level with
//     AI SDK style names turned into the wire's: reasoningEffort becomes
//     reasoning_effort, textVerbosity becomes verbosity, and so on; values
//     are sent as given. The AI SDK's own switches are applied, not sent:
//     strictJsonSchema sets json_schema.strict, structuredOutputs false asks
//     for json_object, systemMessageMode "developer" sends system messages
//     as developer messages and "remove" drops them; forceReasoning is
//     dropped. Then Cache.Body, then provider.Body, each replacing top-level
//     keys.
//
// # Response
//
//   - Reading is lenient by rule: unknown fields of any JSON type are
//     ignored, and a known field of an unexpected JSON type reads as absent
//     (provider.Decode). A chunk without choices (a keep-alive, a gateway's
//     own event) is skipped.
//   - Text from content: a string, or an array of parts as some gateways
//     send: text (and output_text) parts are text, thinking parts (Mistral:
//     {"type":"thinking","thinking":[text parts]}) are reasoning, parts of
//     any other type are skipped. A refusal is text too.
//   - Reasoning from the first spelling present: reasoning_content
//     (DeepSeek, Qwen, Moonshot, xAI), reasoning (OpenRouter, Groq, vLLM),
//     reasoning_details text and summary entries (OpenRouter), else content
//     thinking parts. Taking one spelling keeps a server that sends two
//     (OpenRouter: reasoning and reasoning_details) from doubling it.
//   - Tool calls keep the server's ids; in a stream their pieces are joined
//     by the wire index, numbered from 0 in the order the calls start (some
//     gateways start at 1), and a piece without an index belongs to the call
//     with its id, else to the latest call. A call of a type other than
//     function or custom is skipped with all its pieces. A custom (freeform)
//     call's free text (custom.input) becomes one JSON string as its
//     arguments, marked provider.FreeformKey, and is sent back as a custom
//     call with the text verbatim.
//   - Usage: prompt_tokens (cached included), prompt_tokens_details.
//     cached_tokens (or DeepSeek's prompt_cache_hit_tokens) as the cache read,
//     prompt_tokens_details.cache_write_tokens (a gateway extension) as the
//     cache write, completion_tokens_details.reasoning_tokens. Output
//     includes the reasoning tokens: when completion_tokens leave them out
//     (xAI: total_tokens = prompt + completion + reasoning), they are added.
//   - Finish reason normalised (stop, length, tool_calls, content_filter,
//     other; a stop with tool calls is tool_calls), the raw one in
//     Extra[provider.ExtraRawFinishReason].
//   - Only choice 0 is read.
//
// # Errors
//
// A non-2xx status is classified by provider.FromStatus. A 2xx body holding
// an error object, or a stream chunk holding one, is classified by its code
// or type. A 2xx body or chunk that is not the expected JSON, and a stream
// that ends with neither [DONE] nor a finish reason, are unknown. A stream
// that sent its finish reason and then ended without [DONE] is accepted. A
// stream request answered with a JSON body is read as that body.
package chat

import (
	"context"
	"net/http"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/internal/openai"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	"github.com/agentcore/agentcore/pkg/llm/sse"
)

// Model is a Chat Completions model. It is safe for concurrent use.
type Model struct {
	cfg   provider.Config
	tools []*schema.ToolInfo
}

var _ model.ToolCallingChatModel = (*Model)(nil)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// New returns a model for cfg. Model is required.
func New(cfg provider.Config) (*Model, error) {
	cfg, err := cfg.WithDefaults(DefaultBaseURL)
	if err != nil {
		return nil, provider.RequestError("chat: %w", err)
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
	resp, err := m.post(ctx, input, false, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadWhole(ctx, resp, decodeWhole)
}

// Stream sends one streaming request. The stream's goroutine ends when the
// response ends, when the reader is closed (noticed at the next event), or
// when ctx is done.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	resp, err := m.post(ctx, input, true, opts)
	if err != nil {
		return nil, err
	}
	return provider.ReadStream(ctx, resp, decodeWhole, func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, emit)
	})
}

// StreamEach implements provider.Streamer: Stream without its goroutine.
func (m *Model) StreamEach(ctx context.Context, input []*schema.Message, emit func(*schema.Message) bool, opts ...model.Option) error {
	resp, err := m.post(ctx, input, true, opts)
	if err != nil {
		return err
	}
	return provider.ReadEach(ctx, resp, decodeWhole, func(r *sse.Reader, emit func(*schema.Message) bool) error {
		return readStream(ctx, r, emit)
	}, emit)
}

func (m *Model) post(ctx context.Context, input []*schema.Message, stream bool, opts []model.Option) (*http.Response, error) {
	call := provider.ApplyOptions(m.cfg, m.tools, opts...)
	body, err := buildRequest(m.cfg, call, input, stream)
	if err != nil {
		return nil, err
	}
	return provider.PostJSON(ctx, m.cfg, m.cfg.BaseURL+"/chat/completions", openai.Header(m.cfg, stream), body)
}
