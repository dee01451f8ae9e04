package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// protocols are the protocols every cross-protocol test runs against.
var protocols = []provider.Protocol{
	provider.ProtocolChat,
	provider.ProtocolResponses,
	provider.ProtocolAnthropic,
	provider.ProtocolGemini,
}

// fakeClock is the injected time: Sleep records the wait and moves Now on,
// so retry tests never wait for real.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// newTestClient returns a Client with a fake clock, jitter fixed at 0.5 and
// sequential ids, whose connections close when the test ends.
func newTestClient(t *testing.T) (*Client, *fakeClock) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var mu sync.Mutex
	n := 0
	c := NewClient(Options{
		HTTPClient: &http.Client{Transport: tr},
		Sleep:      clock.Sleep,
		Now:        clock.Now,
		Jitter:     func() float64 { return 0.5 },
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return "id" + string(rune('0'+n))
		},
	})
	return c, clock
}

// testConfig is the default config pointed at srv with protocol p.
func testConfig(srv *fakemodel.Server, p provider.Protocol) *Config {
	cfg := DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Model, cfg.Protocol = srv.URL, "sk-test", "test-model", p
	return cfg
}

// reportsCacheWrite says which protocols report cache writes.
var reportsCacheWrite = map[provider.Protocol]bool{provider.ProtocolAnthropic: true, provider.ProtocolChat: true}

var addTool = Tool{Name: "add", Description: "Add two numbers", Schema: map[string]any{
	"type":       "object",
	"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
	"required":   []any{"a", "b"},
}}

// eachProtocol runs f for every protocol, streaming and not.
func eachProtocol(t *testing.T, f func(t *testing.T, p provider.Protocol, stream bool)) {
	for _, p := range protocols {
		for _, stream := range []bool{true, false} {
			name := string(p) + "/stream"
			if !stream {
				name = string(p) + "/generate"
			}
			t.Run(name, func(t *testing.T) { f(t, p, stream) })
		}
	}
}

func hello() []*agentv1.Message { return []*agentv1.Message{userMsg(text("hi"))} }

// TestChatAcrossProtocols sends the same scripted turn through every
// protocol, streaming and not, and expects the same Result.
func TestChatAcrossProtocols(t *testing.T) {
	turn := fakemodel.Turn{
		TextChunks: []string{"Let me ", "add."},
		Reasoning:  "need the sum",
		ToolCalls:  []fakemodel.ToolCall{{ID: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`}},
		Usage:      &fakemodel.Usage{Input: 100, Output: 20, CacheRead: 60, CacheWrite: 30, Reasoning: 5},
	}
	eachProtocol(t, func(t *testing.T, p provider.Protocol, stream bool) {
		srv := fakemodel.StartTB(t)
		srv.Push(turn)
		c, _ := newTestClient(t)
		cfg := testConfig(srv, p)
		cfg.Stream = stream
		var deltas []Delta
		res, err := c.Chat(context.Background(), Request{
			Config: cfg, Messages: hello(), Tools: []Tool{addTool},
			OnDelta: func(d Delta) { deltas = append(deltas, d) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "Let me add." || res.Reasoning != "need the sum" || res.FinishReason != provider.FinishToolCalls {
			t.Errorf("text %q reasoning %q finish %q", res.Text, res.Reasoning, res.FinishReason)
		}
		if len(res.ToolCalls) != 1 || res.ToolCalls[0].GetName() != "add" || res.ToolCalls[0].GetId() == "" || !sameJSON(res.ToolCalls[0].GetArguments(), `{"a":1,"b":2}`) {
			t.Errorf("tool calls = %v", res.ToolCalls)
		}
		if len(res.InvalidToolCalls) != 0 || res.TextProtocol || res.Output != nil {
			t.Errorf("invalid %v text protocol %v output %v", res.InvalidToolCalls, res.TextProtocol, res.Output)
		}
		wantUsage := &agentv1.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120, CacheReadTokens: 60, CacheWriteTokens: 30, ReasoningTokens: 5}
		if !reportsCacheWrite[p] {
			wantUsage.CacheWriteTokens = 0
		}
		if got := res.Usage; !proto.Equal(got, wantUsage) {
			t.Errorf("usage = %v, want %v", res.Usage, wantUsage)
		}
		m := res.Message
		if m.GetRole() != agentv1.Role_ROLE_ASSISTANT || len(m.GetParts()) != 3 ||
			m.GetParts()[0].GetReasoning().GetText() != "need the sum" ||
			m.GetParts()[1].GetText() != "Let me add." ||
			m.GetParts()[2].GetToolCall() != res.ToolCalls[0] ||
			!proto.Equal(m.GetUsage(), res.Usage) || m.GetFinishReason() != res.FinishReason || m.GetCreateTime() == nil {
			t.Errorf("message = %v", m)
		}
		if !stream {
			if len(deltas) != 0 {
				t.Errorf("non-streaming request produced deltas %v", deltas)
			}
			return
		}
		var textOut, reasoningOut, args strings.Builder
		for _, d := range deltas {
			textOut.WriteString(d.Text)
			reasoningOut.WriteString(d.Reasoning)
			if d.ToolCall != nil {
				args.WriteString(d.ToolCall.Arguments)
			}
		}
		if textOut.String() != "Let me add." || reasoningOut.String() != "need the sum" || !sameJSON(args.String(), `{"a":1,"b":2}`) {
			t.Errorf("deltas joined: text %q reasoning %q args %q", textOut.String(), reasoningOut.String(), args.String())
		}
		if len(srv.Requests()) != 1 || srv.Requests()[0].Stream != stream {
			t.Errorf("requests = %d", len(srv.Requests()))
		}
	})
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
