package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// attachPage is how many stored events Attach reads at a time.
const attachPage = 500

// attachPoll bounds how long Attach waits between looks at the store when
// no notice comes (a notice lost on a dropped connection).
const attachPoll = time.Second

// sink passes a run's events on: permission requests into the store first
// (so that an answer can find them), then every event to the event log and
// to the client's stream while there is one.
type sink struct {
	srv *Server

	mu     sync.Mutex
	send   func(*agentv1.Event) error // nil once the client is gone
	onGone func(error)                // called when sending fails (a STOP run: cancel it)
	runID  string                     // the run's id, from its first event
}

func (k *sink) event(ev *agentv1.Event) {
	s := k.srv
	if r := ev.GetRetry(); r != nil {
		r.Message = s.secrets.Redact(r.GetMessage())
	}
	if ev.GetModelDelta() == nil { // deltas are small; the rest may not be
		ev = fitMessage(ev, s.cfg.Limits.MaxMessageBytes-messageRoom)
	}
	if p := ev.GetPermissionRequest(); p != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err := s.store.AskPermission(ctx, &store.Permission{RunID: ev.GetRunId(), CallID: p.GetToolCallId(), ToolName: p.GetToolName(), Arguments: p.GetArguments()})
		cancel()
		if err != nil && !errors.Is(err, store.ErrExists) {
			s.log.Warn("permission request not stored: only this run's stream can answer it", "run", ev.GetRunId(), "error", err)
		}
	}
	s.events.Add(ev)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.runID == "" {
		k.runID = ev.GetRunId()
	}
	if k.send == nil {
		return
	}
	if err := k.send(ev); err != nil {
		k.send = nil
		if k.onGone != nil {
			k.onGone(err)
		}
	}
}

// detach stops sending to the client (its stream is ending).
func (k *sink) detach() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.send = nil
}

func (k *sink) run() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.runID
}

// permKey names a permission request.
type permKey struct{ run, call string }

// permWaiters holds the permission requests of runs here that wait for an
// answer, by run and call.
type permWaiters struct {
	mu sync.Mutex
	m  map[permKey]chan agent.Decision
}

func (p *permWaiters) add(k permKey) chan agent.Decision {
	ch := make(chan agent.Decision, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[permKey]chan agent.Decision{}
	}
	p.m[k] = ch
	return ch
}

func (p *permWaiters) remove(k permKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, k)
}

// deliver hands a decision to the waiting request, if any.
func (p *permWaiters) deliver(k permKey, d agent.Decision) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.m[k]; ok {
		select {
		case ch <- d:
		default:
		}
	}
}

// keys returns every request waiting for an answer.
func (p *permWaiters) keys() []permKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]permKey, 0, len(p.m))
	for k := range p.m {
		out = append(out, k)
	}
	return out
}

// waiting returns the calls of a run waiting for an answer.
func (p *permWaiters) waiting(run string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for k := range p.m {
		if k.run == run {
			out = append(out, k.call)
		}
	}
	return out
}

func decision(p *store.Permission) agent.Decision {
	return agent.Decision{Allow: p.Allow, Reason: p.Reason}
}

// askPermission is the engine's permission hook: it waits for an answer
// from the run's stream, RespondPermission on any replica, or the
// permission timeout, which denies.
func (s *Server) askPermission(ctx context.Context, req agent.PermissionRequest) agent.Decision {
	k := permKey{req.RunID, req.ToolCallID}
	ch := s.perms.add(k)
	defer s.perms.remove(k)
	if d, ok := s.storedDecision(ctx, k); ok { // answered before we listened
		return d
	}
	timer := time.NewTimer(s.cfg.PermissionTimeout)
	defer timer.Stop()
	select {
	case d := <-ch:
		return d
	case <-timer.C:
		reason := fmt.Sprintf("no one answered within the permission timeout (%s)", s.cfg.PermissionTimeout)
		return s.decide(k, false, reason)
	case <-ctx.Done():
		return agent.Decision{Reason: "the run ended before the client answered"}
	}
}

// decide answers a request of a run here, unless someone answered first
// (then that answer stands).
func (s *Server) decide(k permKey, allow bool, reason string) agent.Decision {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	p, err := s.store.AnswerPermission(ctx, k.run, k.call, allow, reason)
	if err != nil && p != nil && p.Answered {
		return decision(p)
	}
	return agent.Decision{Allow: allow, Reason: reason}
}

// storedDecision returns the stored answer of a request, if it has one.
func (s *Server) storedDecision(ctx context.Context, k permKey) (agent.Decision, bool) {
	ps, err := s.store.Permissions(ctx, k.run)
	if err != nil {
		return agent.Decision{}, false
	}
	for _, p := range ps {
		if p.CallID == k.call && p.Answered {
			return decision(p), true
		}
	}
	return agent.Decision{}, false
}

