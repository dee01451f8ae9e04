package gemini

import (
	"net/http"
	"testing"
	"time"

	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// data returns provider data from msg: the reasoning data, or call i's.
func data(msg *schema.Message, call int) map[string]string {
	if call < 0 {
		return provider.StringMap(msg.Extra[provider.ExtraReasoningData])
	}
	return provider.StringMap(msg.ToolCalls[call].Extra[provider.ExtraToolCallData])
}

// TestScriptedTurns plays turns through the fake server's Gemini encoder,
// streaming and not, and checks that both give the same message.
func TestScriptedTurns(t *testing.T) {
	// Calls without a Gemini id get a made-up one, different each run.
	clearMadeUpIDs := func(msg *schema.Message) {
		for i := range msg.ToolCalls {
			if data(msg, i)[idKey] == "" {
				msg.ToolCalls[i].ID = ""
			}
		}
	}
	cases := []adaptertest.TurnCase{
		{Name: "text in chunks with cache usage",
			Turn: fakemodel.Turn{TextChunks: []string{"Hel", "lo", " there"}, Usage: &fakemodel.Usage{Input: 100, Output: 7, CacheRead: 60}},
			Want: adaptertest.Want{Text: "Hello there", Finish: provider.FinishStop, Raw: "STOP", Input: 100, Output: 7, CacheRead: 60}},
		{Name: "thought and signature",
			Turn: fakemodel.Turn{Reasoning: "Let me think.", ReasoningSignature: "sig-1", Text: "42", Usage: &fakemodel.Usage{Input: 10, Output: 20, Reasoning: 12}},
			Want: adaptertest.Want{Text: "42", Reasoning: "Let me think.", Finish: provider.FinishStop, Raw: "STOP", Input: 10, Output: 20, ReasoningTokens: 12},
			Check: func(t testing.TB, msg *schema.Message) {
				if got := data(msg, -1)[signatureKey]; got != "sig-1" {
					t.Errorf("signature = %q", got)
				}
			}},
		{Name: "tool calls with a signature",
			Turn: fakemodel.Turn{Text: "Checking.", ReasoningSignature: "sig-call", ToolCalls: []fakemodel.ToolCall{
				{ID: "gem-1", Name: "weather", Arguments: `{"city":"Paris","days":[1,2]}`},
				{Name: "screenshot"},
			}, Usage: &fakemodel.Usage{Input: 5, Output: 9}},
			Want: adaptertest.Want{Text: "Checking.", Calls: []adaptertest.Call{
				{ID: "gem-1", Name: "weather", Args: map[string]any{"city": "Paris", "days": []any{1.0, 2.0}}},
				{Name: "screenshot", Args: map[string]any{}},
			}, Finish: provider.FinishToolCalls, Raw: "STOP", Input: 5, Output: 9},
			Check: func(t testing.TB, msg *schema.Message) {
				first, second := data(msg, 0), data(msg, 1)
				if first[signatureKey] != "sig-call" || first[idKey] != "gem-1" || len(second) != 0 || data(msg, -1)[signatureKey] != "" {
					t.Errorf("call data = %v, %v; reasoning data %v", first, second, data(msg, -1))
				}
			},
			Normalize: clearMadeUpIDs},
		{Name: "output limit",
			Turn: fakemodel.Turn{Text: "cut sh", FinishReason: provider.FinishLength},
			Want: adaptertest.Want{Text: "cut sh", Finish: provider.FinishLength, Raw: "MAX_TOKENS"}},
		{Name: "safety",
			Turn: fakemodel.Turn{FinishReason: provider.FinishContentFilter},
			Want: adaptertest.Want{Finish: provider.FinishContentFilter, Raw: "SAFETY"}},
		{Name: "malformed call",
			Turn: fakemodel.Turn{FinishReason: "MALFORMED_FUNCTION_CALL"},
			Want: adaptertest.Want{Finish: provider.FinishError, Raw: "MALFORMED_FUNCTION_CALL"}},
		{Name: "JSON array of responses",
			Turn: fakemodel.Turn{RawContentType: "application/json", Raw: []byte(`[
				{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]},
				{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5}}]`)},
			Want: adaptertest.Want{Text: "Hello", Finish: provider.FinishStop, Raw: "STOP", Input: 3, Output: 2}},
		{Name: "blocked prompt",
			Turn: fakemodel.Turn{Raw: []byte(`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}`), RawContentType: "application/json"},
			Want: adaptertest.Want{Finish: provider.FinishContentFilter, Raw: "PROHIBITED_CONTENT", Input: 4}},
	}
	srv := fakemodel.StartTB(t)
	adaptertest.CheckTurns(t, srv, newTestModel(t, srv.URL), cases)
}

// TestErrors checks the error kind of HTTP errors, errors inside the stream
// and bodies or streams of the wrong shape, streaming and not.
func TestErrors(t *testing.T) {
	cases := []adaptertest.ErrorCase{
		{Name: "unauthenticated", Turn: fakemodel.Turn{Status: 401}, Kind: provider.KindAuth, Code: "UNAUTHENTICATED"},
		{Name: "permission denied", Turn: fakemodel.Turn{Status: 403}, Kind: provider.KindAuth, Code: "PERMISSION_DENIED"},
		{Name: "rate limited", Turn: fakemodel.Turn{Status: 429, Header: http.Header{"Retry-After": {"2"}}},
			Kind: provider.KindLimit, Code: "RESOURCE_EXHAUSTED", Retryable: true, RetryAfter: 2 * time.Second},
		{Name: "bad request", Turn: fakemodel.Turn{Status: 400}, Kind: provider.KindRequest, Code: "INVALID_ARGUMENT"},
		{Name: "unavailable", Turn: fakemodel.Turn{Status: 503}, Kind: provider.KindServer, Code: "UNAVAILABLE", Retryable: true},
		{Name: "error in the stream", Turn: fakemodel.Turn{Text: "partial", StreamError: &fakemodel.StreamError{Type: "UNAVAILABLE", Message: "overloaded"}},
			Kind: provider.KindServer, Code: "UNAVAILABLE", Retryable: true},
		{Name: "quota in the stream", Turn: fakemodel.Turn{StreamError: &fakemodel.StreamError{Type: "RESOURCE_EXHAUSTED", Message: "quota"}},
			Kind: provider.KindLimit, Code: "RESOURCE_EXHAUSTED", Retryable: true},
		{Name: "wrong shape", Turn: fakemodel.Turn{Raw: []byte(`{"hello":"world"}`), RawContentType: "application/json"}, Kind: provider.KindUnknown},
		{Name: "no finish reason", Turn: fakemodel.Turn{Raw: []byte(`{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}`), RawContentType: "application/json"}, Kind: provider.KindUnknown},
		{Name: "not JSON", Turn: fakemodel.Turn{Raw: []byte(`<html>gateway</html>`), RawContentType: "application/json"}, Kind: provider.KindUnknown},
		{Name: "stream cut before the finish", Turn: fakemodel.Turn{TextChunks: []string{"a", "b"}, CutAfter: 2}, OnlyStream: true, Kind: provider.KindUnknown},
		{Name: "stream ends without a finishReason", OnlyStream: true, Kind: provider.KindUnknown,
			Turn: fakemodel.Turn{Raw: fakemodel.SSE(fakemodel.Event{Data: `{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}`})}},
		{Name: "stream with a broken chunk", OnlyStream: true, Kind: provider.KindUnknown,
			Turn:    fakemodel.Turn{Raw: fakemodel.SSE(fakemodel.Event{Data: `{"candidates":`})},
			Message: `gemini: stream event 1 is not JSON; its data begins "{\"candidates\":"`},
		{Name: "stream with a cut chunk after a good one", OnlyStream: true, Kind: provider.KindUnknown,
			Turn: fakemodel.Turn{Raw: fakemodel.SSE(
				fakemodel.Event{Data: `{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}`},
				fakemodel.Event{Name: "message", Data: `{"candidates":[{"content":{"parts":[{"text":" there`})},
			Message: `gemini: stream event 2 ("message") is not JSON; its data begins "{\"candidates\":[{\"content"…`},
	}
	srv := fakemodel.StartTB(t)
	adaptertest.CheckErrors(t, srv, newTestModel(t, srv.URL), cases)
}

// TestCancellation checks that requests end with the caller's context.
func TestCancellation(t *testing.T) {
	srv := fakemodel.StartTB(t)
	adaptertest.CheckCancellation(t, srv, newTestModel(t, srv.URL))
}
