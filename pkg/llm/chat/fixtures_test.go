package chat

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudwego/eino/schema"
	"go.uber.org/goleak"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/internal/adaptertest"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestModel(t testing.TB, url string) *Model {
	t.Helper()
	m, err := New(provider.Config{BaseURL: url, APIKey: "sk-test", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var hello = []*schema.Message{schema.UserMessage("hello")}

// streamedText joins the content deltas of a recorded chat stream, read
// independently of the adapter.
func streamedText(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(adaptertest.Fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
	return b.String()
}

// chunkTurn replays a *.chunks.txt as the chat stream it was: data lines,
// then [DONE].
func chunkTurn(t *testing.T, name string) fakemodel.Turn {
	t.Helper()
	turn, _ := adaptertest.FixtureTurn(t, name, false)
	turn.Events = append(turn.Events, fakemodel.Event{Data: "[DONE]"})
	return turn
}

func TestFixtures(t *testing.T) {
	const dir = "openai/chat/"
	wholeText := func() string {
		data, err := os.ReadFile(filepath.Join(adaptertest.Fixtures, dir+"openai-text.json"))
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		return c.Choices[0].Message.Content
	}()
	tests := []struct {
		name   string
		turn   fakemodel.Turn
		stream bool
		want   adaptertest.Want
	}{
		{
			name: "openai-text stream", turn: chunkTurn(t, dir+"openai-text.chunks.txt"), stream: true,
			want: adaptertest.Want{Text: streamedText(t, dir+"openai-text.chunks.txt"), Finish: "stop", Raw: "stop", Input: 16, Output: 300},
		},
		{
			name: "azure model router stream", turn: chunkTurn(t, dir+"azure-model-router.1.chunks.txt"), stream: true,
			want: adaptertest.Want{Text: "Capital of Denmark.", Finish: "stop", Raw: "stop", Input: 15, Output: 78, ReasoningTokens: 64},
		},
		{
			name: "gateway tool call (raw SSE, first call at index 1)", stream: true,
			turn: func() fakemodel.Turn {
				tr, _ := adaptertest.FixtureTurn(t, dir+"anthropic-fallback-tool-call.sse", false)
				return tr
			}(),
			want: adaptertest.Want{Text: "Reading it.", Finish: "tool_calls", Raw: "tool_calls",
				Calls: []adaptertest.Call{{ID: "toolu_sanitized", Name: "read_file", Args: map[string]any{"path": "a.txt"}}}},
		},
		{
			name: "openai-text whole", turn: func() fakemodel.Turn { tr, _ := adaptertest.FixtureTurn(t, dir+"openai-text.json", false); return tr }(),
			want: adaptertest.Want{Text: wholeText, Finish: "stop", Raw: "stop", Input: 16, Output: 363},
		},
		{
			// A gateway that answers a stream request with a whole JSON body.
			name: "openai-text whole to a stream request", stream: true,
			turn: func() fakemodel.Turn { tr, _ := adaptertest.FixtureTurn(t, dir+"openai-text.json", false); return tr }(),
			want: adaptertest.Want{Text: wholeText, Finish: "stop", Raw: "stop", Input: 16, Output: 363},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(tt.turn)
			msg := adaptertest.Run(t, newTestModel(t, srv.URL), tt.stream, hello)
			adaptertest.Check(t, msg, tt.want)
			if n := len(msg.ToolCalls); n > 0 && (msg.ToolCalls[0].Index == nil || *msg.ToolCalls[0].Index != 0) {
				t.Errorf("first tool call index = %v, want 0", msg.ToolCalls[0].Index)
			}
		})
	}
}

func TestFixtureErrors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(adaptertest.Fixtures, "openai/chat/reasoning-model-legacy-parameter-error.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{Status: 400, ErrorBody: string(data)})
		m := newTestModel(t, srv.URL)
		var callErr error
		if stream {
			_, callErr = adaptertest.Collect(context.Background(), m, hello)
		} else {
			_, callErr = m.Generate(context.Background(), hello)
		}
		pe := adaptertest.ErrorKind(t, callErr, provider.KindRequest)
		if pe.Status != 400 || pe.Code != "unsupported_parameter" || pe.Retryable || !strings.Contains(pe.Message, "max_completion_tokens") {
			t.Errorf("stream=%v: %+v", stream, pe)
		}
	}
}
