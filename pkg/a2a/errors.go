package a2a

import (
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/a2a"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// reasonOf is the ErrorInfo reason of a status, "" when it has none.
func reasonOf(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

// fromStatus turns an AgentService error into the A2A error a client gets:
// notFound for NOT_FOUND (a task or an agent, as the call goes), invalid
// params for INVALID_ARGUMENT, a server error with the message and reason
// for the rest. An A2A error passes unchanged.
func fromStatus(err error, notFound error) error {
	if err == nil {
		return nil
	}
	for _, e := range []error{a2a.ErrInvalidParams, a2a.ErrTaskNotFound, a2a.ErrTaskNotCancelable, a2a.ErrInvalidRequest,
		a2a.ErrPushNotificationNotSupported, a2a.ErrUnsupportedOperation, a2a.ErrServerError} {
		if errors.Is(err, e) {
			return err
		}
	}
	st := status.Convert(err)
	msg := st.Message()
	if r := reasonOf(st); r != "" {
		msg += " (" + st.Code().String() + ", " + r + ")"
	} else {
		msg += " (" + st.Code().String() + ")"
	}
	switch st.Code() {
	case codes.NotFound:
		return fmt.Errorf("%w: %s", notFound, msg)
	case codes.InvalidArgument, codes.OutOfRange:
		return fmt.Errorf("%w: %s", a2a.ErrInvalidParams, msg)
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("%w: %s", a2a.ErrInvalidRequest, msg)
	}
	return fmt.Errorf("%w: %s", a2a.ErrServerError, msg)
}
