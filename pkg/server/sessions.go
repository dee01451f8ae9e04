package server

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// List paging.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// session is one agent loaded on this replica and what the server keeps
// beside it. The store holds the agent; a session is its working copy.
type session struct {
	s *agent.Session
	// id is the agent's id in the store (storeID: the tenant's namespace);
	// tenant owns the agent: only its calls see it.
	id, tenant string

	mu sync.Mutex
	// tools and skills are the selections as the client gave them: they are
	// resolved against the catalog again after a reload.
	tools  *agentv1.ToolSelection
	skills *agentv1.SkillSelection
	// applied is the catalog the session's sets come from.
	applied *catalog
	// keys are the secrets of its config, registered with the server's redactor.
	keys []string
	// version is the store version the session's memory matches; 0 when
	// stale (another process wrote the agent: reload when idle).
	version int64
	// missing are the secret fields the stored agent had that this process
	// does not hold (it was restored without them): sends need them again.
	missing []string
	// expand is the session's ExpandProfile (the tenant's, remembering its
	// last expansion); set once, before the session is shared.
	expand func(*agentv1.AgentConfig) (*agentv1.AgentConfig, error)
}

// storeID is an agent's id in the store: each tenant has its own agent ids,
// so that one tenant cannot learn that another's id exists. Tenant ids hold
// no '/'.
func storeID(tenant, id string) string {
	if tenant == "" {
		return id
	}
	return tenant + "/" + id
}

// agentID is the id a client knows of a stored agent.
func agentID(storeID string) string {
	return storeID[strings.LastIndexByte(storeID, '/')+1:]
}

// registry holds the sessions loaded here, by store id, and counts running
// sends, in all and per tenant.
type registry struct {
	mu      sync.RWMutex
	m       map[string]*session
	running int
	runs    map[string]int // per tenant
	closing bool
}

func (r *registry) init() {
	r.m = map[string]*session{}
	r.runs = map[string]int{}
}

// cached returns the session loaded here, if any.
func (r *registry) cached(key string) *session {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[key]
}

// forget drops a session (its agent is gone) and closes it.
func (r *registry) forget(key string) {
	r.mu.Lock()
	e := r.m[key]
	delete(r.m, key)
	r.mu.Unlock()
	if e != nil {
		ctx, cancel := context.WithTimeout(context.Background(), afterStop)
		defer cancel()
		_, _ = e.s.Close(ctx)
	}
}

// startRun counts a send of the tenant against the server's limit and the
// tenant's; done undoes it.
func (r *registry) startRun(limit int, t *auth.Tenant) (done func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down")
	}
	if limit > 0 && r.running >= limit {
		return nil, limitFailure(agentv1.ErrorReason_ERROR_REASON_RUN_LIMIT, "server", "%d sends are running, the server's limit (-max-runs); retry later", r.running)
	}
	if n := r.runs[t.ID]; t.MaxConcurrentRuns > 0 && n >= t.MaxConcurrentRuns {
		return nil, limitFailure(agentv1.ErrorReason_ERROR_REASON_RUN_LIMIT, "tenant", "%d sends of this tenant are running, its limit (limits.concurrent_runs); retry later", n)
	}
	r.running++
	r.runs[t.ID]++
	return func() {
		r.mu.Lock()
		r.running--
		if r.runs[t.ID]--; r.runs[t.ID] <= 0 {
			delete(r.runs, t.ID)
		}
		r.mu.Unlock()
	}, nil
}

func (r *registry) all() []*session {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*session, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, e)
	}
	return out
}

// stopAll marks the registry closing (new sends fail UNAVAILABLE) and stops
// every run, waiting for each until ctx ends.
func (r *registry) stopAll(ctx context.Context) {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range r.all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = e.s.Stop(ctx)
		}()
	}
	wg.Wait()
}

// closeAll closes every session and forgets it.
func (r *registry) closeAll() {
	r.mu.Lock()
	r.closing = true
	all := r.m
	r.m = map[string]*session{}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), afterStop)
	defer cancel()
	var wg sync.WaitGroup
	for _, e := range all {
		wg.Go(func() { _, _ = e.s.Close(ctx) })
	}
	wg.Wait()
}

