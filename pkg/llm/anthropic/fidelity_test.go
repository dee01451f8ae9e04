package anthropic

import (
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestMessageStartContent: a continuation message of programmatic tool
// calling comes with its blocks and stop reason already in message_start;
// the tool_use among them is a call (the server tool use is not).
func TestMessageStartContent(t *testing.T) {
	srv := fakemodel.StartTB(t)
	turn, _ := adaptertest.FixtureTurn(t, "anthropic/anthropic-programmatic-tool-continuation.chunks.txt", true)
	srv.Push(turn)
	msg := adaptertest.Stream(t, newTestModel(t, srv.URL), []*schema.Message{schema.UserMessage("hi")})
	adaptertest.Check(t, msg, adaptertest.Want{
		Calls:  []adaptertest.Call{{ID: "toolu_01HwQueryDb00002", Name: "query_database", Args: map[string]any{"region": "East"}}},
		Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 2000, CacheRead: 800, Output: 45,
	})
}

// TestSecondMessageStart: a message_start while a message is open is a
// protocol violation, named in the error; the two messages are never merged.
func TestSecondMessageStart(t *testing.T) {
	ev := func(data string) fakemodel.Event {
		typ, _ := provider.Type([]byte(data))
		return fakemodel.Event{Name: typ, Data: data}
	}
	srv := fakemodel.StartTB(t)
	srv.Push(fakemodel.Turn{Events: []fakemodel.Event{
		ev(`{"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":5}}}`),
		ev(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`),
		ev(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`),
		ev(`{"type":"message_start","message":{"id":"msg_2","content":[],"usage":{"input_tokens":5}}}`),
		ev(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		ev(`{"type":"content_block_stop","index":0}`),
		ev(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`),
		ev(`{"type":"message_stop"}`),
	}})
	_, err := adaptertest.Collect(t.Context(), newTestModel(t, srv.URL), []*schema.Message{schema.UserMessage("hi")})
	pe := adaptertest.ErrorKind(t, err, provider.KindUnknown)
	if !strings.Contains(pe.Message, "message_start") || !strings.Contains(pe.Message, "msg_2") {
		t.Errorf("error %v does not name the event", pe)
	}
}

// TestToolLoop plays a two-turn tool loop with interleaved thinking
// (hand-written fixture, one message per turn): the second request sends
// the first turn back as it came, thinking with its signature, the
// redacted thinking, the text and the tool_use, then the tool result; the
// second turn's thinking, answer and cache read are read.
func TestToolLoop(t *testing.T) {
	turns, err := protocol().Load("anthropic/anthropic-interleaved-thinking-tool-loop.chunks.txt")
	if err != nil || len(turns) != 2 {
		t.Fatalf("%d turns, %v", len(turns), err)
	}
	srv := fakemodel.StartTB(t)
	for _, rec := range turns {
		srv.Push(fakemodel.Turn{Raw: rec.Bytes(), RawContentType: "text/event-stream"})
	}
	m, err := New(provider.Config{BaseURL: srv.URL, APIKey: "test-key", Model: "claude-test", SendReasoning: true})
	if err != nil {
		t.Fatal(err)
	}
	history := []*schema.Message{schema.UserMessage("Weather in Paris?")}
	first := adaptertest.Stream(t, m, history)
	adaptertest.Check(t, first, adaptertest.Want{
		Text:      "Let me check the weather.",
		Reasoning: "The user wants the weather in Paris. I should call get_weather.",
		Calls:     []adaptertest.Call{{ID: "toolu_01HwWeather0001", Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
		Finish:    provider.FinishToolCalls, Raw: "tool_use", Input: 512 + 480, CacheWrite: 480, Output: 96,
	})
	history = append(history, first, schema.ToolMessage(`{"temp_c":18,"sky":"sunny"}`, "toolu_01HwWeather0001", schema.WithToolName("get_weather")))
	second := adaptertest.Stream(t, m, history)
	adaptertest.Check(t, second, adaptertest.Want{
		Text: "It is 18 °C and sunny in Paris.", Reasoning: "The tool says 18 degrees and sunny.",
		Finish: provider.FinishStop, Raw: "end_turn", Input: 64 + 480, CacheRead: 480, Output: 41,
	})
	checkThinking(t, second, second.ReasoningContent, []string{"EqHwSignatureTurn2Block0=="})
	sent := srv.Requests()[1].JSON()["messages"]
	adaptertest.EqualJSON(t, "second request's messages", sent, `[
		{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"The user wants the weather in Paris. I should call get_weather.","signature":"EqHwSignatureTurn1Block0=="},
			{"type":"redacted_thinking","data":"EmHwRedactedThinkingTurn1Opaque=="},
			{"type":"text","text":"Let me check the weather."},
			{"type":"tool_use","id":"toolu_01HwWeather0001","name":"get_weather","input":{"city":"Paris"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01HwWeather0001","content":"{\"temp_c\":18,\"sky\":\"sunny\"}"}]}]`)
}

// TestThinkingOrderInMessageStart: thinking and redacted thinking blocks
// carried whole in message_start keep their order in the reasoning data,
// which is the order they are sent back in.
func TestThinkingOrderInMessageStart(t *testing.T) {
	srv := fakemodel.StartTB(t)
	srv.Push(fakemodel.Turn{Raw: fakemodel.SSE(
		fakemodel.Event{Name: "message_start", Data: `{"type":"message_start","message":{"id":"msg_1","content":[` +
			`{"type":"thinking","thinking":"one","signature":"sig-1"},{"type":"redacted_thinking","data":"opaque"},` +
			`{"type":"thinking","thinking":"two","signature":"sig-2"},{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}}`},
		fakemodel.Event{Name: "message_stop", Data: `{"type":"message_stop"}`}), RawContentType: "text/event-stream"})
	msg := adaptertest.Stream(t, newTestModel(t, srv.URL), []*schema.Message{schema.UserMessage("hi")})
	got := provider.StringMap(msg.Extra[provider.ExtraReasoningData])[reasoningKey]
	if want := `[{"signature":"sig-1","length":3},{"redacted":"opaque"},{"signature":"sig-2","length":3}]`; got != want {
		t.Errorf("reasoning data %s\nwant           %s", got, want)
	}
}
