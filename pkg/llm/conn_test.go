package llm

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// reuseTrace returns a context whose requests record whether each got a
// reused connection.
func reuseTrace() (context.Context, func() []bool) {
	var mu sync.Mutex
	var reused []bool
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			mu.Lock()
			defer mu.Unlock()
			reused = append(reused, info.Reused)
		},
	})
	return ctx, func() []bool {
		mu.Lock()
		defer mu.Unlock()
		return append([]bool(nil), reused...)
	}
}

// TestConnectionReused checks that the request after a complete answer
// goes over the same connection, for every protocol, streaming and not,
// also when the server ends the body a moment after the protocol's
// terminal event ([DONE], message_stop, response.completed): the stream's
// body is read to its end, so that net/http keeps the connection instead of
// dialing again (in production, a TCP and TLS handshake per model request).
func TestConnectionReused(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p provider.Protocol, stream bool) {
		srv := fakemodel.StartTB(t)
		c, _ := newTestClient(t)
		cfg := testConfig(srv, p)
		cfg.Stream = stream
		ctx, reused := reuseTrace()
		for _, end := range []time.Duration{0, 0, 5 * time.Millisecond, 0} {
			srv.Push(fakemodel.Turn{TextChunks: []string{"a", "b"}, Usage: &fakemodel.Usage{Input: 3, Output: 2}, EndDelay: end})
			res, err := c.Chat(ctx, Request{Config: cfg, Messages: hello()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "ab" {
				t.Fatalf("text = %q", res.Text)
			}
		}
		if got := reused(); len(got) != 4 || got[0] || !got[1] || !got[2] || !got[3] {
			t.Errorf("connections reused = %v, want [false true true true]", got)
		}
	})
}

// TestStreamHeldOpenAfterEnd checks that a server that keeps a stream open
// after its terminal event costs a bounded wait, not a hang: the answer is
// complete, the request returns, and its connection is dropped (the next
// request dials again).
func TestStreamHeldOpenAfterEnd(t *testing.T) {
	for _, p := range protocols {
		if p == provider.ProtocolGemini {
			continue // a Gemini stream ends with its body: nothing is held
		}
		t.Run(string(p), func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			ctx, reused := reuseTrace()
			srv.Push(fakemodel.Turn{Text: "held", StallAfter: 1000}, fakemodel.Turn{Text: "next"})
			start := time.Now()
			res, err := c.Chat(ctx, Request{Config: cfg, Messages: hello()})
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 5*time.Second || res.Text != "held" {
				t.Fatalf("text %q after %v", res.Text, d)
			}
			if _, err := c.Chat(ctx, Request{Config: cfg, Messages: hello()}); err != nil {
				t.Fatal(err)
			}
			if got := reused(); len(got) != 2 || got[1] {
				t.Errorf("connections reused = %v, want [false false]", got)
			}
		})
	}
}

// TestIdleConnsPerHost checks that the default HTTP client keeps as many
// idle connections per endpoint as Options.IdleConnsPerHost asks: after a
// burst of requests in flight together, the next burst finds that many of
// its connections again, and dials for the rest.
func TestIdleConnsPerHost(t *testing.T) {
	const burst = 12
	for _, tc := range []struct{ idle, wantReused int }{{burst, burst}, {4, 4}} {
		t.Run(fmt.Sprint(tc.idle), func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			var arrived sync.WaitGroup
			srv.Handle(func(*fakemodel.Request) fakemodel.Turn {
				arrived.Done()
				arrived.Wait() // every request of the burst holds a connection at once
				return fakemodel.Turn{Text: "ok"}
			})
			c := NewClient(Options{IdleConnsPerHost: tc.idle})
			t.Cleanup(c.CloseIdleConnections)
			cfg := testConfig(srv, provider.ProtocolChat)
			ctx, reused := reuseTrace()
			for range 2 {
				arrived.Add(burst)
				var wg sync.WaitGroup
				for range burst {
					wg.Go(func() {
						if _, err := c.Chat(ctx, Request{Config: cfg, Messages: hello()}); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
			}
			got := reused()
			n := 0
			for _, r := range got[burst:] {
				if r {
					n++
				}
			}
			if len(got) != 2*burst || n != tc.wantReused {
				t.Errorf("second burst: %d of %d connections reused, want %d", n, len(got)-burst, tc.wantReused)
			}
		})
	}
}