func (r *registry) shuttingDown() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.closing
}

// agentCount counts the stored agents, for the agents gauge.
func (s *Server) agentCount() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := s.store.CountAgents(ctx)
	if err != nil {
		return 0
	}
	return float64(n)
}

// agentRecord reads an agent of the caller's tenant from the store.
func (s *Server) agentRecord(ctx context.Context, id string) (*store.Agent, error) {
	if id == "" {
		return nil, invalidField("agent_id", "required")
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	key := storeID(t.ID, id)
	rec, err := s.store.GetAgent(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		if s.agents.cached(key) != nil {
			s.agents.forget(key) // deleted by another replica
		}
		return nil, failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_AGENT_NOT_FOUND, "no agent %q", id)
	}
	if err != nil {
		return nil, storeStatus(err)
	}
	return rec, nil
}

// cachedAgent returns the caller's agent of that id when this replica holds
// it as the store has it (the same version) or runs it: the store is asked
// its version only, not the whole record. It returns neither a session nor
// an error when the agent must be loaded or reloaded (see agent).
func (s *Server) cachedAgent(ctx context.Context, id string) (*session, error) {
	if id == "" {
		return nil, nil // agentRecord says what is wrong
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	e := s.agents.cached(storeID(t.ID, id))
	if e == nil {
		return nil, nil
	}
	v, err := s.store.AgentVersion(ctx, e.id)
	if errors.Is(err, store.ErrNotFound) {
		s.agents.forget(e.id) // deleted by another replica
		return nil, failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_AGENT_NOT_FOUND, "no agent %q", id)
	}
	if err != nil {
		return nil, storeStatus(err)
	}
	e.mu.Lock()
	synced := e.version == v
	e.mu.Unlock()
	if synced || e.s.State().Running {
		return e, nil
	}
	return nil, nil
}

// agent returns the caller's agent of that id, as a session on this
// replica: loaded from the store, or reloaded when another process changed
// the agent (unless it runs here, where its memory is the newest).
func (s *Server) agent(ctx context.Context, id string) (*session, error) {
	if e, err := s.cachedAgent(ctx, id); e != nil || err != nil {
		return e, err
	}
	rec, err := s.agentRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	if e := s.agents.cached(rec.ID); e != nil {
		e.mu.Lock()
		synced := e.version == rec.Version
		e.mu.Unlock()
		if synced || e.s.State().Running {
			return e, nil
		}
		if err := s.reload(ctx, e, rec); err != nil {
			return nil, err
		}
		return e, nil
	}
	h, v, err := s.store.History(ctx, rec.ID)
	if err != nil {
		return nil, storeStatus(err)
	}
	e := &session{id: rec.ID, tenant: rec.Tenant, version: v, tools: rec.Spec.GetTools(), skills: rec.Spec.GetSkills(), missing: rec.Secrets,
		expand: s.profiles.Expander(rec.Tenant)}
	sess, err := agent.New(agent.Options{
		ID: agentID(rec.ID), Config: rec.Spec.GetConfig(), History: h, Usage: rec.Usage,
		LLM: s.llm, Encoders: s.encoders, ExpandProfile: e.expand, Logger: s.log.Named("agent"), Observer: s.tel,
		MaxToolOutput: s.cfg.Limits.MaxToolOutput, MaxToolResultBytes: int(s.cfg.Limits.MaxToolResultBytes),
		RedactToolOutput: s.secrets.RedactHeld, Journal: &journal{srv: s, e: e},
	})
	if err != nil {
		return nil, failure(codes.Internal, agentv1.ErrorReason_ERROR_REASON_AGENT_UNREADABLE, "the stored agent %q cannot be loaded: %v", id, err)
	}
	e.s = sess
	s.agents.mu.Lock()
	if other := s.agents.m[rec.ID]; other != nil {
		s.agents.mu.Unlock()
		return other, nil
	}
	if s.agents.closing {
		s.agents.mu.Unlock()
		return nil, failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down")
	}
	s.agents.m[rec.ID] = e
	s.agents.mu.Unlock()
	return e, nil
}

