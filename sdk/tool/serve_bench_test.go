package tool

import (
	"context"
	"testing"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// BenchmarkServeCall: the SDK's own work for one call of a typed tool
// (context, input decoding, the handler, the result), without gRPC and
// without captured stdio; the messages go to a send that drops them.
func BenchmarkServeCall(b *testing.B) {
	type text struct {
		Text string `json:"text"`
	}
	s, err := newServer([]Tool{New("echo", "", func(_ context.Context, in text, _ Emit) (any, error) { return in.Text, nil })})
	if err != nil {
		b.Fatal(err)
	}
	req := &pluginv1.ExecuteRequest{Tool: "echo", InputJson: `{"text":"ping"}`}
	send := func(*pluginv1.ExecuteResponse) error { return nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.serveCall(ctx, req, send, nil); err != nil {
			b.Fatal(err)
		}
	}
}
