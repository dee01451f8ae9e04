package server

import (
	"context"
	"io"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/config"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// BenchmarkIdleSessionMemory reports the heap an idle agent holds in the
// server (after a GC), created the way CreateAgent makes it with a config,
// a tool selection and a short history.
func BenchmarkIdleSessionMemory(b *testing.B) {
	const perRound = 2000
	cfg, err := config.Load([]string{"-store", "memory", "-tool-dir", b.TempDir(), "-model-base-url", "http://127.0.0.1:9/v1", "-model", "m", "-max-sessions", "0"},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	if err := srv.LoadTools(context.Background()); err != nil {
		b.Fatal(err)
	}
	req := &agentv1.CreateAgentRequest{
		Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{System: proto.String("You are a helpful assistant."), MaxTokens: proto.Int64(100000)}},
		History: []*agentv1.Message{
			{Role: agentv1.Role_ROLE_USER, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "hello"}}}},
			{Role: agentv1.Role_ROLE_ASSISTANT, Parts: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "hi, how can I help?"}}}},
		},
	}
	var perSession float64
	b.ResetTimer()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range perRound {
			// A fresh copy, as gRPC decodes each request into new messages.
			if _, err := srv.CreateAgent(context.Background(), proto.Clone(req).(*agentv1.CreateAgentRequest)); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSession = float64(after.HeapAlloc-before.HeapAlloc) / perRound
		b.StopTimer()
		for _, sess := range srv.agents.All() {
			srv.agents.Remove(sess.Key())
			sess.Close(context.Background())
		}
		b.StartTimer()
	}
	b.ReportMetric(perSession, "bytes/session")
}
