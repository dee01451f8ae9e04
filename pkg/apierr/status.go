// Package apierr holds the API's errors: every error agentcore's handlers
// return becomes a gRPC status with a code, a message and, in its
// google.rpc.ErrorInfo, a stable reason (agentv1.ErrorReason).
package apierr

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/eventlog"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/replica"
	"github.com/agentcore/agentcore/pkg/sessions"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Violation is one bad field of a request.
type Violation struct {
	// Field is the path in the request, e.g. "agent.config.compact_threshold".
	Field       string
	Description string
}

// Invalid is an INVALID_ARGUMENT status with a google.rpc.BadRequest naming the fields.
func Invalid(vs ...Violation) error {
	msg := make([]string, 0, len(vs))
	br := &errdetails.BadRequest{}
	for _, v := range vs {
		msg = append(msg, v.Field+": "+v.Description)
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
			Field: v.Field, Description: v.Description,
		})
	}
	return WithDetails(codes.InvalidArgument, "invalid request: "+strings.Join(msg, "; "), br,
		ErrorInfo(agentv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT, nil))
}

// InvalidField is invalid with one violation.
func InvalidField(field, format string, args ...any) error {
	return Invalid(Violation{Field: field, Description: fmt.Sprintf(format, args...)})
}

// Failure is a status with an ErrorInfo of the given reason.
func Failure(code codes.Code, reason agentv1.ErrorReason, format string, args ...any) error {
	return WithDetails(code, fmt.Sprintf(format, args...), ErrorInfo(reason, nil))
}

// ErrorInfo is the google.rpc.ErrorInfo of reason, with md as its metadata.
// The reason is an ErrorReason, so that the server sends none the enum
// clients read (proto/agentcore/v1/errors.proto) lacks.
func ErrorInfo(reason agentv1.ErrorReason, md map[string]string) *errdetails.ErrorInfo {
	return &errdetails.ErrorInfo{Domain: agentv1.ErrorDomain, Reason: reason.Wire(), Metadata: md}
}

// protoMessage is what status details are.
type protoMessage = protoadapt.MessageV1

// SendPrefix is where the engine's field paths sit in a SendRequest.
const SendPrefix = "start"

func WithDetails(code codes.Code, msg string, details ...protoMessage) error {
	st := status.New(code, msg)
	if d, err := st.WithDetails(details...); err == nil {
		st = d
	}
	return st.Err()
}

// KindStatus maps a model error kind to its gRPC code and its ErrorInfo
// reason, the kind upper-cased (errors.proto says what each means).
func KindStatus(k llm.Kind) (codes.Code, agentv1.ErrorReason) {
	switch k {
	case llm.KindAborted:
		return codes.Canceled, agentv1.ErrorReason_ERROR_REASON_ABORTED
	case llm.KindAuth:
		return codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_AUTH
	case llm.KindLimit:
		return codes.ResourceExhausted, agentv1.ErrorReason_ERROR_REASON_LIMIT
	case llm.KindTimeout:
		return codes.DeadlineExceeded, agentv1.ErrorReason_ERROR_REASON_TIMEOUT
	case llm.KindServer:
		return codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SERVER
	case llm.KindNetwork:
		return codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_NETWORK
	case llm.KindRequest:
		return codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_REQUEST
	}
	return codes.Unknown, agentv1.ErrorReason_ERROR_REASON_UNKNOWN
}

// ModelStatus turns a model error into a status: the code by kind, and an
// ErrorInfo whose reason is the kind upper-cased and whose metadata says
// retryable, the upstream status and the provider's error code.
func ModelStatus(e *llm.Error) *status.Status {
	code, reason := KindStatus(e.Kind)
	md := map[string]string{
		"kind":      string(e.Kind),
		"retryable": strconv.FormatBool(e.Retryable),
		"status":    strconv.Itoa(e.Status),
	}
	if e.Code != "" {
		md["code"] = e.Code
	}
	switch {
	case errors.Is(e, agent.ErrReplaced):
		md["cause"] = "replaced"
	case errors.Is(e, agent.ErrStopped):
		md["cause"] = "stopped"
	case errors.Is(e, agent.ErrClosed):
		md["cause"] = "closed"
	}
	st := status.New(code, "model error: "+e.Error())
	details := []protoMessage{ErrorInfo(reason, md)}
	if e.RetryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(e.RetryAfter)})
	}
	if d, err := st.WithDetails(details...); err == nil {
		st = d
	}
	return st
}

