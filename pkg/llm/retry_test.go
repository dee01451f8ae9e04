package llm

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// TestErrorKinds checks that every failure comes back as an *Error of the
// right kind, over real HTTP, for every protocol.
func TestErrorKinds(t *testing.T) {
	tests := []struct {
		name      string
		turn      fakemodel.Turn
		kind      Kind
		retryable bool
		status    int
	}{
		{"401", fakemodel.Turn{Status: 401}, KindAuth, false, 401},
		{"403", fakemodel.Turn{Status: 403}, KindAuth, false, 403},
		{"400", fakemodel.Turn{Status: 400}, KindRequest, false, 400},
		{"404", fakemodel.Turn{Status: 404}, KindRequest, false, 404},
		{"408", fakemodel.Turn{Status: 408}, KindTimeout, true, 408},
		{"429", fakemodel.Turn{Status: 429}, KindLimit, true, 429},
		{"500", fakemodel.Turn{Status: 500}, KindServer, true, 500},
		{"503", fakemodel.Turn{Status: 503}, KindServer, true, 503},
		{"success with the wrong shape", fakemodel.Turn{Raw: []byte(`{"unexpected":true}`), RawContentType: "application/json"}, KindUnknown, false, 0},
		{"stream cut before its end", fakemodel.Turn{Text: "partial answer", CutAfter: 1}, "", false, 0},
	}
	eachProtocol(t, func(t *testing.T, p provider.Protocol, stream bool) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				srv := fakemodel.StartTB(t)
				srv.Push(tt.turn)
				c, _ := newTestClient(t)
				cfg := testConfig(srv, p)
				cfg.Stream = stream
				cfg.RetryMaxElapsed = NoRetry
				_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()})
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *Error", err)
				}
				if tt.kind == "" {
					// A cut stream is a network failure (the body broke) or
					// unknown (the body ended without the terminal event);
					// either way it is an error, never an answer.
					if pe.Kind != KindNetwork && pe.Kind != KindUnknown {
						t.Errorf("kind = %s", pe.Kind)
					}
				} else if pe.Kind != tt.kind || pe.Retryable != tt.retryable || pe.Status != tt.status {
					t.Errorf("got %s retryable=%v status=%d (%v), want %s retryable=%v status=%d", pe.Kind, pe.Retryable, pe.Status, pe, tt.kind, tt.retryable, tt.status)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests with NoRetry", n)
				}
			})
		}
	})
}

func TestNetworkError(t *testing.T) {
	srv := fakemodel.StartTB(t)
	cfg := testConfig(srv, provider.ProtocolAnthropic)
	srv.Close() // nothing listens any more
	cfg.RetryMaxElapsed = NoRetry
	c, _ := newTestClient(t)
	_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()})
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindNetwork || !pe.Retryable {
		t.Fatalf("err = %#v", err)
	}
}

