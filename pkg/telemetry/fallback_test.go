package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestFallbackSpansAndMetric: a round that falls back has a chat span per
// model, the fallback's saying which model failed and why, a run span
// counting the fallbacks, and the fallback metric moves.
func TestFallbackSpansAndMetric(t *testing.T) {
	rig := newRig(t, true, false)
	rig.script(func(_ int, req *fakemodel.Request) fakemodel.Turn {
		var model string
		req.Field("model", &model)
		if model == "fake-model" {
			return fakemodel.Turn{Status: 503}
		}
		return fakemodel.Turn{Text: "from " + model}
	})
	before := scrape(t, rig.tel)
	res, err := rig.sess.Send(context.Background(), agent.SendOptions{
		Input: []*agentv1.Part{history.Text("hi")},
		Config: &agentv1.AgentConfig{RetryMaxElapsed: durationpb.New(0), Fallback: &agentv1.FallbackConfig{
			Models: []*agentv1.FallbackModel{{Model: proto.String("fake-small")}}}},
	})
	if err != nil || res.Text != "from fake-small" {
		t.Fatalf("%v, %v", res, err)
	}
	spans := map[string]int{}
	for _, s := range rig.spans.GetSpans() {
		spans[s.Name]++
		switch s.Name {
		case "chat fake-small":
			wantAttrs(t, s, map[attribute.Key]any{attrRequestModel: "fake-small", attrFallback: int64(1),
				attrFallbackFrom: "fake-model", attrFallbackKind: "server"})
		case "invoke_agent writer":
			wantAttrs(t, s, map[attribute.Key]any{attrRunFallbacks: int64(1)})
		}
	}
	if spans["chat fake-model"] != 1 || spans["chat fake-small"] != 1 || spans["invoke_agent writer"] != 1 {
		t.Errorf("spans %v", spans)
	}
	diff := delta(before, scrape(t, rig.tel))
	if k := `agentcore_model_fallbacks_total{from_protocol="chat",kind="server",to_protocol="chat"}`; diff[k] != 1 {
		t.Errorf("%s moved by %v, want 1", k, diff[k])
	}
}
