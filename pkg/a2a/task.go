package a2a

import (
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Metadata keys of the events and messages this server sends and reads.
const (
	// MetaSeq is the seq of the run event an A2A event comes from.
	MetaSeq = "agentcore/seq"
	// MetaAfterSeq, in tasks/resubscribe's metadata, replays the events after this seq.
	MetaAfterSeq = "agentcore/afterSeq"
	// MetaPermissionMode, MetaAskTools and MetaBusyPolicy set a new run's
	// permission mode, the tools it asks for, and what it does when the
	// agent runs already.
	MetaPermissionMode = "agentcore/permissionMode"
	MetaAskTools       = "agentcore/askTools"
	MetaBusyPolicy     = "agentcore/busyPolicy"
	// MetaStream names the stream of a tool's live output (output, stdout, stderr).
	MetaStream = "agentcore/stream"
)

// taskFromRun is the task of a run as it is now (without artifacts).
func taskFromRun(run *agentv1.Run) *a2a.Task {
	t := &a2a.Task{ID: a2a.TaskID(run.GetId()), ContextID: run.GetAgentId(),
		Metadata: map[string]any{MetaSeq: run.GetLastSeq()}}
	t.Status = runStatus(t, run)
	return t
}

// runStatus maps a run's state to a task's status.
func runStatus(info a2a.TaskInfoProvider, run *agentv1.Run) a2a.TaskStatus {
	ts := time.Now().UTC()
	if et := run.GetEndTime(); et != nil {
		ts = et.AsTime()
	}
	st := a2a.TaskStatus{Timestamp: &ts}
	switch run.GetState() {
	case agentv1.RunState_RUN_STATE_RUNNING:
		st.State = a2a.TaskStateWorking
		if p := run.GetPendingPermissions(); len(p) > 0 {
			st.State = a2a.TaskStateInputRequired
			st.Message = permissionMessage(info, p[0])
		}
	case agentv1.RunState_RUN_STATE_SUCCEEDED:
		st.State = a2a.TaskStateCompleted
	case agentv1.RunState_RUN_STATE_STOPPED:
		st.State = a2a.TaskStateCanceled
	case agentv1.RunState_RUN_STATE_FAILED, agentv1.RunState_RUN_STATE_INTERRUPTED:
		st.State = a2a.TaskStateFailed
		e := run.GetError()
		text := e.GetMessage()
		if run.GetState() == agentv1.RunState_RUN_STATE_INTERRUPTED {
			text = "interrupted: " + text
		}
		st.Message = a2a.NewMessageForTask(a2a.MessageRoleAgent, info, a2a.TextPart{Text: text},
			a2a.DataPart{Data: map[string]any{"code": codes.Code(e.GetCode()).String(), "reason": e.GetReason()}})
	default:
		st.State = a2a.TaskStateUnknown
	}
	return st
}

// permissionMessage asks the client whether a tool call may run.
func permissionMessage(info a2a.TaskInfoProvider, p *agentv1.PermissionRequestEvent) *a2a.Message {
	return a2a.NewMessageForTask(a2a.MessageRoleAgent, info,
		a2a.TextPart{Text: fmt.Sprintf("May the tool %s run with %s? Answer allow or deny.", p.GetToolName(), p.GetArguments())},
		a2a.DataPart{Data: map[string]any{"permissionRequest": map[string]any{
			"toolCallId": p.GetToolCallId(), "toolName": p.GetToolName(), "arguments": p.GetArguments()}}})
}

// translator turns a run's events into A2A events.
type translator struct {
	task a2a.TaskInfo
	// input is the user's message, the history of a new task.
	input *a2a.Message
	// skip holds permission requests not to ask again (answered already).
	skip map[string]bool
	// Replayed events (seq up to replayed) ask only for the calls still pending.
	replayed int64
	pending  map[string]bool
	// files gathers the files the run's tools returned.
	files []a2a.Part
}

// event returns the A2A events of one run event, and whether the stream
// ends with them (the run ended, or waits for input).
func (t *translator) event(ev *agentv1.Event) ([]a2a.Event, bool) {
	meta := func() map[string]any { return map[string]any{MetaSeq: ev.GetSeq()} }
	working := func(parts ...a2a.Part) []a2a.Event {
		u := a2a.NewStatusUpdateEvent(t, a2a.TaskStateWorking, a2a.NewMessageForTask(a2a.MessageRoleAgent, t, parts...))
		u.Metadata = meta()
		return []a2a.Event{u}
	}
	switch k := ev.GetKind().(type) {
	case *agentv1.Event_RunStarted:
		now := time.Now().UTC()
		task := &a2a.Task{ID: t.task.TaskID, ContextID: t.task.ContextID, Metadata: meta(),
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}}
		if t.input != nil {
			task.History = []*a2a.Message{t.input}
		}
		return []a2a.Event{task}, false
	case *agentv1.Event_ModelResponse:
		if k.ModelResponse.GetText() != "" && len(k.ModelResponse.GetToolCalls()) > 0 {
			return working(a2a.TextPart{Text: k.ModelResponse.GetText()}), false
		}
	case *agentv1.Event_ToolCall:
		c := k.ToolCall
		return working(a2a.TextPart{Text: "calling " + c.GetToolName()},
			a2a.DataPart{Data: map[string]any{"toolCall": map[string]any{"toolCallId": c.GetToolCallId(), "toolName": c.GetToolName(), "arguments": c.GetArguments()}}}), false
	case *agentv1.Event_ToolOutput:
		o := k.ToolOutput
		ev := working(a2a.TextPart{Text: o.GetData()})
		u := ev[0].(*a2a.TaskStatusUpdateEvent)
		u.Status.Message.Metadata = map[string]any{MetaStream: streamName(o.GetStream()), "agentcore/toolCallId": o.GetToolCallId(), "agentcore/toolName": o.GetToolName()}
		return ev, false
	case *agentv1.Event_ToolResult:
		r := k.ToolResult
		t.files = append(t.files, outputFiles(r.GetOutput())...)
		return working(a2a.DataPart{Data: map[string]any{"toolResult": map[string]any{
			"toolCallId": r.GetToolCallId(), "toolName": r.GetToolName(), "error": r.GetError(), "output": tool.OutputText(r.GetOutput())}}}), false
	case *agentv1.Event_PermissionRequest:
		id := k.PermissionRequest.GetToolCallId()
		if t.skip[id] || (ev.GetSeq() <= t.replayed && !t.pending[id]) {
			return nil, false
		}
		u := a2a.NewStatusUpdateEvent(t, a2a.TaskStateInputRequired, permissionMessage(t, k.PermissionRequest))
		u.Final, u.Metadata = true, meta()
		return []a2a.Event{u}, true
	case *agentv1.Event_Result:
		var out []a2a.Event
		for _, art := range t.artifacts(k.Result) {
			a := &a2a.TaskArtifactUpdateEvent{TaskID: t.task.TaskID, ContextID: t.task.ContextID, Artifact: art, LastChunk: true, Metadata: meta()}
			out = append(out, a)
		}
		u := a2a.NewStatusUpdateEvent(t, a2a.TaskStateCompleted, nil)
		u.Final, u.Metadata = true, meta()
		return append(out, u), true
	}
	return nil, false
}

