package llm

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// closedPort returns the base URL of a port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// TestUnreachable checks the rule for a service that cannot be reached: a
// request of a send that has not reached it yet is retried for at most
// RetryUnreachable (never, with NoRetry), one of a send that has is
// retried as other network errors are, and the error names the host and
// path called, never the query.
func TestUnreachable(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	closed := closedPort(t)
	tests := []struct {
		name        string
		base        string
		unreachable time.Duration
		reached     bool
		// most is the longest the retrying may take (fake clock); least the shortest.
		least, most time.Duration
		want        string
	}{
		{"refused, first request", closed, 5 * time.Second, false, time.Second, 5 * time.Second, "connection refused"},
		{"refused, NoRetry", closed, NoRetry, false, 0, 0, "connection refused"},
		{"refused, the send reached it before", closed, 5 * time.Second, true, 30 * time.Second, time.Minute, "connection refused"},
		{"refused, no bound of its own", closed, 0, false, 30 * time.Second, time.Minute, "connection refused"},
		{"TLS handshake: unknown authority", tlsSrv.URL + "/v1", 5 * time.Second, false, time.Second, 5 * time.Second, "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clock := newTestClient(t)
			c.unreachable = tt.unreachable
			cfg := DefaultConfig()
			cfg.BaseURL, cfg.APIKey, cfg.Model, cfg.Protocol = tt.base, "sk-unreachable-test", "m", provider.ProtocolChat
			cfg.RetryMaxElapsed = time.Minute
			_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), Reached: tt.reached})
			var pe *Error
			if !errors.As(err, &pe) || !pe.Unreachable || pe.Kind != KindNetwork || !pe.Retryable {
				t.Fatalf("err = %#v, want a retryable unreachable network error", err)
			}
			var waited time.Duration
			for _, d := range clock.Sleeps() {
				waited += d
			}
			if waited < tt.least || waited > tt.most {
				t.Errorf("retried for %v (%d waits), want %v to %v", waited, len(clock.Sleeps()), tt.least, tt.most)
			}
			endpoint := strings.TrimPrefix(strings.TrimPrefix(tt.base, "http://"), "https://") + "/chat/completions"
			msg := pe.Error()
			if pe.Endpoint != endpoint || !strings.Contains(msg, "calling "+endpoint) || !strings.Contains(msg, tt.want) ||
				!strings.Contains(msg, "cannot reach the model service") || strings.Contains(msg, "sk-unreachable-test") {
				t.Errorf("error %q (endpoint %q), want it to name %s and say %q", msg, pe.Endpoint, endpoint, tt.want)
			}
		})
	}
}

// TestReachedThenServerError checks that the unreachable bound applies only
// while every attempt failed to connect: a 503 is retried within
// retry_max_elapsed even on a send's first request.
func TestReachedThenServerError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	c, clock := newTestClient(t)
	c.unreachable = NoRetry
	cfg := DefaultConfig()
	cfg.BaseURL, cfg.Model, cfg.Protocol = srv.URL, "m", provider.ProtocolChat
	cfg.RetryMaxElapsed = time.Minute
	_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()})
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 503 || pe.Unreachable || len(clock.Sleeps()) < 3 {
		t.Fatalf("err = %v after %d waits, want a 503 retried", err, len(clock.Sleeps()))
	}
	if want := "calling " + strings.TrimPrefix(srv.URL, "http://") + "/chat/completions"; !strings.Contains(pe.Error(), want) {
		t.Errorf("error %q does not say %q", pe.Error(), want)
	}
}
