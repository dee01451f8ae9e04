package anthropic

import (
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/fakemodel"
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
