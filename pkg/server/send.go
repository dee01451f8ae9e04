package server

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/interceptor"
	"github.com/agentcore/agentcore/pkg/profile"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// sendPrefix is where the engine's field paths sit in a SendRequest.
const sendPrefix = "start"

// Send runs one send: the first client message starts it, later ones answer
// permission requests or stop it; events stream back in order. With
// on_disconnect CONTINUE the run outlives the stream: it runs on the
// server's own goroutine and the stream only follows it.
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
	if _, ok := agentv1.OnDisconnect_name[int32(start.GetOnDisconnect())]; !ok {
		return invalidField("start.on_disconnect", "unknown value %d", start.GetOnDisconnect())
	}
	sess, err := s.agent(ctx, start.GetAgentId())
	if err != nil {
		return err
	}
	c, err := s.catalog()
	if err != nil {
		return err
	}
	if err := sess.refresh(c); err != nil {
		return err
	}
	if err := s.checkModel(sess, start.GetConfig()); err != nil {
		return err
	}
	if err := s.checkSecrets(sess, start.GetConfig()); err != nil {
		return err
	}
	// The rule of SetHistory: the history as the send finds it (its own
	// replacement, or the agent's) may hold -max-history messages.
	n, field := sess.engine.HistoryLength(), "the agent's history"
	if h := start.GetHistory(); h != nil {
		n, field = len(h.GetMessages()), "start.history.messages"
	}
	if err := s.checkHistorySize(n, field); err != nil {
		return err
	}
	opts := agent.SendOptions{
		Input: start.GetInput(), Config: start.GetConfig(), History: start.GetHistory(), Busy: start.GetBusyPolicy(),
		PermissionMode: start.GetPermissionMode(), AskTools: start.GetAskTools(), Resume: start.GetResume(),
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
	keys := agent.Secrets(start.GetConfig())
	s.secrets.Add(keys...)
	finish := func() {
		s.secrets.Remove(keys...)
		done()
	}

	detached := start.GetOnDisconnect() == agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE
	base := ctx // holds the caller's tenant
	if detached {
		base = context.WithoutCancel(base)
	}
	ctx, cancel := context.WithCancelCause(withRunOptions(base, runOptions{onDisconnect: start.GetOnDisconnect()}))
	k := &sink{srv: s, send: func(ev *agentv1.Event) error { return stream.Send(&agentv1.SendResponse{Event: ev}) }}
	if !detached {
		k.onGone = cancel // the client going away stops the run
	}
	r := &replies{srv: s, sink: k, detached: detached}
	opts.OnPermission = r.ask
	opts.OnEvent = k.event
	go r.read(stream, cancel)

	if !detached {
		defer finish()
		defer cancel(nil)
		_, err = sess.engine.Send(ctx, opts)
		return s.sendError(err)
	}
	result := make(chan error, 1)
	s.bgRuns.Add(1)
	go func() {
		defer s.bgRuns.Done()
		defer finish()
		defer cancel(nil)
		_, err := sess.engine.Send(ctx, opts)
		result <- err
	}()
	select {
	case err := <-result:
		return s.sendError(err)
	case <-stream.Context().Done():
		k.detach()
		run := k.run()
		s.log.Debug("client left a run that goes on", "agent", sess.id, "run", run)
		return status.Errorf(codes.Canceled, "the client went away; run %s goes on (on_disconnect CONTINUE): Attach follows it", run)
	}
}

// checkModel fails a send that could reach no model, saying how to give one.
func (s *Server) checkModel(sess *session, override *agentv1.AgentConfig) error {
	c := sess.engine.StoredConfig() // read only; the send expands the same one
	if override != nil {
		c = agent.MergeConfig(c, override)
	}
	if exp, err := sess.expand(c); err == nil && exp.GetBaseUrl() != "" && exp.GetModel() == "" {
		return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_NO_MODEL,
			"no model: the agent's config gives a base URL (%s) but no model; set agent.config.model with UpdateAgent, or config.model in this send", profile.Host(exp.GetBaseUrl()))
	}
	if c.GetProfile() != "" || c.GetBaseUrl() != "" {
		return nil
	}
	return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_NO_MODEL,
		"no model configured: this agent's config names no profile and no base_url, and the server has no default model. "+
			"Start agent-server with AGENTCORE_MODEL_BASE_URL and AGENTCORE_MODEL (key in AGENTCORE_MODEL_API_KEY), "+
			"or give config.base_url and config.model (or config.profile) to CreateAgent, UpdateAgent or this send")
}

// replies handles what the client sends on a Send stream after the start:
// permission answers and stop.
type replies struct {
	srv      *Server
	sink     *sink
	detached bool
	// closed: the client closed its side (a STOP run can get no more answers).
	closed atomic.Bool
}

// closedText answers the calls of a STOP run whose client closed its side.
const closedText = "the client closed its side of the stream, so no one could approve this call"

// ask is the run's permission hook.
func (r *replies) ask(ctx context.Context, req agent.PermissionRequest) agent.Decision {
	if !r.detached && r.closed.Load() {
		return r.srv.replica.Decide(req.RunID, req.ToolCallID, false, closedText)
	}
	return r.srv.replica.Ask(ctx, req)
}

// read handles the client's messages until the stream ends.
func (r *replies) read(stream agentv1.AgentService_SendServer, cancel context.CancelCauseFunc) {
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			if !r.detached {
				r.closed.Store(true)
				if run := r.sink.run(); run != "" {
					for _, call := range r.srv.replica.Waiting(run) {
						r.srv.replica.Deliver(run, call, r.srv.replica.Decide(run, call, false, closedText))
					}
				}
			}
			return
		}
		if err != nil {
			return // the stream is gone: a STOP run's context, its parent, is done
		}
		switch {
		case msg.GetPermission() != nil:
			p := msg.GetPermission()
			if run := r.sink.run(); run != "" {
				_ = r.srv.answer(stream.Context(), run, p.GetToolCallId(), p.GetAllow(), p.GetReason())
			}
		case msg.GetStop() != nil:
			cancel(agent.ErrStopped)
		}
	}
}

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
		ev = interceptor.FitMessage(ev, s.cfg.Limits.MaxMessageBytes-interceptor.MessageRoom)
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

// checkSecrets fails a send (or compaction) of an agent restored without
// the secrets its client gave, unless override supplies them.
func (s *Server) checkSecrets(sess *session, override *agentv1.AgentConfig) error {
	sess.mu.Lock()
	missing := sess.missing
	sess.mu.Unlock()
	var still []string
	for _, p := range missing {
		if !agent.SecretGiven(p, override) {
			still = append(still, p)
		}
	}
	if len(still) == 0 {
		return nil
	}
	return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_API_KEY_REQUIRED,
		"this agent was restored from the store without %s: API keys and header values a client gives are never stored, only kept in the memory of the server that got them. "+
			"Give them again with UpdateAgent (e.g. config.api_key) or in this send's config, or use a server profile (config.profile) that holds the key",
		strings.Join(still, ", "))
}
