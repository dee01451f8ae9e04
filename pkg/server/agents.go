package server

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/secret"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/apireq"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/replica"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// CreateAgent creates a session owned by the caller's tenant and stores it.
func (s *Server) CreateAgent(ctx context.Context, req *agentv1.CreateAgentRequest) (*agentv1.CreateAgentResponse, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.catalog()
	if err != nil {
		return nil, err
	}
	a := req.GetAgent()
	tools, err := selectTools(c, a.GetTools(), "agent.tools")
	if err != nil {
		return nil, err
	}
	skills, err := selectSkills(c, a.GetSkills(), "agent.skills")
	if err != nil {
		return nil, err
	}
	agentSet, err := s.agentTools(a.GetAgentTools(), "agent.agent_tools")
	if err != nil {
		return nil, err
	}
	if err := apireq.CheckBudget(a.GetBudget(), "agent.budget"); err != nil {
		return nil, err
	}
	if agentSet != nil {
		tools = tool.Merge(tools, agentSet)
	}
	id := req.GetAgentId()
	if id == "" {
		id = a.GetId()
	}
	if err := s.checkHistorySize(len(req.GetHistory()), "history"); err != nil {
		return nil, err
	}
	cfg := a.GetConfig()
	sess := &session{tenant: t.ID, tools: a.GetTools(), skills: a.GetSkills(), applied: c, keys: secret.Values(a.GetConfig()),
		expand: s.profiles.Expander(t.ID), agentTools: a.GetAgentTools(), agentSet: agentSet, budget: a.GetBudget()}
	engine, err := s.newEngine(sess, agent.Options{ID: id, Config: cfg, History: req.GetHistory(), Tools: tools, Skills: skills})
	if err != nil {
		return nil, apierr.FieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	if err := s.profiles.CheckRunnable(cfg, t.ID); err != nil {
		return nil, apierr.FieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	sess.engine, sess.id = engine, storeID(t.ID, engine.ID())
	if err := s.checkAgentLimits(ctx, t); err != nil {
		return nil, err
	}
	rec := storedAgent(sess.id, sess.tenant, cfg, sess.selections(), nil)
	if err := s.store.CreateAgent(ctx, rec, req.GetHistory()); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, apierr.Failure(codes.AlreadyExists, agentv1.ErrorReason_ERROR_REASON_AGENT_EXISTS, "agent %q exists", engine.ID())
		}
		return nil, apierr.Store(err)
	}
	sess.version, sess.created = rec.Version, rec.Created
	rec.HistoryLength = len(req.GetHistory()) // as GetAgent reports it
	s.secrets.Add(sess.keys...)
	if old, ok := s.agents.Put(sess); ok { // a stale copy of an agent deleted elsewhere
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		old.Close(ctx)
		cancel()
	}
	return &agentv1.CreateAgentResponse{Agent: s.agentProto(rec, sess)}, nil
}

// GetAgent returns one agent.
func (s *Server) GetAgent(ctx context.Context, req *agentv1.GetAgentRequest) (*agentv1.GetAgentResponse, error) {
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	return &agentv1.GetAgentResponse{Agent: s.agentProto(rec, s.inMemory(rec.ID))}, nil
}

// ListAgents pages through the caller's agents ordered by id.
func (s *Server) ListAgents(ctx context.Context, req *agentv1.ListAgentsRequest) (*agentv1.ListAgentsResponse, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	size, err := apireq.PageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	after := ""
	if tok := req.GetPageToken(); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return nil, apierr.InvalidField("page_token", "not a token this server gave")
		}
		after = storeID(t.ID, string(b))
	}
	recs, err := s.store.ListAgents(ctx, store.AgentQuery{Tenant: t.ID, After: after, Limit: size + 1})
	if err != nil {
		return nil, apierr.Store(err)
	}
	resp := &agentv1.ListAgentsResponse{}
	for i, rec := range recs {
		if i == size {
			resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(agentID(recs[i-1].ID)))
			break
		}
		resp.Agents = append(resp.Agents, s.agentProto(rec, s.inMemory(rec.ID)))
	}
	return resp, nil
}

