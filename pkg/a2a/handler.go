package a2a

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
	"google.golang.org/grpc/metadata"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// requestHandler serves the A2A methods of one agent (a2asrv.RequestHandler).
type requestHandler struct {
	h       *Handler
	agentID string
	// md is the request's call metadata, for the calls of push watchers.
	md metadata.MD
}

// recv reads the next run event of a Send or Attach stream.
type recv func() (*agentv1.Event, error)

// OnGetTask returns the task of a run of the agent; a completed one with its artifacts.
func (rh *requestHandler) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	run, err := rh.run(ctx, q.ID)
	if err != nil {
		return nil, err
	}
	task := taskFromRun(run)
	if run.GetState() == agentv1.RunState_RUN_STATE_SUCCEEDED && run.GetResult() != nil {
		task.Artifacts = rh.storedArtifacts(ctx, run)
	}
	return task, nil
}

// storedArtifacts are the artifacts of a finished run, its files read from
// its stored events (none when they expired).
func (rh *requestHandler) storedArtifacts(ctx context.Context, run *agentv1.Run) []*a2a.Artifact {
	t := &translator{task: taskFromRun(run).TaskInfo()}
	if !run.GetEventsExpired() {
		if st, err := rh.h.client.Attach(ctx, &agentv1.AttachRequest{RunId: run.GetId()}); err == nil {
			for {
				resp, err := st.Recv()
				if err != nil {
					break
				}
				if r := resp.GetEvent().GetToolResult(); r != nil {
					t.files = append(t.files, outputFiles(r.GetOutput())...)
				}
			}
		}
	}
	return t.artifacts(run.GetResult())
}

// run reads a run of the agent: another agent's run is not found either.
func (rh *requestHandler) run(ctx context.Context, id a2a.TaskID) (*agentv1.Run, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: a task id is required", a2a.ErrInvalidParams)
	}
	got, err := rh.h.client.GetRun(ctx, &agentv1.GetRunRequest{RunId: string(id)})
	if err != nil {
		return nil, fromStatus(err, a2a.ErrTaskNotFound)
	}
	if got.GetRun().GetAgentId() != rh.agentID {
		return nil, fmt.Errorf("%w: task %s is not a task of agent %s", a2a.ErrTaskNotFound, id, rh.agentID)
	}
	return got.GetRun(), nil
}

// OnCancelTask stops the run (its tools are killed) and returns its task.
func (rh *requestHandler) OnCancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error) {
	run, err := rh.run(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	if run.GetState() != agentv1.RunState_RUN_STATE_RUNNING {
		return nil, fmt.Errorf("%w: task %s is %s", a2a.ErrTaskNotCancelable, p.ID, taskFromRun(run).Status.State)
	}
	if _, err := rh.h.client.Stop(ctx, &agentv1.StopRequest{AgentId: rh.agentID, RunId: run.GetId()}); err != nil {
		return nil, fromStatus(err, a2a.ErrTaskNotFound)
	}
	if run, err = rh.run(ctx, p.ID); err != nil {
		return nil, err
	}
	return taskFromRun(run), nil
}

// OnSendMessage starts or continues a task and answers with it: when the
// run ended or waits for input, or at once with configuration.blocking false.
func (rh *requestHandler) OnSendMessage(ctx context.Context, p *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	blocking := p.Config == nil || p.Config.Blocking == nil || *p.Config.Blocking
	var task *a2a.Task
	for ev, err := range rh.OnSendMessageStream(ctx, p) {
		if err != nil {
			return nil, err
		}
		task = apply(task, ev)
		if !blocking && task != nil {
			break
		}
	}
	if task == nil {
		return nil, fmt.Errorf("%w: the run ended without a task", a2a.ErrInternalError)
	}
	return task, nil
}

// OnSendMessageStream starts a run with the message, or answers the
// permission request of the task it names, and streams the task's events
// until the run ends or waits for input.
func (rh *requestHandler) OnSendMessageStream(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if p.Message == nil {
			yield(nil, fmt.Errorf("%w: message is required", a2a.ErrInvalidParams))
			return
		}
		if c := p.Message.ContextID; c != "" && c != rh.agentID {
			yield(nil, fmt.Errorf("%w: contextId %q is not this agent's (%s): each agent is one context", a2a.ErrInvalidParams, c, rh.agentID))
			return
		}
		if p.Config != nil && p.Config.PushConfig != nil {
			if err := rh.checkPush(p.Config.PushConfig); err != nil {
				yield(nil, err)
				return
			}
		}
		if p.Message.TaskID != "" {
			rh.answer(ctx, p, yield)
			return
		}
		rh.start(ctx, p, yield)
	}
}