// reload brings an idle session up to the store's version, keeping the
// secrets this process holds for the fields the store still lists.
func (s *Server) reload(ctx context.Context, e *session, rec *store.Agent) error {
	h, v, err := s.store.History(ctx, e.id)
	if err != nil {
		return storeStatus(err)
	}
	cfg, missing := withSecrets(rec.Spec.GetConfig(), e.s.Config(), rec.Secrets)
	if err := e.s.Load(agent.Snapshot{History: h, Usage: rec.Usage}); err != nil {
		return nil // a run started meanwhile: its memory is the newest
	}
	if err := e.s.SetConfig(cfg); err != nil {
		return failure(codes.Internal, agentv1.ErrorReason_ERROR_REASON_AGENT_UNREADABLE, "the stored config of agent %q is invalid: %v", agentID(e.id), err)
	}
	keys := configKeys(cfg)
	e.mu.Lock()
	old := e.keys
	e.keys, e.missing, e.version = keys, missing, v
	e.tools, e.skills, e.applied = rec.Spec.GetTools(), rec.Spec.GetSkills(), nil
	e.mu.Unlock()
	s.secrets.Add(keys...)
	s.secrets.Remove(old...)
	return nil
}

// configKeys returns the secrets of a config: API keys and header values.
func configKeys(c *agentv1.AgentConfig) []string {
	var keys []string
	add := func(s string) {
		if s != "" {
			keys = append(keys, s)
		}
	}
	add(c.GetApiKey())
	add(c.GetCompact().GetApiKey())
	for _, v := range c.GetProvider().GetHeaders() {
		add(v)
	}
	for _, v := range c.GetCompact().GetProvider().GetHeaders() {
		add(v)
	}
	return keys
}

// selectTools resolves a tool selection against the catalog; field names
// the selection in errors. Unset means every tool.
func selectTools(c *catalog, sel *agentv1.ToolSelection, field string) (*tool.Set, error) {
	if sel == nil || sel.GetAll() {
		return c.tools, nil
	}
	for i, n := range sel.GetNames() {
		if _, ok := c.tools.Lookup(n); !ok {
			return nil, invalidField(field+".names["+strconv.Itoa(i)+"]", "no tool %q on this server (it has %s)", n, strings.Join(c.tools.Names(), ", "))
		}
	}
	return c.tools.Select(sel.GetNames()...)
}

// selectSkills resolves a skill selection. Unset means none.
func selectSkills(c *catalog, sel *agentv1.SkillSelection, field string) (*skill.Set, error) {
	if sel == nil {
		return nil, nil
	}
	if sel.GetAll() {
		return c.skills, nil
	}
	for i, n := range sel.GetNames() {
		if _, ok := c.skills.Get(n); !ok {
			return nil, invalidField(field+".names["+strconv.Itoa(i)+"]", "no skill %q on this server (it has %s)", n, strings.Join(c.skills.Names(), ", "))
		}
	}
	return c.skills.Select(sel.GetNames()...)
}

