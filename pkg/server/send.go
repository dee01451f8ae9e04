package server

import (
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/secret"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/apireq"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/catalog"
	"github.com/agentcore/agentcore/pkg/interceptor"
	"github.com/agentcore/agentcore/pkg/mcpauth"
	"github.com/agentcore/agentcore/pkg/profile"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Send runs one send: the first client message starts it, later ones answer
// permission requests or stop it; events stream back in order. With
// on_disconnect CONTINUE the run outlives the stream: it runs on the
// server's own goroutine and the stream only follows it.
func (s *Server) Send(stream agentv1.AgentService_SendServer) error {
	t, err := s.tenant(stream.Context())
	if err != nil {
		return err
	}
	user, err := auth.UserOf(stream.Context())
	if err != nil {
		return apierr.InvalidField(auth.UserHeader, "%v", err)
	}
	start, err := receiveStart(stream)
	if err != nil {
		return err
	}
	sess, opts, err := s.prepareSend(stream.Context(), start)
	if err != nil {
		return err
	}
	resume, err := s.resumeSpecOf(sess, start)
	if err != nil {
		s.agents.Unpin(sess)
		return apierr.FromError(err)
	}
	opts.Budget = rootBudget(start.GetBudget(), sess, t)
	admitted, err := s.admitSend(t, start.GetConfig())
	if err != nil {
		s.agents.Unpin(sess)
		return err
	}
	// The session stays pinned (in memory) until the run has ended, which
	// may be after the stream (on_disconnect CONTINUE).
	release := func() { admitted(); s.agents.Unpin(sess) }
	detached := start.GetOnDisconnect() == agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE
	ro := runOptions{onDisconnect: start.GetOnDisconnect(), resume: resume, user: user,
		hook: s.hooks.Target(sess.expand, sess.engine.StoredConfig(), start.GetConfig(), agentID(sess.id))}
	ctx, cancel, out := s.connectSend(stream, ro, &opts)
	if !detached {
		defer release()
		defer cancel(nil)
		_, err = sess.engine.Send(ctx, opts)
		return s.sendError(err)
	}
	return s.followDetached(stream, sess, out, func() error {
		_, err := sess.engine.Send(ctx, opts)
		return err
	}, func() { cancel(nil); release() })
}

// receiveStart reads a send's first message, which must start it.
func receiveStart(stream agentv1.AgentService_SendServer) (*agentv1.StartRun, error) {
	first, err := stream.Recv()
	if err == io.EOF {
		return nil, apierr.InvalidField("start", "the stream closed before a start message")
	}
	if err != nil {
		return nil, err
	}
	start := first.GetStart()
	if start == nil {
		return nil, apierr.InvalidField("start", "the first message must be a start")
	}
	if start.GetAgentId() == "" {
		return nil, apierr.InvalidField("start.agent_id", "required")
	}
	if _, ok := agentv1.OnDisconnect_name[int32(start.GetOnDisconnect())]; !ok {
		return nil, apierr.InvalidField("start.on_disconnect", "unknown value %d", start.GetOnDisconnect())
	}
	return start, nil
}

// prepareSend finds the agent a send starts, checks that it can run (a
// model, the secrets, the history's size) and returns its session, pinned
// for the send, and the engine's options for it, the tools it selects
// resolved.
func (s *Server) prepareSend(ctx context.Context, start *agentv1.StartRun) (*session, agent.SendOptions, error) {
	sess, err := s.agent(ctx, start.GetAgentId())
	if err != nil {
		return nil, agent.SendOptions{}, err
	}
	opts, err := s.sendOptions(sess, start)
	if err != nil {
		s.agents.Unpin(sess)
		return nil, opts, err
	}
	return sess, opts, nil
}

// sendOptions checks that a send of sess can run and returns its options.
func (s *Server) sendOptions(sess *session, start *agentv1.StartRun) (agent.SendOptions, error) {
	var opts agent.SendOptions
	c, err := s.sendable(sess, start.GetConfig(), start.GetHistory())
	if err != nil {
		return opts, err
	}
	if err := apireq.CheckBudget(start.GetBudget(), "start.budget"); err != nil {
		return opts, err
	}
	opts = agent.SendOptions{
		Input: start.GetInput(), Config: start.GetConfig(), History: start.GetHistory(), Busy: start.GetBusyPolicy(),
		PermissionMode: start.GetPermissionMode(), AskTools: start.GetAskTools(), Resume: start.GetResume(),
	}
	if sel := start.GetTools(); sel != nil {
		if opts.Tools, err = selectTools(c, sel, "start.tools"); err != nil {
			return opts, err
		}
		sess.mu.Lock()
		if sess.agentSet != nil {
			opts.Tools = tool.Merge(opts.Tools, sess.agentSet)
		}
		sess.mu.Unlock()
	}
	return opts, nil
}

// sendable checks that a send (a root's or a child run's) of sess can
// run, with the config override and history replacement it gives, and
// points the session at the current catalog, which it returns.
func (s *Server) sendable(sess *session, override *agentv1.AgentConfig, replace *agentv1.HistoryReplacement) (*catalog.Catalog, error) {
	c, err := s.catalog()
	if err != nil {
		return nil, err
	}
	if err := sess.refresh(c); err != nil {
		return nil, err
	}
	if err := s.checkModel(sess, override); err != nil {
		return nil, err
	}
	if err := s.checkSecrets(sess, override); err != nil {
		return nil, err
	}
	// The rule of SetHistory: the history as the send finds it (its own
	// replacement, or the agent's) may hold -max-history messages.
	n, field := sess.engine.HistoryLength(), "the agent's history"
	if replace != nil {
		n, field = len(replace.GetMessages()), "start.history.messages"
	}
	return c, s.checkHistorySize(n, field)
}

// checkModel fails a send that could reach no model, saying how to give one.
func (s *Server) checkModel(sess *session, override *agentv1.AgentConfig) error {
	c := sess.engine.StoredConfig() // read only; the send expands the same one
	if override != nil {
		c = agent.MergeConfig(c, override)
	}
	exp, err := sess.expand(c)
	if err != nil {
		return nil // the send fails with the expansion's own violations
	}
	if exp.GetBaseUrl() != "" && exp.GetModel() == "" {
		return apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_NO_MODEL,
			"no model: the agent's config gives a base URL (%s) but no model; set agent.config.model with UpdateAgent, or config.model in this send", profile.Host(exp.GetBaseUrl()))
	}
	if exp.GetBaseUrl() != "" || c.GetProfile() != "" {
		return nil
	}
	return apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_NO_MODEL,
		"no model configured: this agent's config names no profile and no base_url, and the server has no default model. "+
			"Start agent-server with AGENTCORE_MODEL_BASE_URL and AGENTCORE_MODEL (key in AGENTCORE_MODEL_API_KEY), "+
			"or give config.base_url and config.model (or config.profile) to CreateAgent, UpdateAgent or this send")
}

