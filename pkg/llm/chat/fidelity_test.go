package chat

import (
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestHandWrittenFixtures replays the recordings written from the API
// references of OpenAI-compatible servers (see the fixtures' MANIFEST.tsv),
// through the real HTTP path, streaming and not.
func TestHandWrittenFixtures(t *testing.T) {
	const sql = "SELECT name FROM users\nWHERE note = \"a \\\"quoted\\\" <b>&</b>\";"
	tests := []struct {
		file     string
		want     adaptertest.Want
		freeform bool
	}{
		{"mistral-thinking-parts.chunks.txt", adaptertest.Want{
			Reasoning: "The user wants 17 times 3. 17 × 3 = 51.", Text: "17 × 3 = 51.",
			Finish: "stop", Raw: "stop", Input: 14, Output: 32}, false},
		{"mistral-thinking-parts.json", adaptertest.Want{
			Reasoning: "The user wants 17 times 3. 17 × 3 = 51.", Text: "17 × 3 = 51.",
			Finish: "stop", Raw: "stop", Input: 14, Output: 32}, false},
		{"openrouter-reasoning-details.chunks.txt", adaptertest.Want{
			Reasoning: "The user asks for the capital of France.", Text: "Paris.",
			Finish: "stop", Raw: "stop", Input: 40, Output: 30, ReasoningTokens: 24}, false},
		// xAI counts reasoning tokens apart from completion_tokens (total =
		// prompt + completion + reasoning); output counts them, as OpenAI's does.
		{"xai-reasoning-tool-call.chunks.txt", adaptertest.Want{
			Reasoning: "The user asks for the weather in Paris; call get_weather.", Text: "Checking the weather.",
			Calls:  []adaptertest.Call{{ID: "call_hw01xaiWeather", Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
			Finish: "tool_calls", Raw: "tool_calls", Input: 180, Output: 230, Total: 410, CacheRead: 128, ReasoningTokens: 200}, false},
		{"openai-custom-tool-call.chunks.txt", adaptertest.Want{
			Calls:  []adaptertest.Call{{ID: "call_sqlQuery01", Name: "write_sql", Args: sql}},
			Finish: "tool_calls", Raw: "tool_calls", Input: 88, Output: 35}, true},
		{"openai-custom-tool-call.json", adaptertest.Want{
			Calls:  []adaptertest.Call{{ID: "call_sqlQuery02", Name: "write_sql", Args: sql}},
			Finish: "tool_calls", Raw: "tool_calls", Input: 88, Output: 35}, true},
	}
	srv := fakemodel.StartTB(t)
	m := newTestModel(t, srv.URL)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			turn, stream := adaptertest.FixtureTurn(t, "openai/chat/"+tt.file, false)
			if stream {
				turn.Events = append(turn.Events, fakemodel.Event{Data: "[DONE]"})
			}
			srv.Push(turn)
			msg := adaptertest.Run(t, m, stream, hello)
			adaptertest.Check(t, msg, tt.want)
			for _, c := range msg.ToolCalls {
				if got := provider.IsFreeform(provider.StringMap(c.Extra[provider.ExtraToolCallData])); got != tt.freeform {
					t.Errorf("call %s freeform = %v, want %v", c.ID, got, tt.freeform)
				}
			}
		})
	}
}

// TestCustomToolRoundTrip sends a custom call back as it came: type custom
// with its free text as the input, verbatim.
func TestCustomToolRoundTrip(t *testing.T) {
	srv := fakemodel.StartTB(t)
	turn, _ := adaptertest.FixtureTurn(t, "openai/chat/openai-custom-tool-call.json", false)
	srv.Push(turn, fakemodel.Turn{Text: "ok"})
	m := newTestModel(t, srv.URL)
	first := adaptertest.Generate(t, m, hello)
	history := append(append([]*schema.Message{}, hello...), first, schema.ToolMessage("2 rows", "call_sqlQuery02"))
	adaptertest.Generate(t, m, history)
	msgs := srv.Requests()[1].JSON()["messages"].([]any)
	call := msgs[1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	custom, _ := call["custom"].(map[string]any)
	if call["type"] != "custom" || call["id"] != "call_sqlQuery02" || call["function"] != nil ||
		custom["name"] != "write_sql" || custom["input"] != "SELECT name FROM users\nWHERE note = \"a \\\"quoted\\\" <b>&</b>\";" {
		t.Errorf("call sent back as %v", call)
	}
}
