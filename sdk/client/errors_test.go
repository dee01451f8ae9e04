package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
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
		kind      Kind
		reason    Reason
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

// TestErrorCarriesReasonAndMetadata: a client compares the reason with a
// constant and reads the ErrorInfo's metadata.
func TestErrorCarriesReasonAndMetadata(t *testing.T) {
	err := asError(withDetails(t, codes.Canceled, "stopped", &errdetails.ErrorInfo{Reason: "ABORTED", Domain: "agentcore",
		Metadata: map[string]string{"cause": "replaced", "retryable": "false"}}))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%T is not *Error", err)
	}
	if e.Code != codes.Canceled || e.Reason != ReasonAborted || e.Kind != KindAborted || e.Metadata["cause"] != "replaced" {
		t.Errorf("got %+v", e)
	}
}

// TestKindsAreTheProtoErrorKinds checks the Kind constants against
// agentv1.ErrorKind: one constant per value, each the value's name in lower
// case, and each kind's reason (upper-cased) a model reason.
func TestKindsAreTheProtoErrorKinds(t *testing.T) {
	kinds := []Kind{KindAborted, KindAuth, KindLimit, KindTimeout, KindServer, KindNetwork, KindRequest, KindUnknown}
	var want []Kind
	for n := range len(agentv1.ErrorKind_name) {
		if k := agentv1.ErrorKind(n); k != agentv1.ErrorKind_ERROR_KIND_UNSPECIFIED {
			want = append(want, Kind(strings.ToLower(strings.TrimPrefix(k.String(), "ERROR_KIND_"))))
		}
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("Kind constants %v, agentv1.ErrorKind has %v", kinds, want)
	}
	for _, k := range kinds {
		if r := Reason(strings.ToUpper(string(k))); !modelKind(r) {
			t.Errorf("kind %s: its reason %s is not a model error reason", k, r)
		}
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
