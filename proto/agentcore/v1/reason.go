package agentv1

import "strings"

// ErrorDomain is the google.rpc.ErrorInfo domain of every error agentcore reports.
const ErrorDomain = "agentcore"

// reasonPrefix is what the enum's value names have and the wire strings drop.
const reasonPrefix = "ERROR_REASON_"

// Wire is the reason as google.rpc.ErrorInfo.reason carries it: the value's
// name without ERROR_REASON_ ("AGENT_BUSY"); "" for UNSPECIFIED and for a
// number the enum does not have.
func (r ErrorReason) Wire() string {
	if r == ErrorReason_ERROR_REASON_UNSPECIFIED {
		return ""
	}
	name, ok := ErrorReason_name[int32(r)]
	if !ok {
		return ""
	}
	return strings.TrimPrefix(name, reasonPrefix)
}

// ErrorReasonOf is the reason whose wire string is s, UNSPECIFIED when no
// value has it (a reason of a newer server, or not agentcore's).
func ErrorReasonOf(s string) ErrorReason {
	if s == "" {
		return ErrorReason_ERROR_REASON_UNSPECIFIED
	}
	return ErrorReason(ErrorReason_value[reasonPrefix+s])
}
