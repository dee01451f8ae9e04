package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/internal/syncbuf"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// boundedClient is newTestClient with the server's retry bounds and a log.
func boundedClient(elapsed, delay time.Duration) (*Client, *fakeClock, *syncbuf.Buffer) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	logs := &syncbuf.Buffer{}
	c := NewClient(Options{
		HTTPClient:      &http.Client{Transport: &http.Transport{}},
		Sleep:           clock.Sleep,
		Now:             clock.Now,
		Jitter:          func() float64 { return 0.5 },
		Logger:          hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}),
		RetryMaxElapsed: elapsed,
		RetryMaxDelay:   delay,
	})
	return c, clock, logs
}

func TestNonTransientStatusesAreNotRetried(t *testing.T) {
	for _, status := range []int{501, 505, 511} {
		srv := fakemodel.StartTB(t)
		srv.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: status} })
		c, clock, logs := boundedClient(time.Minute, 0)
		_, err := c.Chat(context.Background(), Request{Config: testConfig(srv, provider.ProtocolChat), Messages: hello()})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindServer || pe.Retryable || pe.Status != status {
			t.Fatalf("%d: err = %#v", status, err)
		}
		if n := len(srv.Requests()); n != 1 || len(clock.Sleeps()) != 0 {
			t.Errorf("%d: %d requests, waits %v", status, n, clock.Sleeps())
		}
		if !strings.Contains(logs.String(), "[WARN]") || !strings.Contains(logs.String(), "next=\"not retried\"") {
			t.Errorf("%d: log = %s", status, logs)
		}
	}
}

func TestServerRetryBounds(t *testing.T) {
	tests := []struct {
		name      string
		elapsed   time.Duration // the config's; 0 unset
		wantTotal time.Duration // most time spent waiting
		wantWaits int
	}{
		// Backoffs (jitter 0.5): 0.75, 1.5, 3, 6 s … capped at 4.5 s by the 6 s delay bound.
		{"unset takes the server's bound", 0, 10 * time.Second, 4},
		{"more than the server's is capped", time.Hour, 10 * time.Second, 4},
		{"less than the server's is kept", 2 * time.Second, 2 * time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: 503} })
			c, clock, logs := boundedClient(10*time.Second, 6*time.Second)
			cfg := testConfig(srv, provider.ProtocolChat)
			cfg.RetryMaxElapsed = tt.elapsed
			_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()})
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindServer {
				t.Fatalf("err = %v", err)
			}
			var total time.Duration
			for _, d := range clock.Sleeps() {
				total += d
				if d > 6*time.Second {
					t.Errorf("a wait of %v over the server's 6 s bound", d)
				}
			}
			if total > tt.wantTotal || len(clock.Sleeps()) != tt.wantWaits {
				t.Errorf("waits %v (total %v), want %d within %v", clock.Sleeps(), total, tt.wantWaits, tt.wantTotal)
			}
			if n := strings.Count(logs.String(), "model request failed"); n != tt.wantWaits+1 {
				t.Errorf("%d WARN lines for %d attempts:\n%s", n, tt.wantWaits+1, logs)
			}
			if !strings.Contains(logs.String(), "giving up") {
				t.Errorf("no giving-up line:\n%s", logs)
			}
		})
	}
}

func TestRetryLogNamesTheHostOnly(t *testing.T) {
	srv := fakemodel.StartTB(t)
	srv.Push(fakemodel.Turn{Status: 500, ErrorBody: `{"error":{"message":"` + strings.Repeat("overloaded ", 100) + `"}}`}, fakemodel.Turn{Text: "ok"})
	c, _, logs := boundedClient(time.Minute, time.Second)
	cfg := testConfig(srv, provider.ProtocolChat)
	if _, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()}); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	host := strings.TrimPrefix(srv.URL, "http://")
	if !strings.Contains(out, "host="+host) || strings.Contains(out, "sk-test") || !strings.Contains(out, "status=500") ||
		!strings.Contains(out, "kind=server") || !strings.Contains(out, "overloaded overloaded") || len(out) > 600 {
		t.Fatalf("log:\n%s", out)
	}
	cfg.BaseURL = "https://gw.example.com/tenant-secret-path?key=k3y"
	c.logAttempt(cfg, 1, &Error{Kind: KindServer, Status: 502}, "retrying")
	if out := logs.String(); !strings.Contains(out, "host=gw.example.com") || strings.Contains(out, "tenant-secret-path") || strings.Contains(out, "k3y") {
		t.Fatalf("log:\n%s", out)
	}
}
