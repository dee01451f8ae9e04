package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/apireq"
	"github.com/agentcore/agentcore/pkg/replica"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// GetRun returns one run.
func (s *Server) GetRun(ctx context.Context, req *agentv1.GetRunRequest) (*agentv1.GetRunResponse, error) {
	if req.GetRunId() == "" {
		return nil, apierr.InvalidField("run_id", "required")
	}
	r, err := s.getRun(ctx, req.GetRunId())
	if err != nil {
		return nil, err
	}
	return &agentv1.GetRunResponse{Run: s.runProto(ctx, r)}, nil
}

// ListRuns pages through runs, newest first.
func (s *Server) ListRuns(ctx context.Context, req *agentv1.ListRunsRequest) (*agentv1.ListRunsResponse, error) {
	size, err := apireq.PageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	q := store.RunQuery{Tenant: t.ID, State: req.GetState(), RootRunID: req.GetRootRunId(), Limit: size + 1}
	if _, ok := agentv1.RunState_name[int32(req.GetState())]; !ok {
		return nil, apierr.InvalidField("state", "unknown run state %d", req.GetState())
	}
	if tok := req.GetPageToken(); tok != "" {
		c, ok := apireq.RunCursor(tok)
		if !ok {
			return nil, apierr.InvalidField("page_token", "not a token this server gave")
		}
		q.Before = c
	}
	if id := req.GetAgentId(); id != "" {
		rec, err := s.agentRecord(ctx, id)
		if err != nil {
			return nil, err
		}
		q.AgentID = rec.ID
	}
	runs, err := s.store.ListRuns(ctx, q)
	if err != nil {
		return nil, apierr.Store(err)
	}
	resp := &agentv1.ListRunsResponse{}
	for i, r := range runs {
		if i == size {
			last := runs[i-1]
			resp.NextPageToken = apireq.RunPageToken(last)
			break
		}
		resp.Runs = append(resp.Runs, s.runProto(ctx, r))
	}
	return resp, nil
}

// Stop stops the run holding an agent (a send or compaction), here or on
// another replica, and returns once it has stopped. Sends waiting their
// turn, here or there, are not affected.
func (s *Server) Stop(ctx context.Context, req *agentv1.StopRequest) (*agentv1.StopResponse, error) {
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	run := rec.RunID
	if run == "" || req.GetRunId() != "" && req.GetRunId() != run {
		return &agentv1.StopResponse{}, nil
	}
	if done := s.replica.Stop(run, agent.ErrStopped); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, apierr.FromError(ctx.Err())
		}
		return &agentv1.StopResponse{Stopped: true}, nil
	}
	if err := s.stopRemote(ctx, run, replica.CauseStopped); err != nil {
		return nil, err
	}
	return &agentv1.StopResponse{Stopped: true}, nil
}

// Compact runs a manual compaction and streams its events.
func (s *Server) Compact(req *agentv1.CompactRequest, stream agentv1.AgentService_CompactServer) error {
	sess, err := s.agent(stream.Context(), req.GetAgentId())
	if err != nil {
		return err
	}
	defer s.agents.Unpin(sess)
	if err := s.checkModel(sess, nil); err != nil {
		return err
	}
	if err := s.checkSecrets(sess, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(withRunOptions(stream.Context(), runOptions{}))
	defer cancel(nil)
	out := &sink{srv: s, send: func(ev *agentv1.Event) error { return stream.Send(&agentv1.CompactResponse{Event: ev}) }, onGone: cancel}
	_, err = sess.engine.Compact(ctx, out.event)
	return apierr.Compact(err)
}

// RespondPermission answers a run's permission request.
func (s *Server) RespondPermission(ctx context.Context, req *agentv1.RespondPermissionRequest) (*agentv1.RespondPermissionResponse, error) {
	var vs []apierr.Violation
	if req.GetRunId() == "" {
		vs = append(vs, apierr.Violation{Field: "run_id", Description: "required"})
	}
	if req.GetToolCallId() == "" {
		vs = append(vs, apierr.Violation{Field: "tool_call_id", Description: "required"})
	}
	if len(vs) > 0 {
		return nil, apierr.Invalid(vs...)
	}
	if _, err := s.getRun(ctx, req.GetRunId()); err != nil {
		return nil, err
	}
	if err := s.pending.AnswerPermission(ctx, req.GetRunId(), req.GetToolCallId(), req.GetAllow(), req.GetReason()); err != nil {
		return nil, err
	}
	return &agentv1.RespondPermissionResponse{}, nil
}

// RespondElicitation answers a run's elicitation request.
func (s *Server) RespondElicitation(ctx context.Context, req *agentv1.RespondElicitationRequest) (*agentv1.RespondElicitationResponse, error) {
	return s.pending.RespondElicitation(ctx, req, func(ctx context.Context, run string) error {
		_, err := s.getRun(ctx, run)
		return err
	})
}

// getRun reads a run of the caller's tenant.
func (s *Server) getRun(ctx context.Context, id string) (*store.Run, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.store.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && r.Tenant != t.ID {
		return nil, apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_RUN_NOT_FOUND, "no run %q", id)
	}
	if err != nil {
		return nil, apierr.Store(err)
	}
	return r, nil
}

// runProto is the public view of a run.
func (s *Server) runProto(ctx context.Context, r *store.Run) *agentv1.Run {
	out := &agentv1.Run{
		Id: r.ID, AgentId: agentID(r.AgentID), State: r.State, Result: r.Result, Error: r.Error,
		StartTime: timestamppb.New(r.Started), Replica: r.Owner, LastSeq: r.LastSeq,
		OnDisconnect: r.OnDisconnect, Compaction: r.Compaction, EventsExpired: r.Purged, EventBytes: r.EventBytes,
		Attempts:    int32(r.Attempts),
		ParentRunId: r.ParentRunID, RootRunId: r.RootRunID, Depth: int32(r.Depth), ToolCallId: r.ToolCallID, User: r.User,
	}
	if r.Done() {
		out.EndTime = timestamppb.New(r.Ended)
		return out
	}
	out.LeaseExpireTime = timestamppb.New(r.LeaseExpires)
	s.pending.Fill(ctx, out)
	return out
}

// stopRemote asks the replica running a run to stop it and waits until it
// ended. The store's notices are not kept: one sent while that replica was
// not listening (starting, or connecting to the store again) is lost. So
// the request goes out again at each poll until the run has ended; a
// replica stopping a run already stopping does nothing more.
func (s *Server) stopRemote(ctx context.Context, run, cause string) error {
	w := s.replica.WatchRun(run)
	defer w.Close()
	notify := func() error {
		if err := s.store.Notify(ctx, store.Notice{Kind: store.NoticeStop, RunID: run, Text: cause}); err != nil {
			return apierr.Store(err)
		}
		return nil
	}
	if err := notify(); err != nil {
		return err
	}
	for {
		r, err := s.store.GetRun(ctx, run)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return apierr.Store(err)
		}
		if r.Done() {
			return nil
		}
		if r.LeaseExpired {
			return s.replica.Recover(ctx, run)
		}
		select {
		case <-w.C():
		case <-time.After(leasePoll):
			if err := notify(); err != nil {
				return err
			}
		case <-ctx.Done():
			return apierr.FromError(ctx.Err())
		}
	}
}
