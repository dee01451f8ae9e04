package llm

import (
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

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
	c.log.Warn("model request failed", "host", host, "model", cfg.Model, "attempt", attempt,
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