// FromError maps any error of the engine, the model layer or the tool runtime
// to a gRPC status error. Errors that already are statuses pass through.
func FromError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var (
		me *llm.Error
		ce *llm.ConfigError
		he *history.ValidationError
	)
	var ve *agent.ValidationError
	switch {
	case errors.As(err, &ve):
		return FieldsUnder(err, "", nil)
	case errors.Is(err, agent.ErrBusy):
		return Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_RUN_ACTIVE, "the agent is running; stop it first or wait")
	case errors.Is(err, agent.ErrNothingToCompact):
		return Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_NOTHING_TO_COMPACT, "%v", err)
	case errors.As(err, &ce):
		vs := make([]Violation, 0, len(ce.Violations))
		for _, v := range ce.Violations {
			vs = append(vs, Violation{Field: v.Field, Description: v.Description})
		}
		return Invalid(vs...)
	case errors.As(err, &he):
		return HistoryInvalid("history", he)
	case errors.As(err, &me):
		return ModelStatus(me).Err()
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, tool.ErrClosed):
		return Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down")
	}
	return status.Error(codes.Internal, err.Error())
}

// HistoryInvalid names each bad message field under prefix, e.g. "history[3].parts[0]".
func HistoryInvalid(prefix string, he *history.ValidationError) error {
	vs := make([]Violation, 0, len(he.Violations))
	for _, v := range he.Violations {
		vs = append(vs, Violation{Field: v.Path(prefix), Description: v.Description})
	}
	return Invalid(vs...)
}

// FieldsUnder maps an engine error to a status whose BadRequest field paths
// are those of the request: a path whose first segment is in renames gets
// the new name, others get prefix (when not empty). Other errors map as
// FromError does.
func FieldsUnder(err error, prefix string, renames map[string]string) error {
	var (
		ve *agent.ValidationError
		ce *llm.ConfigError
		he *history.ValidationError
		vs []Violation
	)
	switch {
	case errors.As(err, &ve):
		for _, v := range ve.Violations {
			vs = append(vs, Violation{Field: v.Field, Description: v.Description})
		}
	case errors.As(err, &ce):
		for _, v := range ce.Violations {
			vs = append(vs, Violation{Field: v.Field, Description: v.Description})
		}
	case errors.As(err, &he):
		for _, v := range he.Violations {
			vs = append(vs, Violation{Field: v.Path("history"), Description: v.Description})
		}
	default:
		return FromError(err)
	}
	for i, v := range vs {
		head, rest := v.Field, ""
		if j := strings.IndexAny(head, ".["); j >= 0 {
			head, rest = head[:j], head[j:]
		}
		switch to, ok := renames[head]; {
		case ok:
			vs[i].Field = to + rest
		case prefix != "":
			vs[i].Field = prefix + "." + v.Field
		}
	}
	return Invalid(vs...)
}

// Store maps a store error to a status.
func Store(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_AGENT_NOT_FOUND, "the agent was deleted")
	case errors.Is(err, store.ErrConflict):
		return Failure(codes.Aborted, agentv1.ErrorReason_ERROR_REASON_HISTORY_CONFLICT, "the agent's history was changed elsewhere (another replica or a SetHistory) while this run went on; send again")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return FromError(err)
	}
	return Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_STORE_UNAVAILABLE, "the store is unavailable: %v", err)
}

// Answer maps the store's refusal of an answer to the permission
// request of tool call call in run run to a status.
func Answer(err error, run, call string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_PERMISSION_NOT_FOUND, "run %q has no permission request for tool call %q", run, call)
	case errors.Is(err, store.ErrConflict):
		return Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_PERMISSION_ANSWERED, "the permission request for tool call %q of run %q was answered already, or its run ended", call, run)
	}
	return Store(err)
}

// EventsLost is the status of a run that lost events.
func EventsLost(err error) error {
	return Failure(codes.DataLoss, agentv1.ErrorReason_ERROR_REASON_EVENTS_LOST,
		"%v: the run was stopped, since Attach could not follow it without a gap; the agent's history holds what it did", err)
}

