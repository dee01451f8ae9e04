package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudwego/eino/schema"

	"github.com/agentcore/agentcore/pkg/llm/provider"
)

// retry runs once until it succeeds or fails for good. Every failed
// attempt is logged at WARN. While every attempt failed to reach the
// service and the caller's run has not reached it yet, the retrying is
// bounded by the client's RetryUnreachable as well.
func (c *Client) retry(ctx context.Context, cfg *Config, req Request, once func(context.Context) (*schema.Message, bool, error)) (*schema.Message, error) {
	start := c.now()
	maxElapsed := c.elapsedBound(cfg)
	neverReached := !req.Reached && c.unreachable != 0
	for attempt := 1; ; attempt++ {
		msg, delivered, err := c.attempt(ctx, cfg.RequestTimeout, once)
		if err == nil {
			return msg, nil
		}
		if ctx.Err() != nil {
			return nil, cancelled(ctx, err)
		}
		pe := asError(err)
		if pe.Endpoint == "" && req.Model == nil {
			pe.Endpoint = baseEndpoint(cfg.BaseURL) // a failure in a stream: the request's own path is not known here
		}
		if pe.Retryable && !transientStatus(pe.Status) {
			pe.Retryable = false
		}
		bound, what := maxElapsed, "retry_max_elapsed"
		if neverReached = neverReached && pe.Unreachable; neverReached && (bound == 0 || bound != NoRetry && c.unreachable < bound) {
			bound, what = c.unreachable, "-retry-unreachable: the service was never reached in this send"
		}
		if !pe.Retryable || delivered || bound == NoRetry {
			c.logAttempt(cfg, attempt, pe, "not retried")
			return nil, pe
		}
		delay := c.backoff(cfg, attempt, pe.RetryAfter)
		if bound > 0 && c.now().Sub(start)+delay > bound {
			c.logAttempt(cfg, attempt, pe, "giving up: retried for "+c.now().Sub(start).Round(time.Millisecond).String()+
				", and the next wait would pass "+what+" ("+bound.String()+")")
			return nil, pe
		}
		c.logAttempt(cfg, attempt, pe, "retrying in "+delay.Round(time.Millisecond).String())
		if req.OnRetry != nil {
			req.OnRetry(Retry{Attempt: attempt, Err: pe, Delay: delay})
		}
		if err := c.sleep(ctx, delay); err != nil || ctx.Err() != nil {
			return nil, cancelled(ctx, pe)
		}
	}
}

// baseEndpoint is a base URL's host and path, as provider.Endpoint gives
// them; "" for an unparsable URL.
func baseEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return provider.Endpoint(u)
}

// attempt makes one request within the request timeout.
func (c *Client) attempt(ctx context.Context, timeout time.Duration, once func(context.Context) (*schema.Message, bool, error)) (*schema.Message, bool, error) {
	actx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, timeout, provider.ErrRequestTimeout)
		defer cancel()
	}
	msg, delivered, err := once(actx)
	if err == nil && msg == nil {
		err = provider.Unknown("the model returned no message", nil)
	}
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), provider.ErrRequestTimeout) {
		pe := asError(err)
		if pe.Kind != KindTimeout {
			pe = &Error{Kind: KindTimeout, Retryable: true, Message: fmt.Sprintf("model request timed out after %v", timeout), Err: err}
		}
		return nil, delivered, pe
	}
	return msg, delivered, err
}

// backoff is the wait before retry number attempt: the server's Retry-After
// when given, else base·2^(attempt-1); either capped by RetryMaxDelay, and
// the exponential one spread by jitter over its upper half.
func (c *Client) backoff(cfg *Config, attempt int, retryAfter time.Duration) time.Duration {
	maxDelay := c.delayBound(cfg)
	d := retryAfter
	if d <= 0 {
		d = cfg.RetryBaseDelay
		for i := 1; i < attempt && d < maxDelay && d < 24*time.Hour; i++ {
			d *= 2
		}
		d = min(d, maxDelay)
		return max(d/2+time.Duration(c.jitter()*float64(d/2)), 0)
	}
	return max(min(d, maxDelay), 0)
}

// asError makes any error a *Error. Errors from a caller's eino model that
// are not *Error count as network failures when they come from the
// transport, else as unknown.
func asError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return provider.FromTransport(context.Background(), err)
	}
	return &Error{Kind: KindUnknown, Message: err.Error(), Err: err}
}

// cancelled is the error of a request whose caller's context ended.
func cancelled(ctx context.Context, err error) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Kind: KindTimeout, Message: "the caller's deadline passed", Err: err}
	}
	return &Error{Kind: KindAborted, Message: "request cancelled", Err: err}
}

// elapsedBound is how long cfg's requests are retried: its own
// retry_max_elapsed, within the client's bound (which an unset one gets).
func (c *Client) elapsedBound(cfg *Config) time.Duration {
	d := cfg.RetryMaxElapsed
	if c.maxElapsed > 0 && d != NoRetry && (d == 0 || d > c.maxElapsed) {
		return c.maxElapsed
	}
	return d
}

// delayBound caps one backoff: cfg's retry_max_delay within the client's.
func (c *Client) delayBound(cfg *Config) time.Duration {
	if c.maxDelay > 0 && c.maxDelay < cfg.RetryMaxDelay {
		return c.maxDelay
	}
	return cfg.RetryMaxDelay
}

// transientStatus reports whether an HTTP status may pass with time. 501
// (the endpoint does not implement the method: a wrong base URL), 505 and
// the other 5xx that describe the server's setup will not: retrying them
// only delays the error.
func transientStatus(status int) bool {
	switch status {
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported, http.StatusVariantAlsoNegotiates,
		http.StatusInsufficientStorage, http.StatusLoopDetected, http.StatusNotExtended, http.StatusNetworkAuthenticationRequired:
		return false
	}
	return true
}

// maxLoggedMessage bounds the upstream message a log line repeats.
const maxLoggedMessage = 200

// logAttempt logs a failed attempt at WARN: the host (never the path or
// query, which may hold a key), status, kind, the upstream message
// shortened, and what happens next.
func (c *Client) logAttempt(cfg *Config, attempt int, e *Error, next string) {
	host := "(a supplied model)"
	if u, err := url.Parse(cfg.BaseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	c.log.Warn("model request failed", "host", host, "endpoint", e.Endpoint, "model", cfg.Model, "attempt", attempt,
		"status", e.Status, "kind", e.Kind, "message", shorten(e.Message, maxLoggedMessage), "next", next)
}

// shorten cuts s to about n bytes at a rune boundary, on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
