package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrRequestTimeout is the context cause pkg/llm sets when one request
// exceeds requestTimeout; a request cancelled with it is a timeout, not an abort.
var ErrRequestTimeout = errors.New("model request timed out")

// maxMessage bounds the upstream message kept in an Error.
const maxMessage = 2000

// FromStatus classifies a non-2xx HTTP response from its status, headers and
// body. It understands the error bodies of OpenAI, Anthropic and Gemini.
func FromStatus(status int, header http.Header, body []byte) *Error {
	e := &Error{Status: status}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = KindAuth
	case status == http.StatusTooManyRequests:
		e.Kind, e.Retryable = KindLimit, true
	case status == http.StatusRequestTimeout:
		e.Kind, e.Retryable = KindTimeout, true
	case status == http.StatusConflict:
		e.Kind, e.Retryable = KindRequest, true
	case status >= 500:
		e.Kind, e.Retryable = KindServer, true
	case status >= 400:
		e.Kind = KindRequest
	default:
		e.Kind = KindUnknown
	}
	code, msg, retryDelay := parseErrorBody(body)
	e.Code, e.Message = code, msg
	if e.Message == "" {
		if isHTML(header, body) {
			e.Message = htmlSummary(body)
		} else {
			e.Message = truncate(strings.TrimSpace(string(body)))
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	if code == "insufficient_quota" {
		// Quota exhaustion is reported as 429 but does not pass with time.
		e.Retryable = false
	}
	e.RetryAfter = retryAfter(header)
	if e.RetryAfter == 0 {
		e.RetryAfter = retryDelay
	}
	return e
}

// FromStreamError classifies an error reported inside a stream (an OpenAI
// "error" event, a Responses "response.failed", an Anthropic error event) by
// its type or code.
func FromStreamError(code, message string) *Error {
	e := &Error{Code: code, Message: truncate(message)}
	switch strings.ToLower(code) {
	case "rate_limit_error", "rate_limit_exceeded", "resource_exhausted", "too_many_requests":
		e.Kind, e.Retryable = KindLimit, true
	case "insufficient_quota":
		e.Kind = KindLimit
	case "overloaded_error", "api_error", "server_error", "internal_error", "internal", "unavailable", "service_unavailable":
		e.Kind, e.Retryable = KindServer, true
	case "timeout", "timeout_error", "request_timeout", "deadline_exceeded":
		e.Kind, e.Retryable = KindTimeout, true
	case "authentication_error", "permission_error", "invalid_api_key", "unauthenticated", "permission_denied":
		e.Kind = KindAuth
	case "invalid_request_error", "invalid_argument", "not_found_error", "request_too_large", "context_length_exceeded", "failed_precondition":
		e.Kind = KindRequest
	default:
		e.Kind = KindUnknown
	}
	if e.Message == "" {
		e.Message = "the model service reported an error in the stream"
	}
	return e
}

// FromTransport classifies an error from sending a request or reading its
// body: cancellation, our request timeout, or a network failure.
func FromTransport(ctx context.Context, err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	if ctx.Err() != nil {
		if errors.Is(context.Cause(ctx), ErrRequestTimeout) {
			return &Error{Kind: KindTimeout, Retryable: true, Message: ErrRequestTimeout.Error(), Err: err}
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &Error{Kind: KindTimeout, Message: "deadline exceeded", Err: err}
		}
		return &Error{Kind: KindAborted, Message: "request cancelled", Err: err}
	}
	if errors.Is(err, ErrRequestTimeout) {
		return &Error{Kind: KindTimeout, Retryable: true, Message: ErrRequestTimeout.Error(), Err: err}
	}
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		// Its text repeats the whole URL, query included: the Endpoint names
		// the host and path instead.
		msg = ue.Err.Error()
	}
	unreachable := isUnreachable(err)
	if unreachable {
		msg = "cannot reach the model service: " + msg
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Retryable: true, Message: msg, Unreachable: unreachable, Err: err}
	}
	return &Error{Kind: KindNetwork, Retryable: true, Message: msg, Unreachable: unreachable, Err: err}
}

// isUnreachable reports whether a transport error means that the request
// never reached the service: no connection (refused, no route, a dial that
// timed out), a host name that did not resolve, or a failed TLS handshake.
func isUnreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	var alert tls.AlertError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &dns), errors.As(err, &verify), errors.As(err, &header), errors.As(err, &alert),
		errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return true
	case errors.As(err, &op):
		return op.Op == "dial" || op.Op == "remote error" // the latter: a TLS alert from the peer
	}
	return false
}

// Unknown reports a success response whose body has the wrong shape, or a
// stream that ended without the protocol's terminal event.
// A bare io.EOF is wrapped as io.ErrUnexpectedEOF so that callers testing
// errors.Is(err, io.EOF) never mistake the failure for a clean end of stream.
func Unknown(message string, err error) *Error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &Error{Kind: KindUnknown, Message: message, Err: err}
}

// IsEOF reports whether err means the body ended early.
func IsEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// errorBody covers {"error": {...}} (OpenAI, Anthropic, Gemini) and Anthropic's
// top-level {"type":"error","error":{...}}.
type errorBody struct {
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Status  string          `json:"status"`
		Details []struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
		} `json:"details"`
	} `json:"error"`
	Message string `json:"message"`
}

func parseErrorBody(body []byte) (code, message string, retryDelay time.Duration) {
	var b errorBody
	// Some gateways wrap the object in an array (Gemini does on some paths).
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		var arr []errorBody
		if json.Unmarshal(body, &arr) == nil && len(arr) > 0 {
			b = arr[0]
		}
	} else if json.Unmarshal(body, &b) != nil {
		return "", "", 0
	}
	if b.Error == nil {
		return "", truncate(b.Message), 0
	}
	code = b.Error.Type
	if c := strings.Trim(string(b.Error.Code), `"`); c != "" && c != "null" {
		if _, err := strconv.Atoi(c); err != nil { // Gemini's numeric code repeats the status
			code = c
		}
	}
	if code == "" {
		code = b.Error.Status
	}
	for _, d := range b.Error.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && d.RetryDelay != "" {
			if dur, err := time.ParseDuration(d.RetryDelay); err == nil {
				retryDelay = dur
			}
		}
	}
	return code, truncate(b.Error.Message), retryDelay
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage] + "…"
}
