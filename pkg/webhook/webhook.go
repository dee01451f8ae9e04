// Package webhook delivers events to HTTP endpoints in the background, the
// way the Standard Webhooks specification (standardwebhooks.com) says: an
// HTTP POST of a JSON body, signed with HMAC-SHA256 under a secret the
// server holds, with a timestamp, so that a receiver can check that the
// message comes from the server and is not a replay; retried with
// exponential backoff, within bounds, until the receiver answers 2xx.
//
// A Sender owns the deliveries: Enqueue hands it a Message and returns at
// once (a slow or dead receiver never holds up the caller), one goroutine
// per pending message tries it, at most Options.Concurrency requests at a
// time, and Close ends them. Every attempt is logged, counted
// (agentcore_webhook_*) and traced (a client span).
//
// Each attempt carries:
//
//	webhook-id: <Message.ID, the same at every attempt: receivers deduplicate by it>
//	webhook-timestamp: <the attempt's time, Unix seconds>
//	webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>
//	content-type: application/json
//
// plus the message's own headers. A receiver verifies as Verify does
// (docs/webhooks.md has the recipe in Python and Node.js). Deliveries live
// in memory: a message still pending when Close gives up is dropped, and
// counted.
//
// The Sender posts only to URLs its Allow allows (the operator's list),
// follows no redirect (a 3xx is a failed attempt: a redirect could leave
// the allowed hosts) and sends no credentials of the server's.
package webhook

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Message is one event to deliver.
type Message struct {
	// URL is where it is posted; the Sender's Allow must allow it.
	URL string
	// ID is the webhook-id: unique per event, the same at each attempt.
	// Empty: the Sender makes one ("msg_" and 32 hex digits).
	ID string
	// Type names the kind of event ("run.ended") in logs, metrics and spans.
	Type string
	// Body is the JSON body, sent as it is (Event makes the Standard
	// Webhooks shape).
	Body []byte
	// Header holds more headers to send; the webhook-* headers and
	// Content-Type are the Sender's.
	Header http.Header
}

// Options configure a Sender. Zero values take the defaults named.
type Options struct {
	// Key signs every message (ParseSecret reads one). Required.
	Key []byte
	// Allow is where messages may go. Required (an empty one refuses all).
	Allow *Allow
	// MaxAttempts bounds the attempts of one message (default 8).
	MaxAttempts int
	// MaxElapsed bounds the time from a message's first attempt to the
	// start of its last (default 30 minutes).
	MaxElapsed time.Duration
	// Backoff is the wait before the second attempt (default 1 s); each
	// further wait doubles, up to MaxBackoff (default 5 minutes), with a
	// fifth of it at random. A Retry-After on a 429 or 503 answer is
	// honoured up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Timeout bounds one attempt, the answer's body read included
	// (default 10 s).
	Timeout time.Duration
	// MaxPending bounds the messages waiting or being tried; Enqueue
	// beyond it fails with ErrFull (default 10,000).
	MaxPending int
	// Concurrency bounds the requests in flight (default 16).
	Concurrency int
	// Client sends the requests (default: one on http.DefaultTransport's
	// settings). Its redirect policy is replaced: redirects are never
	// followed.
	Client *http.Client
	// Logger gets a line per attempt (default: none).
	Logger hclog.Logger
	// Registerer gets the metrics (default: none kept). Collectors already
	// registered there by another Sender are shared.
	Registerer prometheus.Registerer
	// TracerProvider makes the attempts' spans (default: none).
	TracerProvider trace.TracerProvider
}

// Errors of Enqueue.
var (
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("webhook: the sender is closed")
	// ErrFull is returned when MaxPending messages are pending.
	ErrFull = errors.New("webhook: too many deliveries pending")
)

// Sender delivers messages in the background. It is safe for concurrent use.
type Sender struct {
	opts    Options
	client  *http.Client
	log     hclog.Logger
	tracer  trace.Tracer
	metrics *metrics
	// sem holds a token per request in flight.
	sem chan struct{}

	// ctx ends every delivery; Close cancels it once the grace is over.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts the delivery goroutines.
	wg sync.WaitGroup

	mu sync.Mutex
	// pending counts the messages enqueued and not yet finished; closed
	// refuses new ones. Both under mu.
	pending int
	closed  bool
}