// UpdateAgent changes a session's config, tools or skills.
func (s *Server) UpdateAgent(ctx context.Context, req *agentv1.UpdateAgentRequest) (*agentv1.UpdateAgentResponse, error) {
	a := req.GetAgent()
	if a == nil {
		return nil, apierr.InvalidField("agent", "required, with agent.id naming the agent")
	}
	sess, err := s.agent(ctx, a.GetId())
	if err != nil {
		return nil, err
	}
	defer s.agents.Unpin(sess)
	c, err := s.catalog()
	if err != nil {
		return nil, err
	}
	u, err := apireq.ApplyMask(sess.engine.Config(), a, req.GetUpdateMask().GetPaths())
	if err != nil {
		return nil, err
	}
	next, setTools, setSkills, setAgentTools, setBudget := u.Config, u.Tools, u.Skills, u.AgentTools, u.Budget
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.profiles.CheckRunnable(next, t.ID); err != nil {
		return nil, apierr.FieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	// Check the selections before anything changes.
	if setTools {
		if _, err := selectTools(c, a.GetTools(), "agent.tools"); err != nil {
			return nil, err
		}
	}
	if setSkills {
		if _, err := selectSkills(c, a.GetSkills(), "agent.skills"); err != nil {
			return nil, err
		}
	}
	var agentSet *tool.Set
	if setAgentTools {
		if agentSet, err = s.agentTools(a.GetAgentTools(), "agent.agent_tools"); err != nil {
			return nil, err
		}
	}
	if setBudget {
		if err := apireq.CheckBudget(a.GetBudget(), "agent.budget"); err != nil {
			return nil, err
		}
	}
	if err := sess.engine.SetConfig(next); err != nil {
		return nil, apierr.FieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	keys := secret.Values(next)
	sess.mu.Lock()
	old := sess.keys
	sess.keys = keys
	if setTools {
		sess.tools = a.GetTools()
	}
	if setSkills {
		sess.skills = a.GetSkills()
	}
	if setAgentTools {
		sess.agentTools, sess.agentSet = a.GetAgentTools(), agentSet
	}
	if setBudget {
		sess.budget = a.GetBudget()
	}
	sess.applied = nil // the next send resolves tools and skills again
	var missing []string
	for _, p := range sess.missing {
		if secret.Value(next, p) == "" {
			missing = append(missing, p) // still not given again
		}
	}
	sess.missing = missing
	rec := storedAgent(sess.id, sess.tenant, next, sess.selectionsLocked(), missing)
	sess.mu.Unlock()
	s.secrets.Add(keys...)
	s.secrets.Remove(old...)
	v, err := s.store.UpdateAgent(ctx, rec)
	if err != nil {
		sess.stale() // memory is ahead of the store: reload when idle
		return nil, apierr.Store(err)
	}
	sess.wrote(v)
	if err := sess.refresh(c); err != nil {
		return nil, err
	}
	got, err := s.store.GetAgent(ctx, sess.id)
	if err != nil {
		return nil, apierr.Store(err)
	}
	return &agentv1.UpdateAgentResponse{Agent: s.agentProto(got, sess)}, nil
}

// DeleteAgent stops any run, here or on another replica, kills its tool
// processes and deletes the agent with its history, runs and events.
func (s *Server) DeleteAgent(ctx context.Context, req *agentv1.DeleteAgentRequest) (*agentv1.DeleteAgentResponse, error) {
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	stopped := false
	sess := s.inMemory(rec.ID)
	if sess != nil {
		if stopped, err = sess.engine.Close(ctx); err != nil {
			return nil, err
		}
	}
	if !stopped && rec.RunID != "" { // running on another replica
		if err := s.stopRemote(ctx, rec.RunID, replica.CauseStopped); err != nil {
			return nil, err
		}
		stopped = true
	}
	if err := s.store.DeleteAgent(ctx, rec.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, apierr.Store(err)
	}
	// The registry's copy goes with its keys, once: the session closed
	// above, one loaded again meanwhile, or the keys kept of it when it was
	// dropped from memory while it closed (remove forgets those).
	if late, ok := s.agents.Remove(rec.ID); ok {
		if late != sess {
			late.Close(ctx)
		}
		s.secrets.Remove(late.Keys()...)
	}
	_ = s.store.Notify(ctx, store.Notice{Kind: store.NoticeAgent, AgentID: rec.ID})
	return &agentv1.DeleteAgentResponse{StoppedRun: stopped}, nil
}

// checkAgentLimits fails a new agent beyond the server's limit or its
// tenant's (the agents in the store, over every replica).
func (s *Server) checkAgentLimits(ctx context.Context, t *auth.Tenant) error {
	if s.agents.ShuttingDown() {
		return apierr.Failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down")
	}
	if max := s.cfg.Limits.MaxSessions; max > 0 {
		n, err := s.store.CountAgents(ctx)
		if err != nil {
			return apierr.Store(err)
		}
		if n >= max {
			return apierr.LimitFailure(agentv1.ErrorReason_ERROR_REASON_SESSION_LIMIT, "server", "the server holds %d agents, its limit (-max-sessions); delete some first", n)
		}
	}
	if max := t.MaxAgents; max > 0 {
		recs, err := s.store.ListAgents(ctx, store.AgentQuery{Tenant: t.ID, Limit: max})
		if err != nil {
			return apierr.Store(err)
		}
		if len(recs) >= max {
			return apierr.LimitFailure(agentv1.ErrorReason_ERROR_REASON_SESSION_LIMIT, "tenant", "this tenant holds %d agents, its limit (limits.agents); delete some first", len(recs))
		}
	}
	return nil
}

// checkHistorySize enforces the history limit on a history of n messages.
func (s *Server) checkHistorySize(n int, field string) error {
	if max := s.cfg.Limits.MaxHistory; max > 0 && n > max {
		return apierr.Failure(codes.ResourceExhausted, agentv1.ErrorReason_ERROR_REASON_HISTORY_LIMIT,
			"%s holds %d messages, more than the server's limit of %d (-max-history)", field, n, max)
	}
	return nil
}

// agentProto is the public view of a stored agent (with what this replica
// knows of it, sess when loaded here): no secret in it.
// isAPIKeyPath reports whether a secret's path is an API key's (the main
// model's, the compaction model's or a fallback's), not a header's.
func isAPIKeyPath(path string) bool { return strings.HasSuffix(path, ".api_key") }

func (s *Server) agentProto(rec *store.Agent, sess *session) *agentv1.Agent {
	missing := rec.Secrets
	if sess != nil {
		sess.mu.Lock()
		missing = sess.missing
		sess.mu.Unlock()
	}
	a := &agentv1.Agent{
		Id: agentID(rec.ID), Config: rec.Spec.GetConfig(), State: agentv1.AgentState_AGENT_STATE_IDLE, RunId: rec.RunID,
		HistoryLength: int32(rec.HistoryLength), Usage: rec.Usage,
		HasApiKey:      slices.ContainsFunc(rec.Secrets, isAPIKeyPath),
		ApiKeyRequired: len(missing) > 0,
		Tools:          rec.Spec.GetTools(), Skills: rec.Spec.GetSkills(), AgentTools: rec.Spec.GetAgentTools(), Budget: rec.Spec.GetBudget(),
		CreateTime: timestamppb.New(rec.Created), UpdateTime: timestamppb.New(rec.Updated),
		EffectiveModel: s.profiles.Effective(rec.Spec.GetConfig(), rec.Tenant),
	}
	if rec.RunID != "" {
		a.State = agentv1.AgentState_AGENT_STATE_RUNNING
	}
	return a
}

// selectionsLocked are the session's tools, skills, agent tools and budget
// as the client gave them, for its stored spec; sess.mu is held.
func (sess *session) selectionsLocked() *agentv1.Agent {
	return &agentv1.Agent{Tools: sess.tools, Skills: sess.skills, AgentTools: sess.agentTools, Budget: sess.budget}
}

// selections are selectionsLocked, taking sess.mu.
func (sess *session) selections() *agentv1.Agent {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.selectionsLocked()
}

// storedAgent is the store's record of a session: its config without
// secrets, its selections (tools, skills, agent tools, budget) and the
// secret fields the client gave.
func storedAgent(id, tenant string, cfg *agentv1.AgentConfig, sel *agentv1.Agent, missing []string) *store.Agent {
	paths := secret.Paths(cfg)
	for _, m := range missing {
		if !slices.Contains(paths, m) {
			paths = append(paths, m)
		}
	}
	now := time.Now()
	return &store.Agent{
		ID: id, Tenant: tenant,
		Spec:    &agentv1.Agent{Config: secret.Redact(cfg), Tools: sel.GetTools(), Skills: sel.GetSkills(), AgentTools: sel.GetAgentTools(), Budget: sel.GetBudget()},
		Secrets: paths, Created: now, Updated: now,
	}
}
