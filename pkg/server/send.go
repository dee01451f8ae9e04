package server

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/agent"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// maxEarlyReplies bounds the permission replies kept for calls not asked yet.
const maxEarlyReplies = 1024

// sendPrefix is where the engine's field paths sit in a SendRequest.
const sendPrefix = "start"

// Send runs one send: the first client message starts it, later ones answer
// permission requests or stop it; events stream back in order.
func (s *Server) Send(stream agentv1.AgentService_SendServer) error {
	ctx := stream.Context()
	t, err := s.tenant(ctx)
	if err != nil {
		return err
	}
	first, err := stream.Recv()
	if err == io.EOF {
		return invalidField("start", "the stream closed before a start message")
	}
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return invalidField("start", "the first message must be a start")
	}
	if start.GetAgentId() == "" {
		return invalidField("start.agent_id", "required")
	}
	e, err := s.agent(ctx, start.GetAgentId())
	if err != nil {
		return err
	}
	c, err := s.catalog()
	if err != nil {
		return err
	}
	if err := e.refresh(c); err != nil {
		return err
	}
	if err := s.checkModel(e, start.GetConfig()); err != nil {
		return err
	}
	// The rule of SetHistory: the history as the send finds it (its own
	// replacement, or the agent's) may hold -max-history messages.
	n, field := e.s.State().HistoryLength, "the agent's history"
	if h := start.GetHistory(); h != nil {
		n, field = len(h.GetMessages()), "start.history.messages"
	}
	if err := s.checkHistorySize(n, field); err != nil {
		return err
	}
	opts := agent.SendOptions{
		Input: start.GetInput(), Config: start.GetConfig(), History: start.GetHistory(), Busy: start.GetBusyPolicy(),
		PermissionMode: start.GetPermissionMode(), AskTools: start.GetAskTools(),
	}
	if sel := start.GetTools(); sel != nil {
		if opts.Tools, err = selectTools(c, sel, "start.tools"); err != nil {
			return err
		}
	}
	done, err := s.agents.startRun(s.cfg.Limits.MaxConcurrentRuns, t)
	if err != nil {
		return err
	}
	defer done()
	if keys := configKeys(start.GetConfig()); len(keys) > 0 {
		s.secrets.add(keys...)
		defer s.secrets.remove(keys...)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	perms := &permissions{wait: map[string]chan agent.Decision{}, early: map[string]agent.Decision{}}
	opts.OnPermission = perms.ask
	opts.OnEvent = s.eventSink(cancel, func(ev *agentv1.Event) error {
		return stream.Send(&agentv1.SendResponse{Event: ev})
	})
	go perms.read(stream, cancel)

	_, err = e.s.Send(ctx, opts)
	if err == nil {
		return nil
	}
	if errors.Is(err, agent.ErrBusy) {
		return failure(codes.Aborted, ReasonBusy, "the agent is running and this send asked to be rejected when busy")
	}
	if errors.Is(err, agent.ErrStopped) && s.agents.shuttingDown() {
		return failure(codes.Unavailable, ReasonShuttingDown, "the server is shutting down; the run was stopped")
	}
	return fieldsUnder(err, sendPrefix, nil)
}

// checkModel fails a send that could reach no model, saying how to give one.
func (s *Server) checkModel(e *session, override *agentv1.AgentConfig) error {
	c := agent.MergeConfig(e.s.Config(), override)
	if exp, err := s.expander(e.tenant)(c); err == nil && exp.GetBaseUrl() != "" && exp.GetModel() == "" {
		return failure(codes.FailedPrecondition, ReasonNoModel,
			"no model: the agent's config gives a base URL (%s) but no model; set agent.config.model with UpdateAgent, or config.model in this send", hostOf(exp.GetBaseUrl()))
	}
	if c.GetProfile() != "" || c.GetBaseUrl() != "" {
		return nil
	}
	return failure(codes.FailedPrecondition, ReasonNoModel,
		"no model configured: this agent's config names no profile and no base_url, and the server has no default model. "+
			"Start agent-server with AGENTCORE_MODEL_BASE_URL and AGENTCORE_MODEL (key in AGENTCORE_MODEL_API_KEY), "+
			"or give config.base_url and config.model (or config.profile) to CreateAgent, UpdateAgent or this send")
}