// New returns a Sender; Close ends its deliveries.
func New(opts Options) (*Sender, error) {
	if len(opts.Key) < MinKeyBytes {
		return nil, fmt.Errorf("webhook: a signing key of %d bytes at least is required", MinKeyBytes)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.MaxElapsed, 30*time.Minute)
	def(&opts.Backoff, time.Second)
	def(&opts.MaxBackoff, 5*time.Minute)
	def(&opts.Timeout, 10*time.Second)
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 8
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 10000
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	client := &http.Client{Transport: http.DefaultTransport}
	if opts.Client != nil {
		c := *opts.Client
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	client.Timeout = 0 // each attempt's context bounds it
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Sender{opts: opts, client: client, log: opts.Logger, metrics: m, sem: make(chan struct{}, opts.Concurrency)}
	s.tracer = tracerOf(opts.TracerProvider)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Allowed reports whether the Sender may post to url: nil, or an error
// saying why not, fit for a client.
func (s *Sender) Allowed(url string) error { return s.opts.Allow.Check(url) }

// Enqueue hands m over for delivery and returns at once: an error when its
// URL is not allowed, when too many messages are pending (ErrFull) or
// after Close (ErrClosed). What becomes of m is logged and counted.
func (s *Sender) Enqueue(m Message) error {
	if err := s.opts.Allow.Check(m.URL); err != nil {
		s.metrics.delivered(m.Type, "refused")
		return fmt.Errorf("webhook: %w", err)
	}
	if m.ID == "" {
		m.ID = NewID()
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.pending >= s.opts.MaxPending:
		s.mu.Unlock()
		s.metrics.delivered(m.Type, "refused")
		s.log.Error("webhook dropped: too many deliveries pending", "id", m.ID, "type", m.Type, "pending", s.opts.MaxPending)
		return ErrFull
	}
	s.pending++
	s.wg.Add(1)
	s.mu.Unlock()
	s.metrics.pending.Inc()
	go func() {
		defer s.wg.Done()
		outcome := s.deliver(m)
		s.metrics.delivered(m.Type, outcome)
		s.metrics.pending.Dec()
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
	}()
	return nil
}

// Close refuses new messages, lets the pending ones go on until ctx ends
// (their retries included), then drops those left (logged and counted
// "dropped") and returns once every delivery goroutine has ended.
func (s *Sender) Close(ctx context.Context) {
	s.mu.Lock()
	s.closed = true
	n := s.pending
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	if n > 0 {
		s.log.Info("waiting for pending webhooks", "pending", n)
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.cancel()
	<-done
}

// NewID returns a fresh message id: "msg_" and 32 hex digits.
func NewID() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // never fails (it crashes the program instead)
	return "msg_" + hex.EncodeToString(b[:])
}

// hostOf is the host a URL names, for logs: never its path or query, which
// may hold a receiver's token.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "an unparsable URL"
}

// deliver tries m until it is delivered or the bounds are reached, and
// returns the outcome: delivered, failed (attempts or time ran out) or
// dropped (Close).
func (s *Sender) deliver(m Message) string {
	start := time.Now()
	wait := s.opts.Backoff
	for attempt := 1; ; attempt++ {
		res := s.attempt(m, attempt)
		if res.ok {
			return "delivered"
		}
		if s.ctx.Err() != nil {
			s.log.Warn("webhook dropped: the server stops", "id", m.ID, "type", m.Type, "attempts", attempt)
			return "dropped"
		}
		delay := jitter(wait)
		if res.retryAfter > 0 {
			delay = min(res.retryAfter, s.opts.MaxBackoff)
		}
		wait = min(2*wait, s.opts.MaxBackoff)
		if attempt >= s.opts.MaxAttempts || time.Since(start)+delay > s.opts.MaxElapsed {
			s.log.Error("webhook not delivered: giving up", "id", m.ID, "type", m.Type, "host", hostOf(m.URL),
				"attempts", attempt, "elapsed", time.Since(start).Round(time.Millisecond), "last_error", res.err)
			return "failed"
		}
		s.log.Warn("webhook attempt failed; retrying", "id", m.ID, "type", m.Type, "host", hostOf(m.URL),
			"attempt", attempt, "error", res.err, "retry_in", delay.Round(time.Millisecond))
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			s.log.Warn("webhook dropped: the server stops", "id", m.ID, "type", m.Type, "attempts", attempt)
			return "dropped"
		}
	}
}

// jitter returns d give or take a tenth.
func jitter(d time.Duration) time.Duration {
	return d - d/10 + time.Duration(mrand.Int64N(int64(d/5)+1))
}

// result is one attempt's outcome.
type result struct {
	ok         bool
	err        error
	retryAfter time.Duration
}

// attempt posts m once, signed now.
func (s *Sender) attempt(m Message, n int) result {
	select {
	case s.sem <- struct{}{}:
	case <-s.ctx.Done():
		return result{err: s.ctx.Err()}
	}
	defer func() { <-s.sem }()
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	defer cancel()
	ctx, sp := s.startSpan(ctx, m, n)
	began := time.Now()
	status, retryAfter, err := s.post(ctx, m, began)
	elapsed := time.Since(began)
	outcome := outcomeOf(status, err)
	s.metrics.attempted(m.Type, outcome, elapsed)
	endSpan(sp, status, err)
	if err == nil && status/100 != 2 {
		err = fmt.Errorf("HTTP %d", status)
		if status/100 == 3 {
			err = fmt.Errorf("HTTP %d: redirects are not followed", status)
		}
	}
	if err == nil {
		s.log.Info("webhook delivered", "id", m.ID, "type", m.Type, "host", hostOf(m.URL), "attempt", n,
			"status", status, "duration", elapsed.Round(time.Millisecond))
		return result{ok: true}
	}
	return result{err: err, retryAfter: retryAfter}
}

// post sends one signed request and returns the answer's status and
// Retry-After (0 when none).
func (s *Sender) post(ctx context.Context, m Message, now time.Time) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(m.Body))
	if err != nil {
		return 0, 0, err
	}
	for k, vs := range m.Header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentcore-webhook")
	req.Header.Set(HeaderID, m.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(s.opts.Key, m.ID, now, m.Body))
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text holds the whole URL, which may hold a token
			err = fmt.Errorf("POST %s: %w", hostOf(m.URL), ue.Err)
		}
		return 0, 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	var ra time.Duration
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			ra = time.Duration(secs) * time.Second
		}
	}
	return resp.StatusCode, ra, nil
}
