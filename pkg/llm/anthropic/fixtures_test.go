package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestFixtures replays every recorded Anthropic response through the adapter.
func TestFixtures(t *testing.T) {
	elements1 := map[string]any{"elements": []any{map[string]any{"location": "San Francisco", "temperature": 58.0, "condition": "sunny"}}}
	elements4 := map[string]any{"elements": []any{
		map[string]any{"location": "San Francisco", "temperature": -5.0, "condition": "snowy"},
		map[string]any{"location": "London", "temperature": 0.0, "condition": "snowy"},
		map[string]any{"location": "Paris", "temperature": 23.0, "condition": "cloudy"},
		map[string]any{"location": "Berlin", "temperature": -9.0, "condition": "snowy"},
	}}
	tests := []struct {
		file string
		want adaptertest.Want
		sigs []string
	}{
		{"anthropic-text.chunks.txt", adaptertest.Want{
			Text:   "Hello! I'm doing well, thank you for asking. How are you doing today? Is there anything I can help you with?",
			Finish: provider.FinishStop, Raw: "end_turn", Input: 12, Output: 30}, nil},
		{"anthropic-text.json", adaptertest.Want{
			Text:   "Hello! I'm doing well, thanks for asking. How are you doing today? Is there anything I can help you with?",
			Finish: provider.FinishStop, Raw: "end_turn", Input: 12, Output: 29}, nil},
		{"anthropic-tool-no-args.chunks.txt", adaptertest.Want{
			Text:   "I'll update the issue list for you.",
			Calls:  []adaptertest.Call{{ID: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", Name: "updateIssueList", Args: map[string]any{}}},
			Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 565, Output: 48}, nil},
		{"anthropic-tool-no-args.json", adaptertest.Want{
			Text:   "<thinking>\nThe updateIssueList tool was provided in the list of available functions. The tool has no required parameters, so it can be called without any additional information needed from the user.\n</thinking>\n\nOkay, I will update the current issue list:",
			Calls:  []adaptertest.Call{{ID: "toolu_01LRmxn9vGM1d2DZSDBowdZ1", Name: "updateIssueList", Args: map[string]any{}}},
			Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 602, Output: 93}, nil},
		{"anthropic-json-tool.1.chunks.txt", adaptertest.Want{
			Calls:  []adaptertest.Call{{ID: "toolu_01KFbKqPYSuAKujiL6mTfzYA", Name: "json", Args: elements1}},
			Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 849, Output: 47}, nil},
		{"anthropic-json-tool.1.json", adaptertest.Want{
			Calls:  []adaptertest.Call{{ID: "toolu_01Q9ExVZnzZj7E2QQYHYtNUa", Name: "json", Args: elements4}},
			Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 1151, Output: 87}, nil},
		{"anthropic-json-tool.2.chunks.txt", adaptertest.Want{
			Text:   "I'll invoke the JSON response tool.",
			Calls:  []adaptertest.Call{{ID: "toolu_01KFbKqPYSuAKujiL6mTfzYA", Name: "json", Args: elements1}},
			Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 849, Output: 47}, nil},
		{"anthropic-clear-thinking.1.chunks.txt", adaptertest.Want{
			Text:      "925 ÷ 5 = 185",
			Reasoning: "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
			Finish:    provider.FinishStop, Raw: "end_turn", Input: 69, Output: 53}, []string{"EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEiBACIScTzqjPViM596iWLZIk4EFKYYBj3B6Ptl3b0dcQv/VeJBNbejNWIWRBn+KPNEgz6HWtKx7p+QRgKsEoaDGjsiqfht7gTRFYHiyIwD1VSmNqHxv3wy8KEMP+LYb/TC4UH3H97tuoaADARFFcA0phdfxnzKQxFnc9lwY+dKlzUsaKSUAFeu1bDL5ikZJ1vL0Fkz6JjoFke0L/wOJRIUDUlDUOFJ1tZ3ea7g6LGE/5hwuvWgLwewdcm64d+43l7F57XrOmqNd6flI2K/oPr/4yzNgvi/EhT6Ca17BgB"}},
		{"anthropic-clear-thinking.1.json", adaptertest.Want{
			Text:      "925 ÷ 5 = 185",
			Reasoning: "925 divided by 5 = 185",
			Finish:    provider.FinishStop, Raw: "end_turn", Input: 69, Output: 33}, []string{"Er4BCkYICxgCKkCoxqLHLrx4mFL9Ox7/aHKht87WDzXfvZ7qbZKSnHV8imA5b3LXxuVqcXQ9z5sXwDx20JIW/+6DJehOSNK72L83Egx0T9s7VzB6QUK9g5kaDO9lGaWN5CPEDJU0lyIw4+Ed3q4N9w+16h3cfQ+9stJXHCl+1nYDxjIOLcyJT8Ug/LTmtlp4bbxWmmfNicayKiasdReHiOnqz1sKEF0pR4kcnF5mQGdLxk8q3A3NY+wGsH8MtUIqxRgB"}},
		{"anthropic-refusal.chunks.txt", adaptertest.Want{Finish: provider.FinishContentFilter, Raw: "refusal", Input: 18, Output: 5}, nil},
		{"anthropic-refusal.json", adaptertest.Want{Finish: provider.FinishContentFilter, Raw: "refusal", Input: 18, Output: 5}, nil},
		{"anthropic-refusal-no-details.json", adaptertest.Want{Finish: provider.FinishContentFilter, Raw: "refusal", Input: 18, Output: 5}, nil},
		{"anthropic-message-delta-input-tokens.chunks.txt", adaptertest.Want{Text: "pong", Finish: provider.FinishStop, Raw: "end_turn", Input: 61, Output: 2}, nil},
		{"anthropic-code-execution-20260120-prompt-cache.1.chunks.txt", adaptertest.Want{
			Text:   "The sum of the squares of the numbers 1 through 12 is **650**.",
			Finish: provider.FinishStop, Raw: "end_turn",
			Input: 6 + 6289 + 3337, CacheRead: 6289, CacheWrite: 3337, Output: 198}, nil},
		{"sdk-go-sse/fallback-end.sse", adaptertest.Want{Text: " there! Happy to help with that.", Finish: provider.FinishStop, Raw: "end_turn", Input: 31, Output: 547}, nil},
		{"sdk-go-sse/fallback-tooluse.sse", adaptertest.Want{
			Calls:  []adaptertest.Call{{ID: "toolu_echo_1", Name: "echo", Args: map[string]any{"text": "hello"}}},
			Finish: provider.FinishToolCalls, Raw: "tool_use", Input: 31, Output: 40}, nil},
		{"sdk-go-sse/refusal.sse", adaptertest.Want{
			Text: "Hi", Reasoning: "Simple educational question. Benign.",
			Finish: provider.FinishContentFilter, Raw: "refusal", Input: 28, Output: 106, ReasoningTokens: 67}, []string{"sig-thinking-a"}},
	}
	srv := fakemodel.StartTB(t)
	m := newTestModel(t, srv.URL)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			turn, stream := adaptertest.FixtureTurn(t, "anthropic/"+tt.file, true)
			srv.Push(turn)
			msg := adaptertest.Run(t, m, stream, []*schema.Message{schema.UserMessage("hi")})
			adaptertest.Check(t, msg, tt.want)
			checkThinking(t, msg, tt.want.Reasoning, tt.sigs)
		})
	}
}

func newTestModel(t *testing.T, url string) *Model {
	t.Helper()
	m, err := New(provider.Config{BaseURL: url, APIKey: "test-key", Model: "claude-test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkThinking asserts the thinking signatures kept in the reasoning data and
// that their lengths cover the reasoning text.
func checkThinking(t testing.TB, msg *schema.Message, reasoning string, sigs []string) {
	t.Helper()
	var entries []thinkingEntry
	if data := provider.StringMap(msg.Extra[provider.ExtraReasoningData])[reasoningKey]; data != "" {
		if err := json.Unmarshal([]byte(data), &entries); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	total := 0
	for _, e := range entries {
		got = append(got, e.Signature)
		total += e.Length
	}
	if !reflect.DeepEqual(got, sigs) || total != len(reasoning) {
		t.Errorf("thinking data = %+v, want signatures %v over %d bytes", entries, sigs, len(reasoning))
	}
}
