package gemini

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestFixtures replays every recorded Gemini response through the adapter.
func TestFixtures(t *testing.T) {
	strawberry := "There are **3** \"r\"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y."
	tests := []struct {
		file      string
		want      adaptertest.Want
		signature string   // kept reasoning signature, by prefix
		callSigs  []string // per call thought signature, by prefix
	}{
		{"google-text.chunks.txt", adaptertest.Want{
			Text:   "There are **3** \"r\"s in strawberry.\n\nst**r**awbe**rr**y",
			Finish: provider.FinishStop, Raw: "STOP", Input: 9, Output: 23 + 185, ReasoningTokens: 185, Total: 217}, "EqsFCqgF", nil},
		{"google-text.json", adaptertest.Want{
			Text:   "There are **3** r's in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y.",
			Finish: provider.FinishStop, Raw: "STOP", Input: 9, Output: 28 + 244, ReasoningTokens: 244, Total: 281}, "EtoFCtcF", nil},
		{"google-reasoning.chunks.txt", adaptertest.Want{
			Text:   strawberry,
			Finish: provider.FinishStop, Raw: "STOP", Input: 9, Output: 29 + 256, ReasoningTokens: 256, Total: 294}, "Eo0HCooH", nil},
		{"google-reasoning.json", adaptertest.Want{
			Text:   strawberry,
			Finish: provider.FinishStop, Raw: "STOP", Input: 9, Output: 29 + 282, ReasoningTokens: 282, Total: 320}, "EvsFCvgF", nil},
		{"google-tool-call.chunks.txt", adaptertest.Want{
			Calls:  []adaptertest.Call{{Name: "weather", Args: map[string]any{"location": "San Francisco"}}},
			Finish: provider.FinishToolCalls, Raw: "STOP", Input: 29, Output: 15 + 45, ReasoningTokens: 45, Total: 89}, "", []string{"EqUCCqIC"}},
		{"google-tool-call.json", adaptertest.Want{
			Calls:  []adaptertest.Call{{Name: "weather", Args: map[string]any{"location": "San Francisco"}}},
			Finish: provider.FinishToolCalls, Raw: "STOP", Input: 29, Output: 15 + 893, ReasoningTokens: 893, Total: 937}, "", []string{"EskgCsYg"}},
		{"google-stream-tool-call-arguments.chunks.txt", adaptertest.Want{
			Calls: []adaptertest.Call{
				{Name: "getWeather", Args: map[string]any{"location": "Boston"}},
				{Name: "getWeather", Args: map[string]any{"location": "San Francisco"}},
			},
			Finish: provider.FinishToolCalls, Raw: "STOP", Input: 26, Output: 23 + 132, ReasoningTokens: 132, Total: 181}, "", []string{"CiMBjz1r", ""}},
		{"google-stream-no-args-tool-call.chunks.txt", adaptertest.Want{
			Reasoning: "**Processing User Requests**\n\nI've started by understanding the user's instructions. Currently, I'm focusing on the initial steps: reading the specified theme using the appropriate tool. Next, I plan to tackle reading the screens, beginning with screen \"A,\" then proceeding with \"B\" and \"C\" in parallel as instructed.\n\n\n",
			Calls: []adaptertest.Call{
				{Name: "read_theme", Args: map[string]any{}},
				{Name: "read_screen", Args: map[string]any{"id": "A"}},
				{Name: "read_screen", Args: map[string]any{"id": "B"}},
				{Name: "read_screen", Args: map[string]any{"id": "C"}},
			},
			Finish: provider.FinishToolCalls, Raw: "STOP", Input: 249, Output: 58 + 183, ReasoningTokens: 183, Total: 490}, "", []string{"AY89a18a", "", "", ""}},
		// Gemini 2.5 (hand-written): thought summaries, the signature on
		// the call, implicit cache hits.
		{"google-2.5-thoughts-tool-call-cache.chunks.txt", adaptertest.Want{
			Reasoning: "**Planning the lookup**\n\nThe user wants the weather in Paris, so I will call get_weather.", Text: "Let me check.",
			Calls:  []adaptertest.Call{{Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
			Finish: provider.FinishToolCalls, Raw: "STOP", Input: 1210, CacheRead: 1024, Output: 21 + 88, ReasoningTokens: 88, Total: 1319}, "", []string{"CiQBHw25SignatureOnTheCall0001"}},
		{"google-2.5-thoughts-tool-call-cache.json", adaptertest.Want{
			Reasoning: "**Planning the lookup**\n\nThe user wants the weather in Paris, so I will call get_weather.", Text: "Let me check.",
			Calls:  []adaptertest.Call{{Name: "get_weather", Args: map[string]any{"city": "Paris"}}},
			Finish: provider.FinishToolCalls, Raw: "STOP", Input: 1210, CacheRead: 1024, Output: 21 + 88, ReasoningTokens: 88, Total: 1319}, "", []string{"CiQBHw25SignatureOnTheCall0002"}},
	}
	srv := fakemodel.StartTB(t)
	m := newTestModel(t, srv.URL)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			turn, stream := adaptertest.FixtureTurn(t, "google/"+tt.file, false)
			srv.Push(turn)
			msg := adaptertest.Run(t, m, stream, []*schema.Message{schema.UserMessage("hi")})
			adaptertest.Check(t, msg, tt.want)
			sig := provider.StringMap(msg.Extra[provider.ExtraReasoningData])[signatureKey]
			if !strings.HasPrefix(sig, tt.signature) || (tt.signature == "") != (sig == "") {
				t.Errorf("reasoning signature = %.20q, want prefix %q", sig, tt.signature)
			}
			ids := map[string]bool{}
			for i, c := range msg.ToolCalls {
				got := provider.StringMap(c.Extra[provider.ExtraToolCallData])[signatureKey]
				if !strings.HasPrefix(got, tt.callSigs[i]) || (tt.callSigs[i] == "") != (got == "") {
					t.Errorf("call %d signature = %.20q, want prefix %q", i, got, tt.callSigs[i])
				}
				if !strings.HasPrefix(c.ID, "call_") || ids[c.ID] {
					t.Errorf("call %d id = %q, want a new call_ id", i, c.ID)
				}
				ids[c.ID] = true
			}
		})
	}
}

// TestRetryInfo checks that a 429 with RetryInfo is a limit error with the
// server's delay.
func TestRetryInfo(t *testing.T) {
	srv := fakemodel.StartTB(t)
	m := newTestModel(t, srv.URL)
	for _, stream := range []bool{false, true} {
		turn, _ := adaptertest.FixtureTurn(t, "google/google-429-retry-info.json", false)
		turn.Status = 429
		srv.Push(turn)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		if stream {
			_, err = adaptertest.Collect(ctx, m, []*schema.Message{schema.UserMessage("hi")})
		} else {
			_, err = m.Generate(ctx, []*schema.Message{schema.UserMessage("hi")})
		}
		cancel()
		pe := adaptertest.ErrorKind(t, err, provider.KindLimit)
		if pe.Status != 429 || pe.Code != "RESOURCE_EXHAUSTED" || pe.RetryAfter != 34400*time.Millisecond || !pe.Retryable {
			t.Errorf("stream %v: error = %+v", stream, pe)
		}
	}
}

func newTestModel(t *testing.T, url string) *Model {
	t.Helper()
	m, err := New(provider.Config{BaseURL: url, APIKey: "test-key", Model: "gemini-test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