// refresh points the session's tools and skills at the current catalog
// when it changed since they were chosen.
func (e *session) refresh(c *catalog) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.applied == c {
		return nil
	}
	tools, err := selectTools(c, e.tools, "agent.tools")
	if err != nil {
		return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_TOOL_GONE, "a tool this agent names is gone after a reload: %v", err)
	}
	skills, err := selectSkills(c, e.skills, "agent.skills")
	if err != nil {
		return failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_SKILL_GONE, "a skill this agent names is gone after a reload: %v", err)
	}
	e.s.SetTools(tools)
	e.s.SetSkills(skills)
	e.applied = c
	return nil
}

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
	id := req.GetAgentId()
	if id == "" {
		id = a.GetId()
	}
	if err := s.checkHistorySize(len(req.GetHistory()), "history"); err != nil {
		return nil, err
	}
	cfg := s.profiles.WithDefault(a.GetConfig(), t)
	e := &session{tenant: t.ID, tools: a.GetTools(), skills: a.GetSkills(), applied: c, keys: configKeys(a.GetConfig()),
		expand: s.profiles.Expander(t.ID)}
	sess, err := agent.New(agent.Options{
		ID: id, Config: cfg, History: req.GetHistory(), Tools: tools, Skills: skills,
		LLM: s.llm, Encoders: s.encoders, ExpandProfile: e.expand, Logger: s.log.Named("agent"), Observer: s.tel,
		MaxToolOutput: s.cfg.Limits.MaxToolOutput, MaxToolResultBytes: int(s.cfg.Limits.MaxToolResultBytes),
		RedactToolOutput: s.secrets.RedactHeld, Journal: &journal{srv: s, e: e},
	})
	if err != nil {
		return nil, fieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	if err := s.profiles.CheckRunnable(cfg, t.ID); err != nil {
		return nil, fieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	e.s, e.id = sess, storeID(t.ID, sess.ID())
	if err := s.checkAgentLimits(ctx, t); err != nil {
		return nil, err
	}
	rec := storedAgent(e.id, e.tenant, cfg, a.GetTools(), a.GetSkills(), nil)
	if err := s.store.CreateAgent(ctx, rec, req.GetHistory()); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, failure(codes.AlreadyExists, agentv1.ErrorReason_ERROR_REASON_AGENT_EXISTS, "agent %q exists", sess.ID())
		}
		return nil, storeStatus(err)
	}
	e.version = rec.Version
	rec.HistoryLength = len(req.GetHistory()) // as GetAgent reports it
	s.agents.mu.Lock()
	old := s.agents.m[e.id] // a stale copy of an agent deleted elsewhere
	s.agents.m[e.id] = e
	s.agents.mu.Unlock()
	if old != nil {
		ctx, cancel := context.WithTimeout(context.Background(), afterStop)
		_, _ = old.s.Close(ctx)
		cancel()
	}
	s.secrets.Add(e.keys...)
	return &agentv1.CreateAgentResponse{Agent: s.agentProto(rec, e)}, nil
}

// checkAgentLimits fails a new agent beyond the server's limit or its
// tenant's (the agents in the store, over every replica).
func (s *Server) checkAgentLimits(ctx context.Context, t *auth.Tenant) error {
	if s.agents.shuttingDown() {
		return failure(codes.Unavailable, agentv1.ErrorReason_ERROR_REASON_SHUTTING_DOWN, "the server is shutting down")
	}
	if max := s.cfg.Limits.MaxSessions; max > 0 {
		n, err := s.store.CountAgents(ctx)
		if err != nil {
			return storeStatus(err)
		}
		if n >= max {
			return limitFailure(agentv1.ErrorReason_ERROR_REASON_SESSION_LIMIT, "server", "the server holds %d agents, its limit (-max-sessions); delete some first", n)
		}
	}
	if max := t.MaxAgents; max > 0 {
		recs, err := s.store.ListAgents(ctx, store.AgentQuery{Tenant: t.ID, Limit: max})
		if err != nil {
			return storeStatus(err)
		}
		if len(recs) >= max {
			return limitFailure(agentv1.ErrorReason_ERROR_REASON_SESSION_LIMIT, "tenant", "this tenant holds %d agents, its limit (limits.agents); delete some first", len(recs))
		}
	}
	return nil
}

