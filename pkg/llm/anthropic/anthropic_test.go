package anthropic

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

// TestScriptedTurns plays turns through the fake server's Anthropic encoder,
// streaming and not, and checks that both give the same message.
func TestScriptedTurns(t *testing.T) {
	sigs := func(want ...string) func(testing.TB, *schema.Message) {
		return func(t testing.TB, msg *schema.Message) { checkThinking(t, msg, msg.ReasoningContent, want) }
	}
	cases := []adaptertest.TurnCase{
		{Name: "text in chunks with cache usage",
			Turn:  fakemodel.Turn{TextChunks: []string{"Hel", "lo", " there"}, Usage: &fakemodel.Usage{Input: 100, Output: 7, CacheRead: 60, CacheWrite: 30}},
			Want:  adaptertest.Want{Text: "Hello there", Finish: provider.FinishStop, Raw: "end_turn", Input: 100, Output: 7, CacheRead: 60, CacheWrite: 30},
			Check: sigs()},
		{Name: "reasoning with a signature",
			Turn:  fakemodel.Turn{Reasoning: "Let me think.", ReasoningSignature: "sig-1", Text: "42", Usage: &fakemodel.Usage{Input: 10, Output: 20, Reasoning: 12}},
			Want:  adaptertest.Want{Text: "42", Reasoning: "Let me think.", Finish: provider.FinishStop, Raw: "end_turn", Input: 10, Output: 20, ReasoningTokens: 12},
			Check: sigs("sig-1")},
		{Name: "tool calls",
			Turn: fakemodel.Turn{Text: "Checking.", ToolCalls: []fakemodel.ToolCall{
				{ID: "toolu_1", Name: "weather", Arguments: `{"city":"Paris","days":[1,2]}`},
				{ID: "toolu_2", Name: "screenshot"},
			}, Usage: &fakemodel.Usage{Input: 5, Output: 9}},
			Want: adaptertest.Want{Text: "Checking.", Calls: []adaptertest.Call{
				{ID: "toolu_1", Name: "weather", Args: map[string]any{"city": "Paris", "days": []any{1.0, 2.0}}},
				{ID: "toolu_2", Name: "screenshot", Args: map[string]any{}},
			}, Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 5, Output: 9}},
		{Name: "output limit",
			Turn: fakemodel.Turn{Text: "cut sh", FinishReason: provider.FinishLength},
			Want: adaptertest.Want{Text: "cut sh", Finish: provider.FinishLength, Raw: "max_tokens"}},
		{Name: "refusal",
			Turn: fakemodel.Turn{FinishReason: provider.FinishContentFilter},
			Want: adaptertest.Want{Finish: provider.FinishContentFilter, Raw: "refusal"}},
	}
	srv := fakemodel.StartTB(t)
	adaptertest.CheckTurns(t, srv, newTestModel(t, srv.URL), cases)
}

// TestErrors checks the error kind of HTTP errors, errors inside the stream
// and bodies or streams of the wrong shape, streaming and not.
func TestErrors(t *testing.T) {
	cases := []adaptertest.ErrorCase{
		{Name: "unauthorized", Turn: fakemodel.Turn{Status: 401}, Kind: provider.KindAuth, Code: "authentication_error"},
		{Name: "forbidden", Turn: fakemodel.Turn{Status: 403}, Kind: provider.KindAuth, Code: "permission_error"},
		{Name: "rate limited", Turn: fakemodel.Turn{Status: 429, Header: http.Header{"Retry-After": {"3"}}},
			Kind: provider.KindLimit, Code: "rate_limit_error", Retryable: true, RetryAfter: 3 * time.Second},
		{Name: "bad request", Turn: fakemodel.Turn{Status: 400}, Kind: provider.KindRequest, Code: "invalid_request_error"},
		{Name: "server error", Turn: fakemodel.Turn{Status: 500}, Kind: provider.KindServer, Code: "api_error", Retryable: true},
		{Name: "overloaded status", Turn: fakemodel.Turn{Status: 529}, Kind: provider.KindServer, Code: "overloaded_error", Retryable: true},
		{Name: "overloaded in the stream", Turn: fakemodel.Turn{Text: "partial", StreamError: &fakemodel.StreamError{Type: "overloaded_error", Message: "Overloaded"}},
			Kind: provider.KindServer, Code: "overloaded_error", Retryable: true},
		{Name: "rate limit in the stream", Turn: fakemodel.Turn{StreamError: &fakemodel.StreamError{Type: "rate_limit_error", Message: "slow down"}},
			Kind: provider.KindLimit, Code: "rate_limit_error", Retryable: true},
		{Name: "wrong shape", Turn: fakemodel.Turn{Raw: []byte(`{"hello":"world"}`), RawContentType: "application/json"}, Kind: provider.KindUnknown},
		{Name: "not JSON", Turn: fakemodel.Turn{Raw: []byte(`<html>gateway</html>`), RawContentType: "application/json"}, Kind: provider.KindUnknown},
		{Name: "stream cut before message_stop", Turn: fakemodel.Turn{Text: "partial", CutAfter: 4}, OnlyStream: true, Kind: provider.KindUnknown},
		{Name: "stream ends before message_stop", OnlyStream: true, Kind: provider.KindUnknown,
			Turn: fakemodel.Turn{Raw: fakemodel.SSE(fakemodel.Event{Name: "message_start", Data: `{"type":"message_start","message":{"usage":{"input_tokens":1}}}`})}},
		{Name: "stream with a broken event", OnlyStream: true, Kind: provider.KindUnknown,
			Turn:    fakemodel.Turn{Raw: fakemodel.SSE(fakemodel.Event{Name: "message_start", Data: `{"type":`})},
			Message: `anthropic: stream event 1 ("message_start") is not JSON; its data begins "{\"type\":"`},
		// The error names the event that broke: its number, its name and
		// the start of its data.
		{Name: "stream with a cut event after good ones", OnlyStream: true, Kind: provider.KindUnknown,
			Turn: fakemodel.Turn{Raw: fakemodel.SSE(
				fakemodel.Event{Name: "message_start", Data: `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1}}}`},
				fakemodel.Event{Name: "content_block_start", Data: `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
				fakemodel.Event{Name: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","te`})},
			Message: `anthropic: stream event 3 ("content_block_delta") is not JSON; its data begins "{\"type\":\"content_block_d"…`},
		{Name: "stream with a proxy's text for an event", OnlyStream: true, Kind: provider.KindUnknown,
			Turn: fakemodel.Turn{Raw: fakemodel.SSE(
				fakemodel.Event{Name: "message_start", Data: `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1}}}`},
				fakemodel.Event{Data: "upstream connect error"})},
			Message: `anthropic: stream event 2 is not JSON; its data begins "upstream connect error"`},
	}
	srv := fakemodel.StartTB(t)
	adaptertest.CheckErrors(t, srv, newTestModel(t, srv.URL), cases)
}

// TestCancellation checks that requests end with the caller's context.
func TestCancellation(t *testing.T) {
	srv := fakemodel.StartTB(t)
	adaptertest.CheckCancellation(t, srv, newTestModel(t, srv.URL))
}