// permissions pairs the client's permission replies with the calls waiting for them.
type permissions struct {
	mu     sync.Mutex
	wait   map[string]chan agent.Decision
	early  map[string]agent.Decision
	closed bool
}

// ask is the session's permission hook: it waits for the client's reply to
// the permission request event just sent.
func (p *permissions) ask(ctx context.Context, req agent.PermissionRequest) agent.Decision {
	p.mu.Lock()
	if d, ok := p.early[req.ToolCallID]; ok {
		delete(p.early, req.ToolCallID)
		p.mu.Unlock()
		return d
	}
	if p.closed {
		p.mu.Unlock()
		return agent.Decision{Reason: "the client closed its side of the stream, so no one could approve this call"}
	}
	ch := make(chan agent.Decision, 1)
	p.wait[req.ToolCallID] = ch
	p.mu.Unlock()
	select {
	case d := <-ch:
		return d
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.wait, req.ToolCallID)
		p.mu.Unlock()
		return agent.Decision{Reason: "the run ended before the client answered"}
	}
}

func (p *permissions) reply(r *agentv1.PermissionReply) {
	d := agent.Decision{Allow: r.GetAllow(), Reason: r.GetReason()}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.wait[r.GetToolCallId()]; ok {
		delete(p.wait, r.GetToolCallId())
		ch <- d
		return
	}
	if len(p.early) < maxEarlyReplies {
		p.early[r.GetToolCallId()] = d
	}
}

// closeSide denies every waiting call: the client will send no more replies.
func (p *permissions) closeSide() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for id, ch := range p.wait {
		delete(p.wait, id)
		ch <- agent.Decision{Reason: "the client closed its side of the stream, so no one could approve this call"}
	}
}

// read handles the client's messages after the start until the stream ends.
func (p *permissions) read(stream agentv1.AgentService_SendServer, cancel context.CancelCauseFunc) {
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			p.closeSide()
			return
		}
		if err != nil {
			return // the stream is gone: its context, the run's parent, is done
		}
		switch {
		case msg.GetPermission() != nil:
			p.reply(msg.GetPermission())
		case msg.GetStop() != nil:
			cancel(agent.ErrStopped)
		}
	}
}

// Stop stops a session's running send and returns once it has stopped.
func (s *Server) Stop(ctx context.Context, req *agentv1.StopRequest) (*agentv1.StopResponse, error) {
	e, err := s.agent(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	stopped, err := e.s.Stop(ctx)
	if err != nil {
		return nil, err
	}
	return &agentv1.StopResponse{Stopped: stopped}, nil
}

// Compact runs a manual compaction and streams its events.
func (s *Server) Compact(req *agentv1.CompactRequest, stream agentv1.AgentService_CompactServer) error {
	e, err := s.agent(stream.Context(), req.GetAgentId())
	if err != nil {
		return err
	}
	if err := s.checkModel(e, nil); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(nil)
	_, err = e.s.Compact(ctx, s.eventSink(cancel, func(ev *agentv1.Event) error {
		return stream.Send(&agentv1.CompactResponse{Event: ev})
	}))
	return fieldsUnder(err, "", map[string]string{"config": "agent.config"})
}

// eventSink returns an event callback that sends each event to the client,
// secrets removed from retry messages; when sending fails (the client is
// gone) it cancels the run and drops the events after.
func (s *Server) eventSink(cancel context.CancelCauseFunc, send func(*agentv1.Event) error) func(*agentv1.Event) {
	var failed bool
	limit := s.cfg.Limits.MaxMessageBytes - messageRoom
	return func(ev *agentv1.Event) {
		if failed {
			return
		}
		if r := ev.GetRetry(); r != nil {
			r.Message = s.secrets.redact(r.GetMessage())
		}
		if ev.GetModelDelta() == nil { // deltas are small; the rest may not be
			ev = fitMessage(ev, limit)
		}
		if err := send(ev); err != nil {
			failed = true
			cancel(err)
		}
	}
}
