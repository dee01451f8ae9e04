package a2a

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestPermissionAnswer pins the answers a message on an input-required
// task may give, and the error of one that gives none.
func TestPermissionAnswer(t *testing.T) {
	for _, c := range []struct {
		name   string
		parts  a2a.ContentParts
		allow  bool
		reason string
		callID string
		err    bool
	}{
		{"data allow", a2a.ContentParts{a2a.DataPart{Data: map[string]any{"allow": true}}}, true, "", "", false},
		{"data deny with reason and call", a2a.ContentParts{a2a.DataPart{Data: map[string]any{"allow": false, "reason": "no", "toolCallId": "c1"}}}, false, "no", "c1", false},
		{"text yes", a2a.ContentParts{a2a.TextPart{Text: " Yes."}}, true, "", "", false},
		{"text deny with reason", a2a.ContentParts{a2a.TextPart{Text: "deny too risky"}}, false, "too risky", "", false},
		{"data without allow, then text", a2a.ContentParts{a2a.DataPart{Data: map[string]any{"x": 1}}, a2a.TextPart{Text: "allow"}}, true, "", "", false},
		{"neither", a2a.ContentParts{a2a.TextPart{Text: "maybe later"}}, false, "", "", true},
		{"allow not a bool", a2a.ContentParts{a2a.DataPart{Data: map[string]any{"allow": "yes"}}}, false, "", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			allow, reason, callID, err := permissionAnswer(&a2a.Message{Parts: c.parts})
			if (err != nil) != c.err || (err != nil && !errors.Is(err, a2a.ErrInvalidParams)) {
				t.Fatalf("err = %v, want error %v (invalid params)", err, c.err)
			}
			if allow != c.allow || reason != c.reason || callID != c.callID {
				t.Errorf("got (%v, %q, %q), want (%v, %q, %q)", allow, reason, callID, c.allow, c.reason, c.callID)
			}
		})
	}
}

// TestRunSettings pins the metadata a new run's settings come from, and
// the errors of bad values.
func TestRunSettings(t *testing.T) {
	for _, c := range []struct {
		name   string
		meta   map[string]any
		mode   agentv1.PermissionMode
		asked  []string
		policy agentv1.BusyPolicy
		err    bool
	}{
		{"none", nil, 0, nil, agentv1.BusyPolicy_BUSY_POLICY_REJECT, false},
		{"ask listed", map[string]any{MetaPermissionMode: "ask_listed", MetaAskTools: []any{"shell"}}, agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED, []string{"shell"}, agentv1.BusyPolicy_BUSY_POLICY_REJECT, false},
		{"queue", map[string]any{MetaBusyPolicy: "queue"}, 0, nil, agentv1.BusyPolicy_BUSY_POLICY_QUEUE, false},
		{"bad mode", map[string]any{MetaPermissionMode: "sometimes"}, 0, nil, 0, true},
		{"unspecified mode", map[string]any{MetaPermissionMode: "unspecified"}, 0, nil, 0, true},
		{"bad tools", map[string]any{MetaAskTools: "shell"}, 0, nil, 0, true},
		{"bad policy", map[string]any{MetaBusyPolicy: 3.0}, 0, nil, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := &agentv1.StartRun{BusyPolicy: agentv1.BusyPolicy_BUSY_POLICY_REJECT}
			err := runSettings(start, c.meta)
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if err != nil {
				return
			}
			if start.GetPermissionMode() != c.mode || start.GetBusyPolicy() != c.policy || len(start.GetAskTools()) != len(c.asked) {
				t.Errorf("got %v", start)
			}
		})
	}
}

