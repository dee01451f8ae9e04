package llm

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// BenchmarkChatOverhead alternates a streamed Chat (three text deltas and
// usage from the fake model, in this process) with the same streamed
// request posted and read raw: what the model layer adds to a model round.
func BenchmarkChatOverhead(b *testing.B) {
	srv := fakemodel.StartTB(b)
	srv.Handle(func(*fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: []string{"a", "b", "c"}, Usage: &fakemodel.Usage{Input: 10, Output: 3}}
	})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := NewClient(Options{HTTPClient: &http.Client{Transport: tr}})
	cfg := DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Model, cfg.Protocol = srv.URL, "k", "m", provider.ProtocolChat
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	hc := &http.Client{Transport: &http.Transport{}}
	var chat, raw time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		resp, err := hc.Post(srv.URL+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t2 := time.Now()
		chat += t1.Sub(t0)
		raw += t2.Sub(t1)
	}
	b.ReportMetric(float64(chat.Microseconds())/float64(b.N), "chat-µs")
	b.ReportMetric(float64(raw.Microseconds())/float64(b.N), "raw-µs")
	hc.CloseIdleConnections()
}
