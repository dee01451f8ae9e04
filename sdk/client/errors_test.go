package client

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func withDetails(t *testing.T, code codes.Code, msg string, details ...*errdetails.ErrorInfo) error {
	t.Helper()
	st := status.New(code, msg)
	for _, d := range details {
		var err error
		if st, err = st.WithDetails(d); err != nil {
			t.Fatal(err)
		}
	}
	return st.Err()
}

func TestAsError(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		kind      string
		reason    string
		retryable bool
		status    int
	}{
		{"model error", withDetails(t, codes.ResourceExhausted, "limit", &errdetails.ErrorInfo{Reason: "LIMIT", Domain: "agentcore",
			Metadata: map[string]string{"retryable": "true", "status": "429"}}), "limit", "LIMIT", true, 429},
		{"server reason", withDetails(t, codes.NotFound, "no agent", &errdetails.ErrorInfo{Reason: "AGENT_NOT_FOUND", Domain: "agentcore"}),
			"", "AGENT_NOT_FOUND", false, 0},
		{"cancelled without details", status.Error(codes.Canceled, "gone"), "aborted", "", false, 0},
		{"not a status", errors.New("plain"), "", "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := asError(tt.err)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T is not *Error", err)
			}
			if e.Kind != tt.kind || e.Reason != tt.reason || e.Retryable != tt.retryable || e.Status != tt.status || KindOf(err) != tt.kind {
				t.Errorf("got %+v", e)
			}
		})
	}
	if asError(nil) != nil {
		t.Error("nil became an error")
	}
}

func TestReasonOf(t *testing.T) {
	busy := asError(withDetails(t, codes.Aborted, "busy", &errdetails.ErrorInfo{Reason: "AGENT_BUSY", Domain: "agentcore"}))
	tests := []struct {
		name string
		err  error
		want Reason
	}{
		{"server reason", busy, ReasonAgentBusy},
		{"wrapped", fmt.Errorf("sending: %w", busy), ReasonAgentBusy},
		{"model error", asError(withDetails(t, codes.ResourceExhausted, "limit", &errdetails.ErrorInfo{Reason: "LIMIT", Domain: "agentcore"})), ReasonLimit},
		{"a reason this client does not know", asError(withDetails(t, codes.Unavailable, "new", &errdetails.ErrorInfo{Reason: "SOMETHING_NEW"})), "SOMETHING_NEW"},
		{"no ErrorInfo", asError(status.Error(codes.Internal, "bug")), ""},
		{"not an *Error", errors.New("plain"), ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		if got := ReasonOf(tt.err); got != tt.want {
			t.Errorf("%s: ReasonOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