// deliverStored hands a decision another replica stored to the request
// waiting here.
func (s *Server) deliverStored(run, call string) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	k := permKey{run, call}
	if d, ok := s.storedDecision(ctx, k); ok {
		s.perms.deliver(k, d)
	}
}

// answer stores a decision and hands it to the run, here or on the
// replica that runs it.
func (s *Server) answer(ctx context.Context, run, call string, allow bool, reason string) error {
	_, err := s.store.AnswerPermission(ctx, run, call, allow, reason)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_PERMISSION_NOT_FOUND, "run %q has no permission request for tool call %q", run, call)
	case errors.Is(err, store.ErrConflict):
		return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_PERMISSION_ANSWERED, "the permission request for tool call %q of run %q was answered already, or its run ended", call, run)
	case err != nil:
		return storeStatus(err)
	}
	k := permKey{run, call}
	if s.live.has(run) {
		s.perms.deliver(k, agent.Decision{Allow: allow, Reason: reason})
		return nil
	}
	if err := s.store.Notify(ctx, store.Notice{Kind: store.NoticePermission, RunID: run, Text: call}); err != nil {
		return storeStatus(err)
	}
	return nil
}

// RespondPermission answers a run's permission request.
func (s *Server) RespondPermission(ctx context.Context, req *agentv1.RespondPermissionRequest) (*agentv1.RespondPermissionResponse, error) {
	var vs []Violation
	if req.GetRunId() == "" {
		vs = append(vs, Violation{Field: "run_id", Description: "required"})
	}
	if req.GetToolCallId() == "" {
		vs = append(vs, Violation{Field: "tool_call_id", Description: "required"})
	}
	if len(vs) > 0 {
		return nil, invalid(vs...)
	}
	if _, err := s.getRun(ctx, req.GetRunId()); err != nil {
		return nil, err
	}
	if err := s.answer(ctx, req.GetRunId(), req.GetToolCallId(), req.GetAllow(), req.GetReason()); err != nil {
		return nil, err
	}
	return &agentv1.RespondPermissionResponse{}, nil
}

// getRun reads a run of the caller's tenant.
func (s *Server) getRun(ctx context.Context, id string) (*store.Run, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.store.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && r.Tenant != t.ID {
		return nil, failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_RUN_NOT_FOUND, "no run %q", id)
	}
	if err != nil {
		return nil, storeStatus(err)
	}
	return r, nil
}

// runProto is the public view of a run.
func (s *Server) runProto(ctx context.Context, r *store.Run) *agentv1.Run {
	out := &agentv1.Run{
		Id: r.ID, AgentId: agentID(r.AgentID), State: r.State, Result: r.Result, Error: r.Error,
		StartTime: timestamppb.New(r.Started), Replica: r.Owner, LastSeq: r.LastSeq,
		OnDisconnect: r.OnDisconnect, Compaction: r.Compaction, EventsExpired: r.Purged,
	}
	if r.Done() {
		out.EndTime = timestamppb.New(r.Ended)
		return out
	}
	out.LeaseExpireTime = timestamppb.New(r.LeaseExpires)
	if ps, err := s.store.Permissions(ctx, r.ID); err == nil {
		for _, p := range ps {
			if !p.Answered {
				out.PendingPermissions = append(out.PendingPermissions, &agentv1.PermissionRequestEvent{
					ToolCallId: p.CallID, ToolName: p.ToolName, Arguments: p.Arguments})
			}
		}
	}
	return out
}

// GetRun returns one run.
func (s *Server) GetRun(ctx context.Context, req *agentv1.GetRunRequest) (*agentv1.GetRunResponse, error) {
	if req.GetRunId() == "" {
		return nil, invalidField("run_id", "required")
	}
	r, err := s.getRun(ctx, req.GetRunId())
	if err != nil {
		return nil, err
	}
	return &agentv1.GetRunResponse{Run: s.runProto(ctx, r)}, nil
}

// ListRuns pages through runs, newest first.
func (s *Server) ListRuns(ctx context.Context, req *agentv1.ListRunsRequest) (*agentv1.ListRunsResponse, error) {
	size, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	q := store.RunQuery{Tenant: t.ID, State: req.GetState(), Limit: size + 1}
	if _, ok := agentv1.RunState_name[int32(req.GetState())]; !ok {
		return nil, invalidField("state", "unknown run state %d", req.GetState())
	}
	if tok := req.GetPageToken(); tok != "" {
		c, ok := decodeRunCursor(tok)
		if !ok {
			return nil, invalidField("page_token", "not a token this server gave")
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
		return nil, storeStatus(err)
	}
	resp := &agentv1.ListRunsResponse{}
	for i, r := range runs {
		if i == size {
			last := runs[i-1]
			resp.NextPageToken = encodeRunCursor(last)
			break
		}
		resp.Runs = append(resp.Runs, s.runProto(ctx, r))
	}
	return resp, nil
}

func encodeRunCursor(r *store.Run) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(r.Started.UnixMicro(), 10) + ":" + r.ID))
}

