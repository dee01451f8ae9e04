// Package gemini is the Gemini API (POST {BaseURL}/models/{model}:generateContent,
// and :streamGenerateContent?alt=sse) as an eino model.ToolCallingChatModel,
// written on net/http and pkg/llm/sse. It follows the adapter contract in
// pkg/llm/provider.
//
// # Requests
//
//   - Headers: x-goog-api-key (Config.APIKey, never logged), then
//     Config.Headers. A model name holding a slash (tunedModels/x,
//     models/y) is used as the path as it is.
//   - System: the leading schema.System messages become systemInstruction
//     text parts; a system message later in the conversation is sent as user
//     text in place.
//   - User: text parts; every image, audio, video and file part becomes
//     inlineData (Base64Data or a data: URL) or fileData (any other URL) with
//     its MIME type (for a URL without one, the type its extension implies).
//     Gemini takes all of these natively.
//   - Assistant (role model): with Config.SendReasoning, the reasoning as a
//     thought part first and the kept thought signature on the text part; then
//     the text; then one functionCall part per tool call. A call's thought
//     signature and Gemini's own call id (when it gave one) live in
//     ToolCall.Extra[provider.ExtraToolCallData] under
//     "gemini.thought_signature" and "gemini.id" and always travel with the
//     call, SendReasoning or not: Gemini rejects a current-turn function call
//     whose signature was dropped. Arguments that are not a JSON object are
//     sent as {"raw_arguments": "<text>"}.
//   - Tool results: functionResponse parts (name, Gemini's id when it gave
//     one) in a user turn, consecutive results in one turn, a turn's
//     functionResponse parts before its other parts. functionResponse
//     takes a JSON object, so the result is wrapped as {"output": v} ({"error":
//     v} for a failed call), v being the parsed JSON when Content is JSON and
//     the text otherwise. Fallback for
//     content parts: text parts are joined into output; files (images…)
//     cannot go inside a functionResponse, so the output says how many files
//     follow and each file is sent as an inlineData/fileData part after all of
//     the turn's functionResponse parts, preceded by a text part naming the
//     call it belongs to.
//   - Consecutive messages of the same role are merged into one turn; empty
//     text is not sent.
//   - Tools: one tools entry with functionDeclarations (name, description,
//     parametersJsonSchema: the full JSON Schema, no OpenAPI conversion).
//     toolConfig.functionCallingConfig is sent only with tools: auto → AUTO,
//     required → ANY, none → NONE, a tool name → ANY with
//     allowedFunctionNames [name].
//   - generationConfig: temperature, topP, topK, maxOutputTokens,
//     stopSequences, seed, presencePenalty, frequencyPenalty.
//   - Structured output: generationConfig.responseMimeType "application/json"
//     and responseJsonSchema (the schema as given); a json output without a
//     schema sends only the MIME type.
//   - Vendor options (Config.VendorOptions, the "google" block):
//     safetySettings, cachedContent, labels and toolConfig go to the request
//     top level, retrievalConfig into toolConfig, generationConfig is merged
//     into generationConfig, structuredOutputs (an AI SDK switch) is dropped,
//     and every other key (thinkingConfig, responseModalities,
//     mediaResolution…) goes into generationConfig.
//   - Caching: Gemini caches implicitly; nothing is sent whether caching is
//     on or off (Cache.Body is not sent either: there is no field for it).
//   - Config.Body is merged last into the request's top level.
//
// # Responses
//
//   - Candidate 0 (by its index) is read. Text parts → Content; thought
//     parts → ReasoningContent; the last thought signature on a non-call part
//     is kept in Extra[provider.ExtraReasoningData] under
//     "gemini.thought_signature". Parts of other kinds (executableCode,
//     codeExecutionResult, inline data...) are skipped. Unknown fields of any
//     JSON type are ignored, and a known field of an unexpected type reads as
//     absent (provider.Decode). A stream chunk holding none of candidates,
//     promptFeedback and usageMetadata is skipped; a whole body must hold
//     one.
//   - functionCall parts → ToolCalls (Index counts calls from 0, Type
//     "function"). Gemini gives no call id unless it does: the id is Gemini's
//     when present, otherwise a random "call_" id. Arguments streamed as
//     partialArgs (jsonPath + value, willContinue) are assembled and emitted
//     whole when the call ends.
//   - Usage: input is promptTokenCount (cached tokens included) plus
//     toolUsePromptTokenCount, cache read is cachedContentTokenCount (Gemini
//     reports no cache write), output is candidatesTokenCount +
//     thoughtsTokenCount, reasoning is thoughtsTokenCount, total is
//     totalTokenCount.
//   - Finish reasons: STOP → stop, or tool_calls when the response has
//     function calls; MAX_TOKENS → length; SAFETY, RECITATION, BLOCKLIST,
//     PROHIBITED_CONTENT, SPII and the IMAGE_* safety reasons, and a blocked
//     prompt (promptFeedback.blockReason) → content_filter;
//     MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS,
//     MISSING_THOUGHT_SIGNATURE → error; others → other. The raw reason is in
//     Extra[provider.ExtraRawFinishReason].
//   - Errors: HTTP statuses through provider.FromStatus (a 429's RetryInfo
//     retryDelay becomes RetryAfter); an {"error":…} object inside the stream
//     through provider.FromStreamError by its status; a 2xx body of the wrong
//     shape, or a stream that ends (cleanly or cut) without a finishReason, is
//     provider.KindUnknown. A whole body that cannot be read to its end is a
//     transport error (provider.FromTransport). A streaming request answered
//     with JSON (one response, or the array streamGenerateContent sends
//     without alt=sse) is read as that body.
//
// A Stream's reader must be closed or read to its end: that ends the
// goroutine reading the body.
package gemini