func TestStreamErrorEvent(t *testing.T) {
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(fakemodel.Turn{StreamError: &fakemodel.StreamError{Type: "rate_limit_error", Message: "slow down"}})
			c, _ := newTestClient(t)
			cfg := testConfig(srv, p)
			cfg.RetryMaxElapsed = NoRetry
			_, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello()})
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindLimit || !pe.Retryable {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

func TestRetry(t *testing.T) {
	ok := fakemodel.Turn{Text: "done"}
	fail := func(status int, header http.Header) fakemodel.Turn {
		return fakemodel.Turn{Status: status, Header: header}
	}
	tests := []struct {
		name       string
		turns      []fakemodel.Turn
		configure  func(*Config)
		wantDelays []time.Duration
		wantErr    Kind
	}{
		{
			name:       "Retry-After is honoured",
			turns:      []fakemodel.Turn{fail(503, http.Header{"Retry-After": {"2"}}), ok},
			wantDelays: []time.Duration{2 * time.Second},
		},
		{
			name:       "exponential backoff with jitter",
			turns:      []fakemodel.Turn{fail(500, nil), fail(500, nil), fail(429, nil), ok},
			wantDelays: []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second},
		},
		{
			name:       "retry_max_delay caps Retry-After and backoff",
			turns:      []fakemodel.Turn{fail(429, http.Header{"Retry-After": {"120"}}), fail(500, nil), ok},
			configure:  func(c *Config) { c.RetryMaxDelay = 1200 * time.Millisecond },
			wantDelays: []time.Duration{1200 * time.Millisecond, 900 * time.Millisecond},
		},
		{
			name:       "retry_max_elapsed gives up",
			turns:      []fakemodel.Turn{fail(500, nil), fail(500, nil), ok},
			configure:  func(c *Config) { c.RetryMaxElapsed = 2 * time.Second },
			wantDelays: []time.Duration{750 * time.Millisecond},
			wantErr:    KindServer,
		},
		{
			name:      "NoRetry never retries",
			turns:     []fakemodel.Turn{fail(500, nil), ok},
			configure: func(c *Config) { c.RetryMaxElapsed = NoRetry },
			wantErr:   KindServer,
		},
		{
			name:    "a request error is not retried",
			turns:   []fakemodel.Turn{fail(400, nil), ok},
			wantErr: KindRequest,
		},
		{
			name: "Gemini RetryInfo is honoured",
			turns: []fakemodel.Turn{{Status: 429, ErrorBody: `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED",` +
				`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`}, ok},
			wantDelays: []time.Duration{7 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(tt.turns...)
			c, clock := newTestClient(t)
			cfg := testConfig(srv, provider.ProtocolAnthropic)
			if tt.configure != nil {
				tt.configure(cfg)
			}
			var retries []Retry
			res, err := c.Chat(context.Background(), Request{Config: cfg, Messages: hello(), OnRetry: func(r Retry) { retries = append(retries, r) }})
			if tt.wantErr != "" {
				var pe *Error
				if !errors.As(err, &pe) || pe.Kind != tt.wantErr {
					t.Fatalf("err = %v, want kind %s", err, tt.wantErr)
				}
			} else if err != nil || res.Text != "done" {
				t.Fatalf("result %v, err %v", res, err)
			}
			if got := clock.Sleeps(); !reflect.DeepEqual(got, tt.wantDelays) {
				t.Errorf("waited %v, want %v", got, tt.wantDelays)
			}
			if len(retries) != len(tt.wantDelays) {
				t.Fatalf("retry callbacks %v", retries)
			}
			for i, r := range retries {
				if r.Attempt != i+1 || r.Delay != tt.wantDelays[i] || r.Err == nil || !r.Err.Retryable {
					t.Errorf("retry %d = %+v", i, r)
				}
			}
			if want := len(tt.wantDelays) + 1; len(srv.Requests()) != want {
				t.Errorf("%d requests, want %d", len(srv.Requests()), want)
			}
		})
	}
}

// TestNoRetryAfterDelta: once a delta reached the caller, a failure is
// returned as it is: retrying would show the caller the same text twice.
func TestNoRetryAfterDelta(t *testing.T) {
	broken := fakemodel.Turn{TextChunks: []string{"half an "}, StreamError: &fakemodel.StreamError{Type: "overloaded_error", Message: "busy"}}
	for _, p := range protocols {
		t.Run(string(p), func(t *testing.T) {
			srv := fakemodel.StartTB(t)
			srv.Push(broken, fakemodel.Turn{Text: "whole answer"})
			c, clock := newTestClient(t)
			var got []Delta
			_, err := c.Chat(context.Background(), Request{Config: testConfig(srv, p), Messages: hello(), OnDelta: func(d Delta) { got = append(got, d) }})
			var pe *Error
			if !errors.As(err, &pe) || pe.Kind != KindServer || !pe.Retryable {
				t.Fatalf("err = %#v", err)
			}
			if len(srv.Requests()) != 1 || len(clock.Sleeps()) != 0 || len(got) == 0 {
				t.Fatalf("%d requests, sleeps %v, deltas %v", len(srv.Requests()), clock.Sleeps(), got)
			}

			// Without a delta callback nothing reached the caller: retried.
			srv2 := fakemodel.StartTB(t)
			srv2.Push(broken, fakemodel.Turn{Text: "whole answer"})
			res, err := c.Chat(context.Background(), Request{Config: testConfig(srv2, p), Messages: hello()})
			if err != nil || res.Text != "whole answer" || len(srv2.Requests()) != 2 {
				t.Fatalf("res %v err %v requests %d", res, err, len(srv2.Requests()))
			}
		})
	}
}

