package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// attachPage is how many stored events Attach reads at a time.
const attachPage = 500

// attachPoll bounds how long Attach waits between looks at the store when
// no notice comes (a notice lost on a dropped connection).
const attachPoll = time.Second

// Attach streams a run's events after after_seq, stored then live, each
// once and in order, and ends as the run did.
func (s *Server) Attach(req *agentv1.AttachRequest, stream agentv1.AgentService_AttachServer) error {
	ctx := stream.Context()
	if req.GetAfterSeq() < 0 {
		return apierr.InvalidField("after_seq", "must not be negative")
	}
	r, err := s.attachTarget(ctx, req)
	if err != nil {
		return err
	}
	w := s.replica.WatchRun(r.ID) // before the first read: no wake-up is missed
	defer w.Close()
	last := req.GetAfterSeq()
	if r.Purged && last < r.LastSeq {
		return apierr.Failure(codes.OutOfRange, agentv1.ErrorReason_ERROR_REASON_EVENTS_EXPIRED, "the events of run %s were deleted after the server's event retention; GetRun has its outcome", r.ID)
	}
	// seen is the attempt of the event at last: the events of a later
	// attempt replaced those after its resumption point, which the client
	// may have seen on a Send stream without the store keeping them.
	seen, rebasing := req.GetAttempt(), req.Attempt != nil
	if rebasing && seen < int32(r.Attempts) && last > 0 {
		if last, err = s.rebase(ctx, r.ID, seen, last); err != nil {
			return err
		}
	}
	for {
		evs, err := s.store.Events(ctx, r.ID, last, attachPage)
		if err != nil {
			return apierr.Store(err)
		}
		if n := len(evs); rebasing && n > 0 && evs[0].GetAttempt() > seen && evs[0].GetRunResumed() == nil && last > 0 {
			// Resumed since the client's event: start from the resumption.
			if last, err = s.rebase(ctx, r.ID, seen, last); err != nil {
				return err
			}
			seen = evs[0].GetAttempt()
			continue
		}
		for _, ev := range evs {
			if ev.GetSeq() != last+1 { // seqs are given one by one: the store lost the ones between
				return apierr.Failure(codes.DataLoss, agentv1.ErrorReason_ERROR_REASON_EVENTS_LOST, "the stored events of run %s go from %d to %d: the store lost the ones between; GetRun has the run's outcome", r.ID, last, ev.GetSeq())
			}
			if err := stream.Send(&agentv1.AttachResponse{Event: ev}); err != nil {
				return err
			}
			last, seen = ev.GetSeq(), ev.GetAttempt()
		}
		if len(evs) == attachPage {
			continue
		}
		if r.Done() && last >= r.LastSeq {
			if r.State == agentv1.RunState_RUN_STATE_SUCCEEDED {
				return nil
			}
			return apierr.RunStatus(r.Error)
		}
		if !r.Done() {
			select {
			case <-w.C():
			case <-time.After(attachPoll):
			case <-ctx.Done():
				return apierr.FromError(ctx.Err())
			}
		}
		if r, err = s.store.GetRun(ctx, r.ID); err != nil {
			return apierr.Store(err)
		}
	}
}

// rebase returns where to follow a run from for a client that saw its
// events up to last of attempt seen: before the first resumption after
// that attempt when it comes before last, else last.
func (s *Server) rebase(ctx context.Context, runID string, seen int32, last int64) (int64, error) {
	for after := int64(0); after < last; {
		evs, err := s.store.Events(ctx, runID, after, attachPage)
		if err != nil {
			return 0, apierr.Store(err)
		}
		for _, ev := range evs {
			if rs := ev.GetRunResumed(); rs != nil && rs.GetAttempt() > seen {
				return min(last, ev.GetSeq()-1), nil
			}
			after = ev.GetSeq()
		}
		if len(evs) < attachPage {
			break
		}
	}
	return last, nil
}

// attachTarget is the run an Attach names, or its agent's latest.
func (s *Server) attachTarget(ctx context.Context, req *agentv1.AttachRequest) (*store.Run, error) {
	if id := req.GetRunId(); id != "" {
		r, err := s.getRun(ctx, id)
		if err == nil && req.GetAgentId() != "" && agentID(r.AgentID) != req.GetAgentId() {
			return nil, apierr.InvalidField("agent_id", "run %s belongs to agent %s", id, agentID(r.AgentID))
		}
		return r, err
	}
	if req.GetAgentId() == "" {
		return nil, apierr.Invalid(apierr.Violation{Field: "run_id", Description: "give run_id, or agent_id for its latest run"})
	}
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	runs, err := s.store.ListRuns(ctx, store.RunQuery{AgentID: rec.ID, Tenant: rec.Tenant, Limit: 1})
	if err != nil {
		return nil, apierr.Store(err)
	}
	if len(runs) == 0 {
		return nil, apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_RUN_NOT_FOUND, "agent %q has no run", req.GetAgentId())
	}
	return runs[0], nil
}