// start starts a run with the message as input and streams it.
func (rh *requestHandler) start(ctx context.Context, p *a2a.MessageSendParams, yield func(a2a.Event, error) bool) {
	input, err := inputParts(p.Message)
	if err != nil {
		yield(nil, err)
		return
	}
	startRun := &agentv1.StartRun{AgentId: rh.agentID, Input: input, OnDisconnect: agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE,
		BusyPolicy: agentv1.BusyPolicy_BUSY_POLICY_REJECT}
	if err := runSettings(startRun, p.Message.Metadata, p.Metadata); err != nil {
		yield(nil, err)
		return
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel() // the run goes on (on_disconnect continue)
	stream, err := rh.h.client.Send(sctx)
	if err == nil {
		err = stream.Send(&agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: startRun}})
	}
	if err != nil {
		yield(nil, fromStatus(err, a2a.ErrInvalidParams))
		return
	}
	first, err := stream.Recv()
	if err != nil {
		yield(nil, fromStatus(err, a2a.ErrInvalidParams))
		return
	}
	runID := first.GetEvent().GetRunId()
	msg := *p.Message
	msg.TaskID, msg.ContextID = a2a.TaskID(runID), rh.agentID
	t := &translator{task: a2a.TaskInfo{TaskID: a2a.TaskID(runID), ContextID: rh.agentID}, input: &msg}
	if p.Config != nil && p.Config.PushConfig != nil {
		rh.watch(a2a.TaskID(runID), *p.Config.PushConfig)
	}
	pending := []*agentv1.Event{first.GetEvent()}
	rh.follow(ctx, t, func() (*agentv1.Event, error) {
		if len(pending) > 0 {
			ev := pending[0]
			pending = pending[1:]
			return ev, nil
		}
		resp, err := stream.Recv()
		return resp.GetEvent(), err
	}, yield)
}

// answer answers the permission request of the task the message names,
// then streams the task on from where it was.
func (rh *requestHandler) answer(ctx context.Context, p *a2a.MessageSendParams, yield func(a2a.Event, error) bool) {
	run, err := rh.run(ctx, p.Message.TaskID)
	if err != nil {
		yield(nil, err)
		return
	}
	task := taskFromRun(run)
	if task.Status.State != a2a.TaskStateInputRequired {
		yield(nil, fmt.Errorf("%w: task %s is %s, not waiting for input: send a message without taskId to start a new task of the same context",
			a2a.ErrInvalidParams, task.ID, task.Status.State))
		return
	}
	allow, reason, callID, err := permissionAnswer(p.Message)
	if err != nil {
		yield(nil, err)
		return
	}
	if callID == "" {
		callID = run.GetPendingPermissions()[0].GetToolCallId()
	}
	if _, err := rh.h.client.RespondPermission(ctx, &agentv1.RespondPermissionRequest{RunId: run.GetId(), ToolCallId: callID, Allow: allow, Reason: reason}); err != nil {
		yield(nil, fromStatus(err, a2a.ErrTaskNotFound))
		return
	}
	t := &translator{task: task.TaskInfo(), skip: map[string]bool{callID: true}}
	if p.Config != nil && p.Config.PushConfig != nil {
		rh.watch(task.ID, *p.Config.PushConfig)
	}
	// The task first, working again: the client's stream starts from it.
	task.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: task.Status.Timestamp}
	if !yield(task, nil) {
		return
	}
	// Another call waiting already was asked before: ask it again now.
	for _, pr := range run.GetPendingPermissions() {
		if pr.GetToolCallId() != callID {
			u := a2a.NewStatusUpdateEvent(t, a2a.TaskStateInputRequired, permissionMessage(t, pr))
			u.Final = true
			yield(u, nil)
			return
		}
	}
	rh.attach(ctx, t, run.GetId(), run.GetLastSeq(), yield)
}