// artifacts are a finished run's: its result, and the files of its tools.
func (t *translator) artifacts(res *agentv1.RunResultEvent) []*a2a.Artifact {
	out := []*a2a.Artifact{resultArtifact(res)}
	if len(t.files) > 0 {
		out = append(out, &a2a.Artifact{ID: artifactFiles, Name: artifactFiles, Description: "the files the run's tools returned", Parts: t.files})
	}
	return out
}

// ended is the last event of a run whose stream ended with err: canceled
// when it was stopped, else failed with the error.
func (t *translator) ended(err error) *a2a.TaskStatusUpdateEvent {
	st := status.Convert(err)
	if st.Code() == codes.Canceled {
		u := a2a.NewStatusUpdateEvent(t, a2a.TaskStateCanceled, nil)
		u.Final = true
		return u
	}
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, t, a2a.TextPart{Text: st.Message()},
		a2a.DataPart{Data: map[string]any{"code": st.Code().String(), "reason": reasonOf(st)}})
	u := a2a.NewStatusUpdateEvent(t, a2a.TaskStateFailed, msg)
	u.Final = true
	return u
}

// streamName names an output stream as the metadata does.
func streamName(s agentv1.OutputStream) string {
	switch s {
	case agentv1.OutputStream_OUTPUT_STREAM_STDOUT:
		return "stdout"
	case agentv1.OutputStream_OUTPUT_STREAM_STDERR:
		return "stderr"
	}
	return "output"
}

// apply folds an event into the task it updates (for message/send, which
// answers with the task as the events left it).
func apply(task *a2a.Task, ev a2a.Event) *a2a.Task {
	switch ev := ev.(type) {
	case *a2a.Task:
		return ev
	case *a2a.TaskStatusUpdateEvent:
		if task != nil {
			task.Status = ev.Status
			if ev.Metadata != nil {
				task.Metadata = ev.Metadata
			}
		}
	case *a2a.TaskArtifactUpdateEvent:
		if task != nil {
			task.Artifacts = append(task.Artifacts, ev.Artifact)
		}
	}
	return task
}

// TaskInfo names the task the translator's events belong to.
func (t *translator) TaskInfo() a2a.TaskInfo { return t.task }
