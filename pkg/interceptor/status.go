package interceptor

import (
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// The statuses the interceptors end a call with carry the public API's
// error details, as the handlers' do: a reason in a google.rpc.ErrorInfo,
// a bad field in a google.rpc.BadRequest.

// refuse is a status with an ErrorInfo of the given reason.
func refuse(code codes.Code, reason agentv1.ErrorReason, format string, args ...any) error {
	return withDetails(status.New(code, fmt.Sprintf(format, args...)), &errdetails.ErrorInfo{Domain: agentv1.ErrorDomain, Reason: reason.Wire()})
}

// invalidField is INVALID_ARGUMENT with a google.rpc.BadRequest naming the
// field.
func invalidField(field, format string, args ...any) error {
	desc := fmt.Sprintf(format, args...)
	return withDetails(status.New(codes.InvalidArgument, "invalid request: "+field+": "+desc),
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: desc}}},
		&errdetails.ErrorInfo{Domain: agentv1.ErrorDomain, Reason: agentv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT.Wire()})
}

func withDetails(st *status.Status, details ...protoadapt.MessageV1) error {
	if d, err := st.WithDetails(details...); err == nil {
		st = d
	}
	return st.Err()
}