// EventsLostError is the stored error of a run that lost events.
func EventsLostError(err error) *agentv1.RunError { return RunError(EventsLost(err)) }

// SyncFailedError is the stored error of a run that could not read the
// agent's history from the store as it began.
func SyncFailedError(err error) *agentv1.RunError {
	return RunError(Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_STORE_UNAVAILABLE, "%v", err))
}

// RunError is a status error as a RunError.
func RunError(err error) *agentv1.RunError {
	st := status.Convert(err)
	re := &agentv1.RunError{Code: int32(st.Code()), Message: st.Message()}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			re.Reason, re.Metadata = info.GetReason(), info.GetMetadata()
		}
	}
	return re
}

// RunStatus is the status a run that ended with re reports.
func RunStatus(re *agentv1.RunError) error {
	md := re.GetMetadata()
	return WithDetails(codes.Code(re.GetCode()), re.GetMessage(), &errdetails.ErrorInfo{Domain: agentv1.ErrorDomain, Reason: re.GetReason(), Metadata: md})
}

// Send maps the error of a send (or compaction) to the status its
// stream ends with; shuttingDown says the server is stopping its runs.
func Send(err error, shuttingDown bool) error {
	var je *agent.JournalError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrBusy):
		return Failure(codes.Aborted, agentv1.ErrorReason_ERROR_REASON_AGENT_BUSY, "the agent is running and this send asked to be rejected when busy")
	case errors.Is(err, agent.ErrNothingToResume):
		return Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_NOTHING_TO_RESUME, "%v", err)
	case errors.As(err, &je):
		return Store(je.Err)
	case errors.Is(err, eventlog.ErrEventsLost):
		return EventsLost(err)
	case errors.Is(err, replica.ErrLeaseLost):
		return Failure(codes.Aborted, agentv1.ErrorReason_ERROR_REASON_RUN_INTERRUPTED, "%v", replica.ErrLeaseLost)
	case (errors.Is(err, agent.ErrStopped) || errors.Is(err, agent.ErrClosed)) && shuttingDown:
		return Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down; the run was stopped")
	}
	return FieldsUnder(err, SendPrefix, nil)
}

// Compact maps the error of a compaction to the status its stream
// ends with.
func Compact(err error) error {
	var je *agent.JournalError
	switch {
	case errors.As(err, &je):
		return Store(je.Err)
	case errors.Is(err, agent.ErrBusy):
		return Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_RUN_ACTIVE, "the agent is running on another replica and could not be stopped")
	}
	return FieldsUnder(err, "", map[string]string{"config": "agent.config"})
}

// LimitFailure is RESOURCE_EXHAUSTED with the reason and, in the
// ErrorInfo's metadata, whose limit it is: "server" or "tenant".
func LimitFailure(reason agentv1.ErrorReason, scope, format string, args ...any) error {
	return WithDetails(codes.ResourceExhausted, fmt.Sprintf(format, args...), ErrorInfo(reason, map[string]string{"scope": scope}))
}

// Registry is the status of a send or a load the registry of loaded
// agents refused.
func Registry(err error) error {
	var le *sessions.LimitError
	switch {
	case errors.Is(err, sessions.ErrClosing):
		return Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down")
	case errors.As(err, &le):
		return LimitFailure(agentv1.ErrorReason_ERROR_REASON_RUN_LIMIT, le.Scope, "%s", le.Error())
	}
	return err
}

// RunState is the stored state of a run that ended with err: interrupted
// when the server's shutdown (shuttingDown) stopped it, stopped when it
// was stopped, else failed.
func RunState(err error, shuttingDown bool) agentv1.RunState {
	var me *llm.Error
	switch {
	case errors.Is(err, eventlog.ErrEventsLost):
		return agentv1.RunState_RUN_STATE_FAILED
	case shuttingDown && (errors.Is(err, agent.ErrStopped) || errors.Is(err, agent.ErrClosed)):
		return agentv1.RunState_RUN_STATE_INTERRUPTED
	case errors.As(err, &me) && me.Kind == llm.KindAborted:
		return agentv1.RunState_RUN_STATE_STOPPED
	}
	return agentv1.RunState_RUN_STATE_FAILED
}