// TestAfterSeq pins resubscribe's agentcore/afterSeq.
func TestAfterSeq(t *testing.T) {
	for _, c := range []struct {
		meta map[string]any
		seq  int64
		ok   bool
		err  bool
	}{
		{nil, 0, false, false},
		{map[string]any{MetaAfterSeq: 12.0}, 12, true, false},
		{map[string]any{MetaAfterSeq: 0.0}, 0, true, false},
		{map[string]any{MetaAfterSeq: -1.0}, 0, false, true},
		{map[string]any{MetaAfterSeq: 1.5}, 0, false, true},
		{map[string]any{MetaAfterSeq: "12"}, 0, false, true},
	} {
		seq, ok, err := afterSeq(c.meta)
		if seq != c.seq || ok != c.ok || (err != nil) != c.err {
			t.Errorf("afterSeq(%v) = %d, %v, %v", c.meta, seq, ok, err)
		}
	}
}

// TestFromStatus pins the A2A error of each AgentService status.
func TestFromStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
	}{
		{status.Error(codes.NotFound, "run x not found"), a2a.ErrTaskNotFound},
		{status.Error(codes.InvalidArgument, "bad"), a2a.ErrInvalidParams},
		{status.Error(codes.Unauthenticated, "no"), a2a.ErrInvalidRequest},
		{status.Error(codes.Aborted, "busy"), a2a.ErrServerError},
		{status.Error(codes.FailedPrecondition, "no model"), a2a.ErrServerError},
		{a2a.ErrTaskNotCancelable, a2a.ErrTaskNotCancelable},
	} {
		if got := fromStatus(c.err, a2a.ErrTaskNotFound); !errors.Is(got, c.want) {
			t.Errorf("fromStatus(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestTaskFromRun pins the task state of each run state, input-required
// for a pending permission.
func TestTaskFromRun(t *testing.T) {
	for _, c := range []struct {
		run  *agentv1.Run
		want a2a.TaskState
	}{
		{&agentv1.Run{State: agentv1.RunState_RUN_STATE_RUNNING}, a2a.TaskStateWorking},
		{&agentv1.Run{State: agentv1.RunState_RUN_STATE_RUNNING, PendingPermissions: []*agentv1.PermissionRequestEvent{{ToolCallId: "c", ToolName: "shell"}}}, a2a.TaskStateInputRequired},
		{&agentv1.Run{State: agentv1.RunState_RUN_STATE_SUCCEEDED}, a2a.TaskStateCompleted},
		{&agentv1.Run{State: agentv1.RunState_RUN_STATE_FAILED, Error: &agentv1.RunError{Code: int32(codes.Unavailable), Message: "model down"}}, a2a.TaskStateFailed},
		{&agentv1.Run{State: agentv1.RunState_RUN_STATE_INTERRUPTED}, a2a.TaskStateFailed},
		{&agentv1.Run{State: agentv1.RunState_RUN_STATE_STOPPED}, a2a.TaskStateCanceled},
	} {
		c.run.Id, c.run.AgentId = "run_1", "helper"
		task := taskFromRun(c.run)
		if task.Status.State != c.want || task.ID != "run_1" || task.ContextID != "helper" {
			t.Errorf("%v: task %+v, want state %s", c.run.GetState(), task, c.want)
		}
		if c.want == a2a.TaskStateInputRequired && task.Status.Message == nil {
			t.Error("input-required without the request's message")
		}
	}
}

// TestResultArtifact: the text, and the structured output as data.
func TestResultArtifact(t *testing.T) {
	obj, _ := structpb.NewValue(map[string]any{"n": 3.0})
	list, _ := structpb.NewValue([]any{1.0})
	for _, c := range []struct {
		out   *structpb.Value
		parts int
		data  map[string]any
	}{
		{nil, 1, nil},
		{obj, 2, map[string]any{"n": 3.0}},
		{list, 2, map[string]any{"value": []any{1.0}}},
	} {
		art := resultArtifact(&agentv1.RunResultEvent{Text: "done", Output: c.out})
		if len(art.Parts) != c.parts || art.Parts[0].(a2a.TextPart).Text != "done" {
			t.Fatalf("artifact %+v", art)
		}
		if c.data != nil {
			if d := art.Parts[1].(a2a.DataPart).Data; len(d) != len(c.data) {
				t.Errorf("data %v, want %v", d, c.data)
			}
		}
	}
}