// agentProto is the public view of a stored agent (with what this replica
// knows of it, e when loaded here): no secret in it.
func (s *Server) agentProto(rec *store.Agent, e *session) *agentv1.Agent {
	missing := rec.Secrets
	if e != nil {
		e.mu.Lock()
		missing = e.missing
		e.mu.Unlock()
	}
	a := &agentv1.Agent{
		Id: agentID(rec.ID), Config: rec.Spec.GetConfig(), State: agentv1.AgentState_AGENT_STATE_IDLE, RunId: rec.RunID,
		HistoryLength: int32(rec.HistoryLength), Usage: rec.Usage,
		HasApiKey:      contains(rec.Secrets, "config.api_key") || contains(rec.Secrets, "config.compact.api_key"),
		ApiKeyRequired: len(missing) > 0,
		Tools:          rec.Spec.GetTools(), Skills: rec.Spec.GetSkills(),
		CreateTime: timestamppb.New(rec.Created), UpdateTime: timestamppb.New(rec.Updated),
	}
	if rec.RunID != "" {
		a.State = agentv1.AgentState_AGENT_STATE_RUNNING
	}
	return a
}

// GetAgent returns one agent.
func (s *Server) GetAgent(ctx context.Context, req *agentv1.GetAgentRequest) (*agentv1.GetAgentResponse, error) {
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	return &agentv1.GetAgentResponse{Agent: s.agentProto(rec, s.agents.cached(rec.ID))}, nil
}

// pageSize checks a page size: default 100, at most 1000.
func pageSize(n int32) (int, error) {
	switch {
	case n < 0:
		return 0, invalidField("page_size", "must not be negative")
	case n == 0:
		return defaultPageSize, nil
	case n > maxPageSize:
		return maxPageSize, nil
	}
	return int(n), nil
}

// ListAgents pages through the caller's agents ordered by id.
func (s *Server) ListAgents(ctx context.Context, req *agentv1.ListAgentsRequest) (*agentv1.ListAgentsResponse, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	size, err := pageSize(req.GetPageSize())
	if err != nil {
		return nil, err
	}
	after := ""
	if tok := req.GetPageToken(); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return nil, invalidField("page_token", "not a token this server gave")
		}
		after = storeID(t.ID, string(b))
	}
	recs, err := s.store.ListAgents(ctx, store.AgentQuery{Tenant: t.ID, After: after, Limit: size + 1})
	if err != nil {
		return nil, storeStatus(err)
	}
	resp := &agentv1.ListAgentsResponse{}
	for i, rec := range recs {
		if i == size {
			resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(agentID(recs[i-1].ID)))
			break
		}
		resp.Agents = append(resp.Agents, s.agentProto(rec, s.agents.cached(rec.ID)))
	}
	return resp, nil
}

// DeleteAgent stops any run, here or on another replica, kills its tool
// processes and deletes the agent with its history, runs and events.
func (s *Server) DeleteAgent(ctx context.Context, req *agentv1.DeleteAgentRequest) (*agentv1.DeleteAgentResponse, error) {
	rec, err := s.agentRecord(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	stopped := false
	if e := s.agents.cached(rec.ID); e != nil {
		if stopped, err = e.s.Close(ctx); err != nil {
			return nil, err
		}
		e.mu.Lock()
		keys := e.keys
		e.mu.Unlock()
		s.secrets.Remove(keys...)
	}
	if !stopped && rec.RunID != "" { // running on another replica
		if err := s.stopRemote(ctx, rec.RunID, causeStopped); err != nil {
			return nil, err
		}
		stopped = true
	}
	if err := s.store.DeleteAgent(ctx, rec.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, storeStatus(err)
	}
	s.agents.mu.Lock()
	delete(s.agents.m, rec.ID)
	s.agents.mu.Unlock()
	_ = s.store.Notify(ctx, store.Notice{Kind: store.NoticeAgent, AgentID: rec.ID})
	return &agentv1.DeleteAgentResponse{StoppedRun: stopped}, nil
}

// checkHistorySize enforces the history limit on a history of n messages.
func (s *Server) checkHistorySize(n int, field string) error {
	if max := s.cfg.Limits.MaxHistory; max > 0 && n > max {
		return failure(codes.ResourceExhausted, agentv1.ErrorReason_ERROR_REASON_HISTORY_LIMIT,
			"%s holds %d messages, more than the server's limit of %d (-max-history)", field, n, max)
	}
	return nil
}