// checkSecrets fails a send (or compaction) of an agent restored without
// the secrets its client gave, unless override supplies them.
func (s *Server) checkSecrets(sess *session, override *agentv1.AgentConfig) error {
	sess.mu.Lock()
	missing := sess.missing
	sess.mu.Unlock()
	var still []string
	for _, p := range missing {
		if !secret.Given(p, override) {
			still = append(still, p)
		}
	}
	if len(still) == 0 {
		return nil
	}
	return apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_API_KEY_REQUIRED,
		"this agent was restored from the store without %s: API keys and header values a client gives are never stored, only kept in the memory of the server that got them. "+
			"Give them again with UpdateAgent (e.g. config.api_key) or in this send's config, or use a server profile (config.profile) that holds the key",
		strings.Join(still, ", "))
}

// admitSend counts a send of the tenant against the limits on running sends
// and holds the secrets of its config override for the redactor; release
// undoes both once the send has ended.
func (s *Server) admitSend(t *auth.Tenant, override *agentv1.AgentConfig) (release func(), err error) {
	done, err := s.agents.StartRun(s.cfg.Limits.MaxConcurrentRuns, t.ID, t.MaxConcurrentRuns)
	if err != nil {
		return nil, apierr.Registry(err)
	}
	keys := secret.Values(override)
	s.secrets.Add(keys...)
	return func() {
		s.secrets.Remove(keys...)
		done()
	}, nil
}

// connectSend joins a send to its stream: the run's context (the caller's,
// without its cancellation when the run outlives the stream), its events
// to the stream (out), and the client's later messages (permission answers,
// stop) to the run, read on a goroutine of their own.
func (s *Server) connectSend(stream agentv1.AgentService_SendServer, ro runOptions, opts *agent.SendOptions) (context.Context, context.CancelCauseFunc, *sink) {
	detached := ro.onDisconnect == agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE
	base := stream.Context() // holds the caller's tenant
	if detached {
		base = context.WithoutCancel(base)
	}
	out := &sink{srv: s, send: func(ev *agentv1.Event) error { return stream.Send(&agentv1.SendResponse{Event: ev}) }}
	in := &inbound{srv: s, sink: out, detached: detached}
	ro.tree = rootTree(opts, in.ask)
	ctx, cancel := context.WithCancelCause(withRunOptions(base, ro))
	if !detached {
		out.onGone = cancel // the client going away stops the run
	}
	opts.OnPermission = s.hooks.Asking(ro.hook, in.ask)
	opts.OnElicit = s.pending.Elicit // answered with RespondElicitation, never on the stream
	if t, err := s.tenant(base); err == nil {
		opts.OnCredential = mcpauth.Handler(s.vault, t.ID, ro.user)
	}
	opts.OnEvent = out.event
	go in.read(stream, cancel)
	return ctx, cancel, out
}

