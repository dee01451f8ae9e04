package apierr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
)

func details(err error) (*errdetails.ErrorInfo, []string, *errdetails.RetryInfo) {
	st, _ := status.FromError(err)
	var (
		info   *errdetails.ErrorInfo
		fields []string
		retry  *errdetails.RetryInfo
	)
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.BadRequest:
			for _, f := range d.GetFieldViolations() {
				fields = append(fields, f.GetField())
			}
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	return info, fields, retry
}

func TestToStatus(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		code   codes.Code
		reason string
		fields string
	}{
		{"config", &llm.ConfigError{Violations: []llm.FieldViolation{{Field: "config.max_steps", Description: "bad"}}},
			codes.InvalidArgument, "INVALID_ARGUMENT", "config.max_steps"},
		{"history", &history.ValidationError{Violations: []history.Violation{{Index: 2, Field: "parts[0]", Description: "bad"}}},
			codes.InvalidArgument, "INVALID_ARGUMENT", "history[2].parts[0]"},
		{"engine", &agent.ValidationError{Violations: []agent.FieldViolation{{Field: "input", Description: "required"}}},
			codes.InvalidArgument, "INVALID_ARGUMENT", "input"},
		{"busy", agent.ErrBusy, codes.FailedPrecondition, "RUN_ACTIVE", ""},
		{"nothing to compact", agent.ErrNothingToCompact, codes.FailedPrecondition, "NOTHING_TO_COMPACT", ""},
		{"wrapped model error", fmt.Errorf("send: %w", &llm.Error{Kind: llm.KindLimit, Status: 429, Retryable: true, RetryAfter: 2 * time.Second}),
			codes.ResourceExhausted, "LIMIT", ""},
		{"replaced", &llm.Error{Kind: llm.KindAborted, Err: agent.ErrReplaced}, codes.Canceled, "ABORTED", ""},
		{"cancelled", context.Canceled, codes.Canceled, "", ""},
		{"other", errors.New("boom"), codes.Internal, "", ""},
		{"status passes", status.Error(codes.NotFound, "x"), codes.NotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := FromError(tt.err)
			if status.Code(err) != tt.code {
				t.Fatalf("code %v, want %v (%v)", status.Code(err), tt.code, err)
			}
			info, fields, _ := details(err)
			if info.GetReason() != tt.reason {
				t.Errorf("reason %q, want %q", info.GetReason(), tt.reason)
			}
			if got := strings.Join(fields, ","); got != tt.fields {
				t.Errorf("fields %q, want %q", got, tt.fields)
			}
		})
	}
}

func TestModelStatusDetails(t *testing.T) {
	err := FromError(&llm.Error{Kind: llm.KindLimit, Status: 429, Code: "rate_limit_exceeded", Retryable: true, RetryAfter: 3 * time.Second})
	info, _, retry := details(err)
	md := info.GetMetadata()
	if info.GetDomain() != "agentcore" || md["retryable"] != "true" || md["status"] != "429" || md["code"] != "rate_limit_exceeded" || md["kind"] != "limit" {
		t.Errorf("ErrorInfo %v", info)
	}
	if retry.GetRetryDelay().AsDuration() != 3*time.Second {
		t.Errorf("RetryInfo %v", retry)
	}
	aborted := FromError(&llm.Error{Kind: llm.KindAborted, Err: agent.ErrStopped})
	if info, _, _ := details(aborted); info.GetMetadata()["cause"] != "stopped" {
		t.Errorf("cause of a stopped run: %v", info)
	}
}

func TestModelReasonIsTheKindUpperCased(t *testing.T) {
	kinds := []llm.Kind{llm.KindAborted, llm.KindAuth, llm.KindLimit, llm.KindTimeout,
		llm.KindServer, llm.KindNetwork, llm.KindRequest, llm.KindUnknown}
	for _, k := range kinds {
		info, _, _ := details(FromError(&llm.Error{Kind: k}))
		if want := strings.ToUpper(string(k)); info.GetReason() != want {
			t.Errorf("kind %s: reason %q, want %q", k, info.GetReason(), want)
		}
	}
}

func TestFieldsUnder(t *testing.T) {
	err := FieldsUnder(&agent.ValidationError{Violations: []agent.FieldViolation{
		{Field: "config.max_steps"}, {Field: "history[1].parts"}, {Field: "input[0]"},
	}}, "start", map[string]string{"history": "messages"})
	_, fields, _ := details(err)
	if got := strings.Join(fields, ","); got != "start.config.max_steps,messages[1].parts,start.input[0]" {
		t.Errorf("fields %s", got)
	}
}
