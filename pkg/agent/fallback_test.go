package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// fallbackObserver records the model requests an Observer is told of.
type fallbackObserver struct {
	agent.NopObserver
	calls []string // model, then "<-fallback N from M (kind)" for a fallback
	runs  []int    // RunInfo.Fallbacks at each run's end
}

func (o *fallbackObserver) ModelStarted(ctx context.Context, m *agent.ModelCall) context.Context {
	s := m.Protocol + "/" + m.Model
	if f := m.Fallback; f != nil {
		s += " fallback " + string(rune('0'+f.Index)) + " from " + f.FromProtocol + "/" + f.FromModel + " (" + string(f.Kind) + ")"
	}
	o.calls = append(o.calls, s)
	return ctx
}

func (o *fallbackObserver) RunEnded(_ context.Context, r *agent.RunInfo, _ *agent.Result, _ error) {
	o.runs = append(o.runs, r.Fallbacks)
}

// TestFallback: a round whose model fails with a kind the config falls
// back on goes to the fallback (said by an event, told to the Observer,
// priced at the fallback's price); the next round and the next send start
// with the main model; a kind not named does not fall back; a fallback
// that fails too fails the send naming both errors.
func TestFallback(t *testing.T) {
	backup := fakemodel.StartTB(t)
	obs := &fallbackObserver{}
	prices := map[string]agent.Price{"test-model": {Input: 1e6}, "claude": {Input: 2e6}}
	s, srv := newSession(t, func(o *agent.Options) {
		o.Observer = obs
		o.Tools = pick(t, "add")
		o.Price = func(_, model string) (agent.Price, bool) { p, ok := prices[model]; return p, ok }
		o.Config.Capabilities = &agentv1.Capabilities{Reasoning: proto.Bool(true)} // reasoning goes back to the model that wrote it
		o.Config.Fallback = &agentv1.FallbackConfig{Models: []*agentv1.FallbackModel{{
			BaseUrl: proto.String(backup.URL), ApiKey: proto.String("sk-backup"), Model: proto.String("claude"),
			Protocol: agentv1.Protocol_PROTOCOL_ANTHROPIC,
		}}}
	})
	srv.Strict() // each request is checked as the API would
	backup.Strict()
	srv.Push(
		fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{add("c1")}, Reasoning: "plain thought", Usage: &fakemodel.Usage{Input: 3, Output: 1}},
		fakemodel.Turn{Status: 503},
	)
	backup.Push(fakemodel.Turn{Text: "it is 5", Reasoning: "claude thought", ReasoningSignature: "sig", Usage: &fakemodel.Usage{Input: 5, Output: 1}})
	rec := newRecorder()
	res, err := s.Send(context.Background(), agent.SendOptions{Input: input("add 2 and 3"), OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "it is 5" || res.Usage.GetInputTokens() != 8 {
		t.Errorf("result %q, usage %v", res.Text, res.Usage)
	}
	if got := res.RunUsage.GetCost(); got != 3 {
		t.Errorf("cost %v, want 3: the main model's answer at its price, none for an endpoint of the client's (tests/fallback_test.go prices a profile's)", got)
	}
	var fb *agentv1.FallbackEvent
	for _, e := range rec.all() {
		if f := e.GetFallback(); f != nil {
			fb = f
		}
	}
	if fb == nil || fb.GetStep() != 2 || fb.GetIndex() != 1 || fb.GetKind() != agentv1.ErrorKind_ERROR_KIND_SERVER || fb.GetStatus() != 503 ||
		fb.GetFrom().GetModel() != "test-model" || fb.GetFrom().GetProtocol() != "chat" ||
		fb.GetTo().GetModel() != "claude" || fb.GetTo().GetProtocol() != "anthropic" || !strings.HasPrefix(backup.URL, "http://"+fb.GetTo().GetBaseUrlHost()) {
		t.Fatalf("fallback event %v", fb)
	}
	if k := strings.Join(rec.kinds(), ","); !strings.Contains(k, "model_request,fallback,model_delta") {
		t.Errorf("events %s", k)
	}
	// The anthropic request carried the chat round's call and result.
	msgs := messages(backup.Requests()[0])
	if len(msgs) != 3 || !strings.Contains(jsonText(msgs[1]), `"tool_use"`) || !strings.Contains(jsonText(msgs[2]), `"tool_result"`) {
		t.Errorf("anthropic messages %s", jsonText(msgs))
	}
	if want := "chat/test-model,chat/test-model,anthropic/claude fallback 1 from chat/test-model (server)"; strings.Join(obs.calls, ",") != want {
		t.Errorf("observer saw %v, want %s", obs.calls, want)
	}

	// The next send starts on the main model; the fallback's signed
	// reasoning is not sent to it.
	srv.Push(fakemodel.Turn{Text: "again"})
	if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("once more")}); err != nil {
		t.Fatal(err)
	}
	if last := srv.Requests()[len(srv.Requests())-1]; strings.Contains(string(last.Body), "claude thought") || !strings.Contains(string(last.Body), "plain thought") {
		t.Errorf("the chat request holds the anthropic reasoning, or not its own: %s", last.Body)
	}
	if len(backup.Requests()) != 1 {
		t.Errorf("the fallback was asked %d times", len(backup.Requests()))
	}

	// A kind not named does not fall back.
	limitOnly := proto.Clone(s.Config()).(*agentv1.AgentConfig)
	limitOnly.Fallback.On = []agentv1.ErrorKind{agentv1.ErrorKind_ERROR_KIND_LIMIT}
	if err := s.SetConfig(limitOnly); err != nil {
		t.Fatal(err)
	}
	srv.Push(fakemodel.Turn{Status: 500})
	_, err = s.Send(context.Background(), agent.SendOptions{Input: input("fail")})
	if e, ok := err.(*llm.Error); !ok || e.Kind != llm.KindServer || strings.Contains(err.Error(), "fallback") || len(backup.Requests()) != 1 {
		t.Errorf("a server error with fallback.on [limit]: %v (fallback asked %d times)", err, len(backup.Requests()))
	}

	// Both fail: the error names both.
	srv.Push(fakemodel.Turn{Status: 429, ErrorBody: `{"error":{"message":"slow down","type":"rate_limit"}}`})
	backup.Push(fakemodel.Turn{Status: 529, ErrorBody: `{"type":"error","error":{"type":"overloaded_error","message":"overloaded"}}`})
	_, err = s.Send(context.Background(), agent.SendOptions{Input: input("fail twice")})
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, want := range []string{"every model failed", "chat model test-model", "slow down", "fallback 1, anthropic model claude", "overloaded"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if e, ok := err.(*llm.Error); !ok || e.Kind != llm.KindServer || e.Status != 529 {
		t.Errorf("error %#v: want the last model's kind and status", err)
	}
	if strings.Contains(msg, "sk-") {
		t.Errorf("a key in the error: %s", msg)
	}
	if r := append(srv.Rejected(), backup.Rejected()...); len(r) > 0 {
		t.Errorf("requests the APIs would refuse: %v", r)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