func TestRequestTimeout(t *testing.T) {
	chunks := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	tests := []struct {
		name    string
		stream  bool
		turn    fakemodel.Turn
		onDelta bool
		retried bool
	}{
		{"stalled stream after a delta", true, fakemodel.Turn{TextChunks: chunks, StallAfter: 6}, true, false},
		{"stalled stream, nothing delivered", true, fakemodel.Turn{TextChunks: chunks, StallAfter: 6}, false, true},
		{"slow headers", false, fakemodel.Turn{Text: "late", Delay: time.Minute}, false, true},
	}
	for _, p := range protocols {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel() // each waits out a real timeout
				srv := fakemodel.StartTB(t)
				srv.Push(tt.turn, fakemodel.Turn{Text: "in time"})
				c, clock := newTestClient(t)
				cfg := testConfig(srv, p)
				cfg.Stream = tt.stream
				cfg.RequestTimeout = time.Second // long enough for six chunks on a loaded machine; parallel, so paid once
				req := Request{Config: cfg, Messages: hello()}
				var deltas []Delta
				if tt.onDelta {
					req.OnDelta = func(d Delta) { deltas = append(deltas, d) }
				}
				res, err := c.Chat(context.Background(), req)
				if tt.onDelta && len(deltas) == 0 {
					t.Fatal("the stream stalled before any delta; the test does not test what it says")
				}
				if tt.retried {
					if err != nil || res.Text != "in time" || len(clock.Sleeps()) != 1 {
						t.Fatalf("res %v err %v sleeps %v", res, err, clock.Sleeps())
					}
					return
				}
				var pe *Error
				if !errors.As(err, &pe) || pe.Kind != KindTimeout || !pe.Retryable {
					t.Fatalf("err = %#v", err)
				}
				if len(srv.Requests()) != 1 {
					t.Errorf("%d requests", len(srv.Requests()))
				}
			})
		}
	}
}

func TestCancellation(t *testing.T) {
	t.Run("during the request", func(t *testing.T) {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{Text: "never", Delay: time.Minute})
		c, clock := newTestClient(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := c.Chat(ctx, Request{Config: testConfig(srv, provider.ProtocolGemini), Messages: hello()})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindAborted || pe.Retryable {
			t.Fatalf("err = %#v", err)
		}
		if len(clock.Sleeps()) != 0 {
			t.Errorf("slept %v after a cancellation", clock.Sleeps())
		}
	})
	t.Run("during the backoff", func(t *testing.T) {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{Status: 503}, fakemodel.Turn{Text: "too late"})
		c, _ := newTestClient(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := c.Chat(ctx, Request{Config: testConfig(srv, provider.ProtocolAnthropic), Messages: hello(), OnRetry: func(Retry) { cancel() }})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindAborted {
			t.Fatalf("err = %#v", err)
		}
		if len(srv.Requests()) != 1 {
			t.Errorf("%d requests", len(srv.Requests()))
		}
	})
	t.Run("caller deadline", func(t *testing.T) {
		srv := fakemodel.StartTB(t)
		srv.Push(fakemodel.Turn{Text: "never", Delay: time.Minute})
		c, _ := newTestClient(t)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Chat(ctx, Request{Config: testConfig(srv, provider.ProtocolAnthropic), Messages: hello()})
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindTimeout || pe.Retryable {
			t.Fatalf("err = %#v", err)
		}
	})
}

func TestBackoffSchedule(t *testing.T) {
	c := NewClient(Options{Jitter: func() float64 { return 0 }})
	cfg := DefaultConfig()
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{
		{1, 0, 500 * time.Millisecond},
		{2, 0, time.Second},
		{5, 0, 8 * time.Second},
		{40, 0, 5 * time.Minute}, // half of the 10 minute cap, jitter 0
		{3, 3 * time.Second, 3 * time.Second},
		{1, time.Hour, 10 * time.Minute},
	}
	for _, tt := range tests {
		if got := c.backoff(cfg, tt.attempt, tt.retryAfter); got != tt.want {
			t.Errorf("backoff(%d, %v) = %v, want %v", tt.attempt, tt.retryAfter, got, tt.want)
		}
	}
}