// followDetached runs a send that outlives its stream on the server's own
// goroutine (run, then ended), and follows it on the stream until either
// ends.
func (s *Server) followDetached(stream agentv1.AgentService_SendServer, sess *session, out *sink, run func() error, ended func()) error {
	result := make(chan error, 1)
	s.bgRuns.Add(1)
	go func() {
		defer s.bgRuns.Done()
		defer ended()
		result <- run()
	}()
	select {
	case err := <-result:
		return s.sendError(err)
	case <-stream.Context().Done():
		out.detach()
		id := out.run()
		s.log.Debug("client left a run that goes on", "agent", sess.id, "run", id)
		return status.Errorf(codes.Canceled, "the client went away; run %s goes on (on_disconnect CONTINUE): Attach follows it", id)
	}
}

// inbound handles what the client sends on a Send stream after the start:
// permission answers and stop.
type inbound struct {
	srv      *Server
	sink     *sink
	detached bool
	// closed: the client closed its side (a STOP run can get no more answers).
	closed atomic.Bool
}

// closedText answers the calls of a STOP run whose client closed its side.
const closedText = "the client closed its side of the stream, so no one could approve this call"

// ask is the run's permission hook.
func (in *inbound) ask(ctx context.Context, req agent.PermissionRequest) agent.Decision {
	if !in.detached && in.closed.Load() {
		return in.srv.replica.Decide(req.RunID, req.ToolCallID, false, closedText)
	}
	return in.srv.replica.Ask(ctx, req)
}

// read handles the client's messages until the stream ends.
func (in *inbound) read(stream agentv1.AgentService_SendServer, cancel context.CancelCauseFunc) {
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			if !in.detached {
				in.closed.Store(true)
				if root := in.sink.run(); root != "" { // the root's calls and its child runs' (they ask the root's stream)
					in.srv.replica.DenyWaiting(func(run string) bool { return run == root || in.srv.inTree(stream.Context(), run, root) }, closedText)
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
			if run := in.sink.run(); run != "" {
				if child := p.GetRunId(); child != "" && child != run && in.srv.inTree(stream.Context(), child, run) {
					run = child // a child run's request, as the stream carried it
				}
				_ = in.srv.pending.AnswerPermission(stream.Context(), run, p.GetToolCallId(), p.GetAllow(), p.GetReason())
			}
		case msg.GetStop() != nil:
			cancel(agent.ErrStopped)
		}
	}
}

// sink passes a run's events on: the requests they carry into the store
// first (pending.Keep: so that an answer can find them), then every event
// to the event log and to the client's stream while there is one.
type sink struct {
	srv *Server

	mu     sync.Mutex
	send   func(*agentv1.Event) error // nil once the client is gone
	onGone func(error)                // called when sending fails (a STOP run: cancel it)
	runID  string                     // the run's id, from its first event
}

// event passes one event of the run on (the engine's OnEvent).
func (out *sink) event(ev *agentv1.Event) {
	s := out.srv
	if retry := ev.GetRetry(); retry != nil {
		retry.Message = s.secrets.Redact(retry.GetMessage())
	}
	if ev.GetModelDelta() == nil { // deltas are small; the rest may not be
		ev = interceptor.FitMessage(ev, s.cfg.Limits.MaxMessageBytes-interceptor.MessageRoom)
	}
	if tc := ev.GetToolCall(); tc != nil {
		s.faults.ToolCalled(tc.GetToolName()) // test-only: a run whose tool crashes its server
	}
	s.pending.Keep(ev)
	s.events.Add(ev)
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.runID == "" {
		out.runID = ev.GetRunId()
	}
	if out.send == nil {
		return
	}
	if err := out.send(ev); err != nil {
		out.send = nil
		if out.onGone != nil {
			out.onGone(err)
		}
	}
}

// detach stops sending to the client (its stream is ending).
func (out *sink) detach() {
	out.mu.Lock()
	defer out.mu.Unlock()
	out.send = nil
}

// run returns the run's id, once its first event has passed.
func (out *sink) run() string {
	out.mu.Lock()
	defer out.mu.Unlock()
	return out.runID
}

// sendError maps the error of a send to the status its stream ends with.
func (s *Server) sendError(err error) error { return apierr.Send(err, s.agents.ShuttingDown()) }
