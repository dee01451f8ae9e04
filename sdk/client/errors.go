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
	// Kind is the model error kind, as agent-core names it: aborted, auth,
	// limit, timeout, server, network, request or unknown. Empty for errors
	// that are not model errors (validation, not found…).
	Kind string
	// Reason is the ErrorInfo reason: the kind upper-cased for model errors,
	// else one of the server's reasons (AGENT_NOT_FOUND, INVALID_ARGUMENT…);
	// ReasonOf gives it as a Reason.
	Reason string
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
		s += " (" + e.Kind + ")"
	}
	return s + ": " + e.Message
}

// KindOf returns the model error kind of err, or "" when it is not a model error.
func KindOf(err error) string {
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
		return Reason(e.Reason)
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
			e.Reason = d.GetReason()
			if modelKind(Reason(e.Reason)) {
				e.Kind = strings.ToLower(e.Reason)
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
		e.Kind = "aborted"
	}
	return e
}
