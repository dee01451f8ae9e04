// Package anthropic is the Anthropic Messages API (POST {BaseURL}/messages)
// as an eino model.ToolCallingChatModel, written on net/http and pkg/llm/sse.
// It follows the adapter contract in pkg/llm/provider.
//
// # Requests
//
//   - Headers: x-api-key (Config.APIKey, never logged), anthropic-version
//     2023-06-01, then Config.Headers (which may override both, or add
//     anthropic-beta).
//   - System: the leading schema.System messages become the top-level
//     "system" text blocks. A system message later in the conversation is sent
//     as user text in place, since the Messages API has no system turn.
//   - User: Content, or UserInputMultiContent parts. Text parts are text
//     blocks. Images (image parts, and file parts whose MIME type is image/*)
//     are image blocks; PDFs are document blocks; text/* and application/json
//     files are document blocks with a plain-text source. Inline data (Base64Data
//     or a data: URL) is sent as a base64 source, other URLs as a url source.
//     Audio and video have no Messages API block: they are refused with a
//     request error (pkg/llm strips them first when mediaFallback is strip).
//   - Assistant: thinking blocks (see Reasoning), then the text, then one
//     tool_use block per tool call. Arguments that are not a JSON object are
//     sent as {"raw_arguments": "<text>"} so a history with a broken call can
//     still be sent.
//   - Tool results: schema.Tool messages become tool_result blocks in a user
//     turn (consecutive results share one turn, and a turn's tool_result
//     blocks go before its other blocks, as the API requires). Content is sent as the
//     block's string content; UserInputMultiContent parts as text, image and
//     document blocks inside the tool_result, which the API accepts, so no
//     fallback is needed for images here.
//   - Consecutive messages of the same role are merged into one turn; empty
//     text is never sent (the API rejects empty text blocks).
//   - Tools: name, description and input_schema (an empty object schema when
//     the tool has no parameters). tool_choice is sent only with tools: auto
//     → {"type":"auto"}, required → {"type":"any"}, none → {"type":"none"},
//     a tool name → {"type":"tool","name":…}; eino's WithToolChoice maps the
//     same way.
//   - Generation parameters: temperature, top_p, top_k, stop_sequences and
//     max_tokens, which the API requires: DefaultMaxTokens when unset. Seed and
//     the presence/frequency penalties have no Anthropic field and are not sent.
//   - Vendor options (Config.VendorOptions, the "anthropic" block) are merged
//     into the request top level with camelCase keys turned into snake_case
//     (so both {"thinking":{"type":"enabled","budgetTokens":2048}} and the
//     wire spelling work). Two keys are special: "effort" goes to
//     output_config.effort, and "disableParallelToolUse" to
//     tool_choice.disable_parallel_tool_use. AI SDK options that are not
//     request fields (sendReasoning, structuredOutputMode, toolStreaming,
//     cacheControl) are dropped. With thinking on ("enabled" or "adaptive"),
//     temperature, top_p and top_k are left out, since the API rejects them
//     with extended thinking; with a budget, max_tokens becomes the budget
//     plus the visible output limit.
//   - Caching: when Cache.Enabled, a cache_control {"type":"ephemeral"}
//     breakpoint goes on the last system block and on the last cacheable block
//     of the last message (never a thinking block). Cache.Retention becomes its
//     ttl: a duration of an hour or more is "1h", a shorter one "5m" (the two
//     the API offers), anything unparsable is sent as given. Cache.Body is
//     merged into the request. When caching is off none of this is sent.
//   - Structured output uses the native JSON outputs feature:
//     output_config.format {"type":"json_schema","schema":…}. It is
//     constrained decoding, so the text is valid JSON for the schema; unlike a
//     forced tool it leaves the model free to call the real tools first and it
//     works with extended thinking (a forced tool_choice does neither). Object
//     schemas without additionalProperties get "additionalProperties": false,
//     which the API requires; pkg/llm validates the result against the
//     caller's original schema. A json output without a schema sends nothing.
//   - Config.Body is merged last into the request's top level.
//
// # Responses
//
//   - text blocks → Content; tool_use → ToolCalls (Index counts tool calls
//     from 0, Type "function", empty input → "{}"); thinking → ReasoningContent.
//     Server tool blocks (server_tool_use, *_tool_result, mcp_tool_use) run
//     on Anthropic's side and are not returned as calls.
//   - Decoding is by type, then fields: an event's, a block's and a delta's
//     type is read first, and only the types above are decoded further;
//     every other event, block and delta is skipped whatever its fields
//     hold. Unknown fields of any JSON type are ignored (provider.Decode).
//   - Stream state is keyed by the block index. A block is open from its
//     content_block_start until its content_block_stop, a new start at its
//     index, or the end of the message. message_start's message may already
//     hold blocks and a stop_reason (continuation messages of programmatic
//     tool calling): they are read as if streamed. A second message_start
//     while a message is open is a protocol error (unknown, naming both
//     message ids): two messages are never merged.
//   - Reasoning: each thinking block's signature and each redacted_thinking
//     block's data are kept in Extra[provider.ExtraReasoningData] under
//     "anthropic.thinking", a JSON array of {"signature","length"} (length is
//     the block's share of ReasoningContent, in bytes) and {"redacted"}
//     entries, in order. With Config.SendReasoning the blocks are rebuilt and
//     sent first in the assistant turn; without it no reasoning is sent.
//     Reasoning without a signature (from another provider) cannot be sent
//     back to Anthropic and is dropped.
//   - Usage: input counts everything: input_tokens + cache_read_input_tokens
//   - cache_creation_input_tokens; the cache read is
//     PromptTokenDetails.CachedTokens, the cache write is
//     Extra[provider.ExtraCacheWriteTokens]; output_tokens (thinking
//     included) is the output, output_tokens_details.thinking_tokens the
//     reasoning tokens. In a stream, message_start gives the first counts and
//     every field present in message_delta replaces it.
//   - Finish reasons: end_turn, stop_sequence → stop; tool_use → tool_calls;
//     max_tokens, model_context_window_exceeded → length; refusal →
//     content_filter; pause_turn and others → other. The raw reason is in
//     Extra[provider.ExtraRawFinishReason].
//   - Errors: HTTP statuses through provider.FromStatus; an "error" event in
//     the stream (overloaded_error, rate_limit_error…), or a 2xx body that is
//     an error object, through provider.FromStreamError by its type; a 2xx
//     body of the wrong shape, or a stream that ends (cleanly or cut) before
//     message_stop, is provider.KindUnknown. A whole body that cannot be read
//     to its end is a transport error (provider.FromTransport). A streaming
//     request answered with a JSON body is read as that body.
//
// A Stream's reader must be closed or read to its end: that ends the
// goroutine reading the body.
package anthropic