func decodeRunCursor(tok string) (*store.Cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return nil, false
	}
	us, id, ok := strings.Cut(string(b), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, false
	}
	return &store.Cursor{Started: time.UnixMicro(n), ID: id}, true
}

// Attach streams a run's events after after_seq, stored then live, each
// once and in order, and ends as the run did.
func (s *Server) Attach(req *agentv1.AttachRequest, stream agentv1.AgentService_AttachServer) error {
	ctx := stream.Context()
	if req.GetAfterSeq() < 0 {
		return invalidField("after_seq", "must not be negative")
	}
	r, err := s.attachTarget(ctx, req)
	if err != nil {
		return err
	}
	w := s.watch.watch(runKey(r.ID)) // before the first read: no wake-up is missed
	defer w.close()
	last := req.GetAfterSeq()
	if r.Purged && last < r.LastSeq {
		return failure(codes.OutOfRange, agentv1.ErrorReason_ERROR_REASON_EVENTS_EXPIRED, "the events of run %s were deleted after the server's event retention; GetRun has its outcome", r.ID)
	}
	for {
		evs, err := s.store.Events(ctx, r.ID, last, attachPage)
		if err != nil {
			return storeStatus(err)
		}
		for _, ev := range evs {
			if ev.GetSeq() != last+1 { // seqs are given one by one: the store lost the ones between
				return failure(codes.DataLoss, agentv1.ErrorReason_ERROR_REASON_EVENTS_LOST, "the stored events of run %s go from %d to %d: the store lost the ones between; GetRun has the run's outcome", r.ID, last, ev.GetSeq())
			}
			if err := stream.Send(&agentv1.AttachResponse{Event: ev}); err != nil {
				return err
			}
			last = ev.GetSeq()
		}
		if len(evs) == attachPage {
			continue
		}
		if r.Done() && last >= r.LastSeq {
			if r.State == agentv1.RunState_RUN_STATE_SUCCEEDED {
				return nil
			}
			return runStatus(r.Error)
		}
		if !r.Done() {
			select {
			case <-w.ch:
			case <-time.After(attachPoll):
			case <-ctx.Done():
				return toStatus(ctx.Err())
			}
		}
		if r, err = s.store.GetRun(ctx, r.ID); err != nil {
			return storeStatus(err)
		}
	}
}

// attachTarget is the run an Attach names, or its agent's latest.
func (s *Server) attachTarget(ctx context.Context, req *agentv1.AttachRequest) (*store.Run, error) {
	if id := req.GetRunId(); id != "" {
		r, err := s.getRun(ctx, id)
		if err == nil && req.GetAgentId() != "" && agentID(r.AgentID) != req.GetAgentId() {
			return nil, invalidField("agent_id", "run %s belongs to agent %s", id, agentID(r.AgentID))
		}
		return r, err
	}
	if req.GetAgentId() == "" {
		return nil, invalid(Violation{Field: "run_id", Description: "give run_id, or agent_id for its latest run"})
	}
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	runs, err := s.store.ListRuns(ctx, store.RunQuery{AgentID: rec.ID, Tenant: rec.Tenant, Limit: 1})
	if err != nil {
		return nil, storeStatus(err)
	}
	if len(runs) == 0 {
		return nil, failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_RUN_NOT_FOUND, "agent %q has no run", req.GetAgentId())
	}
	return runs[0], nil
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
	if lr := s.live.get(run); lr != nil {
		lr.stop(agent.ErrStopped)
		select {
		case <-lr.done:
		case <-ctx.Done():
			return nil, toStatus(ctx.Err())
		}
		return &agentv1.StopResponse{Stopped: true}, nil
	}
	if err := s.stopRemote(ctx, run, causeStopped); err != nil {
		return nil, err
	}
	return &agentv1.StopResponse{Stopped: true}, nil
}

// stopRemote asks the replica running a run to stop it and waits until it
// ended. The store's notices are not kept: one sent while that replica was
// not listening (starting, or connecting to the store again) is lost. So
// the request goes out again at each poll until the run has ended; a
// replica stopping a run already stopping does nothing more.
func (s *Server) stopRemote(ctx context.Context, run, cause string) error {
	w := s.watch.watch(runKey(run))
	defer w.close()
	notify := func() error {
		if err := s.store.Notify(ctx, store.Notice{Kind: store.NoticeStop, RunID: run, Text: cause}); err != nil {
			return storeStatus(err)
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
			return storeStatus(err)
		}
		if r.Done() {
			return nil
		}
		if r.LeaseExpired {
			return s.recoverRun(ctx, run)
		}
		select {
		case <-w.ch:
		case <-time.After(leasePoll):
			if err := notify(); err != nil {
				return err
			}
		case <-ctx.Done():
			return toStatus(ctx.Err())
		}
	}
}
