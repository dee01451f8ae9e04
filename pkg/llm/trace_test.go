package llm

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestTraceparentOnModelRequests pins the trace context's way to the model:
// every protocol's request carries the W3C traceparent of the span in the
// caller's context, over a header the config set, and none without a span.
// The chat protocol also reports the model that answered.
func TestTraceparentOnModelRequests(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9}, SpanID: trace.SpanID{0x00, 0xf0, 0x67}, TraceFlags: trace.FlagsSampled,
	})
	const want = "00-4bf90000000000000000000000000000-00f0670000000000-01"
	eachProtocol(t, func(t *testing.T, p provider.Protocol, stream bool) {
		for _, traced := range []bool{true, false} {
			srv := fakemodel.StartTB(t)
			srv.Push(fakemodel.Turn{Text: "hi"})
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			cfg.Stream = stream
			cfg.Provider.Headers = map[string]string{"traceparent": "00-stale-config-value"}
			ctx := context.Background()
			if traced {
				ctx = trace.ContextWithSpanContext(ctx, sc)
			}
			res, err := c.Chat(ctx, Request{Config: cfg, Messages: hello()})
			if err != nil {
				t.Fatal(err)
			}
			got := srv.Requests()[0].Header.Get("Traceparent")
			switch {
			case traced && got != want:
				t.Errorf("traced: traceparent = %q, want %q", got, want)
			case !traced && got != "00-stale-config-value":
				t.Errorf("not traced: traceparent = %q, want the config's header untouched", got)
			}
			if res.ResponseModel != "test-model" {
				t.Errorf("%s: response model = %q", p, res.ResponseModel)
			}
		}
	})
}
