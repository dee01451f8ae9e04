package client

import (
	"errors"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is every error a call returns.
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Kind is the model error kind, as agent-core names it: one of the Kind
	// constants (KindLimit…). Empty for errors that are not model errors
	// (validation, not found…).
	Kind Kind
	// Reason is the ErrorInfo reason: the kind upper-cased for model errors,
	// else one of the server's reasons; compare it with the Reason
	// constants (e.Reason == ReasonAgentBusy). Empty when the status carried
	// no ErrorInfo (the connection failed, or the call was cancelled here).
	Reason Reason
	// Metadata is the ErrorInfo metadata: for model errors retryable, status,
	// code and, for a stopped run, cause (replaced, stopped or closed); for
	// limits, whose limit it was. docs/errors.md lists the keys.
	Metadata map[string]string
	// Retryable says whether the same request may succeed later (model errors).
	Retryable bool
	// Status is the model service's HTTP status, 0 if none.
	Status int
	// Fields are the bad fields of an INVALID_ARGUMENT.
	Fields []FieldViolation
	// Message is the server's message.
	Message string
}

// FieldViolation is one bad field of a request.
type FieldViolation struct {
	Field, Description string
}

// Error says the code, the kind when there is one, and the server's message.
func (e *Error) Error() string {
	s := "agentcore: " + e.Code.String()
	if e.Kind != "" {
		s += " (" + string(e.Kind) + ")"
	}
	return s + ": " + e.Message
}

// Kind is a model error's kind, as agent-core names it (error.kind): the
// values of agentv1.ErrorKind in lower case. Its reason is the kind upper-cased.
type Kind string

// The model error kinds.
const (
	// KindAborted: the call or run was cancelled (by the client, Stop, a
	// newer send, or the agent's deletion).
	KindAborted Kind = "aborted"
	// KindAuth: the model service refused the key or the permission (401, 403).
	KindAuth Kind = "auth"
	// KindLimit: the model service rate-limited the request (429).
	KindLimit Kind = "limit"
	// KindTimeout: a model request timed out (or the service answered 408).
	KindTimeout Kind = "timeout"
	// KindServer: the model service failed (5xx).
	KindServer Kind = "server"
	// KindNetwork: the model service could not be reached or the connection broke.
	KindNetwork Kind = "network"
	// KindRequest: the model service rejected the request (another 4xx).
	KindRequest Kind = "request"
	// KindUnknown: a success status with a body of the wrong shape.
	KindUnknown Kind = "unknown"
)

// KindOf returns the model error kind of err, or "" when it is not a model error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Reason is a google.rpc.ErrorInfo reason an agentcore server sends, one of
// the Reason constants (agentv1.ErrorReason's wire strings, listed with what
// each means in docs/errors.md). A newer server may send one this client
// has no constant for: act on the Error's Code then.
type Reason string

// ReasonOf returns the reason of err, or "" when it carries none.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// modelKind reports whether an ErrorInfo reason is a model error kind.
func modelKind(reason Reason) bool {
	switch reason {
	case ReasonAborted, ReasonAuth, ReasonLimit, ReasonTimeout, ReasonServer, ReasonNetwork, ReasonRequest, ReasonUnknown:
		return true
	}
	return false
}

// asError turns a gRPC error into an *Error (nil stays nil).
func asError(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return &Error{Code: codes.Unknown, Message: err.Error()}
	}
	e := &Error{Code: st.Code(), Message: st.Message()}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			e.Reason, e.Metadata = Reason(d.GetReason()), d.GetMetadata()
			if modelKind(e.Reason) {
				e.Kind = Kind(strings.ToLower(d.GetReason()))
			}
			e.Retryable = d.GetMetadata()["retryable"] == "true"
			e.Status, _ = strconv.Atoi(d.GetMetadata()["status"])
		case *errdetails.BadRequest:
			for _, f := range d.GetFieldViolations() {
				e.Fields = append(e.Fields, FieldViolation{Field: f.GetField(), Description: f.GetDescription()})
			}
		}
	}
	if e.Kind == "" && e.Code == codes.Canceled {
		e.Kind = KindAborted
	}
	return e
}