// OnResubscribeToTask streams a task again: the task as it is now and the
// events after it, or the events after metadata's agentcore/afterSeq.
func (rh *requestHandler) OnResubscribeToTask(ctx context.Context, p *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		run, err := rh.run(ctx, p.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		task := taskFromRun(run)
		t := &translator{task: task.TaskInfo(), skip: map[string]bool{}}
		after, ok, err := afterSeq(p.Metadata)
		if err != nil {
			yield(nil, err)
			return
		}
		if !ok {
			if task.Status.State.Terminal() && run.GetResult() != nil {
				task.Artifacts = rh.storedArtifacts(ctx, run)
			}
			if !yield(task, nil) || task.Status.State.Terminal() || task.Status.State == a2a.TaskStateInputRequired {
				return
			}
			after = run.GetLastSeq()
		}
		// A request in the replayed events that is no longer pending was answered.
		pending := map[string]bool{}
		for _, pr := range run.GetPendingPermissions() {
			pending[pr.GetToolCallId()] = true
		}
		t.replayed = run.GetLastSeq()
		t.pending = pending
		rh.attach(ctx, t, run.GetId(), after, yield)
	}
}

// attach streams a run's events after seq after.
func (rh *requestHandler) attach(ctx context.Context, t *translator, runID string, after int64, yield func(a2a.Event, error) bool) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := rh.h.client.Attach(actx, &agentv1.AttachRequest{RunId: runID, AfterSeq: after})
	if err != nil {
		yield(nil, fromStatus(err, a2a.ErrTaskNotFound))
		return
	}
	rh.follow(ctx, t, func() (*agentv1.Event, error) {
		resp, err := stream.Recv()
		return resp.GetEvent(), err
	}, yield)
}

// follow translates a run's events until the run ends, waits for input,
// the client goes away or the stream breaks.
func (rh *requestHandler) follow(ctx context.Context, t *translator, next recv, yield func(a2a.Event, error) bool) {
	for {
		ev, err := next()
		if err != nil {
			if ctx.Err() != nil {
				return // the client went away; the run goes on
			}
			if errors.Is(err, io.EOF) {
				yield(nil, fmt.Errorf("%w: the run's stream ended without a result", a2a.ErrServerError))
				return
			}
			yield(t.ended(err), nil)
			return
		}
		out, final := t.event(ev)
		for _, e := range out {
			if !yield(e, nil) {
				return
			}
		}
		if final {
			return
		}
	}
}

// runSettings applies the permission mode, asked tools and busy policy of
// a message's (or the request's) metadata to a new run.
func runSettings(start *agentv1.StartRun, metas ...map[string]any) error {
	for _, m := range metas {
		if v, ok := m[MetaPermissionMode]; ok {
			mode, err := enumValue(agentv1.PermissionMode_value, "PERMISSION_MODE_", MetaPermissionMode, v, "allow_all, ask_all or ask_listed")
			if err != nil {
				return err
			}
			start.PermissionMode = agentv1.PermissionMode(mode)
		}
		if v, ok := m[MetaAskTools]; ok {
			list, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%w: metadata %s: want a list of tool names", a2a.ErrInvalidParams, MetaAskTools)
			}
			start.AskTools = start.AskTools[:0]
			for _, item := range list {
				s, ok := item.(string)
				if !ok {
					return fmt.Errorf("%w: metadata %s: want a list of tool names", a2a.ErrInvalidParams, MetaAskTools)
				}
				start.AskTools = append(start.AskTools, s)
			}
		}
		if v, ok := m[MetaBusyPolicy]; ok {
			policy, err := enumValue(agentv1.BusyPolicy_value, "BUSY_POLICY_", MetaBusyPolicy, v, "reject, queue or replace")
			if err != nil {
				return err
			}
			start.BusyPolicy = agentv1.BusyPolicy(policy)
		}
	}
	return nil
}

// enumValue reads a metadata value naming a proto enum value in lower
// case without its prefix (ask_all for PERMISSION_MODE_ASK_ALL); the
// unspecified value is refused.
func enumValue(values map[string]int32, prefix, key string, v any, want string) (int32, error) {
	s, _ := v.(string)
	n, ok := values[prefix+strings.ToUpper(s)]
	if !ok || n == 0 {
		return 0, fmt.Errorf("%w: metadata %s: %v is not %s", a2a.ErrInvalidParams, key, v, want)
	}
	return n, nil
}

// afterSeq reads agentcore/afterSeq from resubscribe's metadata.
func afterSeq(m map[string]any) (int64, bool, error) {
	v, ok := m[MetaAfterSeq]
	if !ok {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f != float64(int64(f)) {
		return 0, false, fmt.Errorf("%w: metadata %s: want a seq (a whole number ≥ 0), got %v", a2a.ErrInvalidParams, MetaAfterSeq, v)
	}
	return int64(f), true, nil
}

// OnGetExtendedAgentCard: the cards are served whole to authenticated callers already.
func (rh *requestHandler) OnGetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
}
