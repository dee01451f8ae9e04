package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/agent/secret"
	"github.com/agentcore/agentcore/pkg/apierr"
	"github.com/agentcore/agentcore/pkg/catalog"
	"github.com/agentcore/agentcore/pkg/store"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// session is one agent loaded on this replica and what the server keeps
// beside it. The store holds the agent; a session is its working copy.
type session struct {
	// engine is the agent's working copy in the engine (pkg/agent): its
	// config, history and usage, and its runs.
	engine *agent.Session
	// id is the agent's id in the store (storeID: the tenant's namespace);
	// tenant owns the agent: only its calls see it.
	id, tenant string

	mu sync.Mutex
	// tools and skills are the selections as the client gave them: they are
	// resolved against the catalog again after a reload.
	tools  *agentv1.ToolSelection
	skills *agentv1.SkillSelection
	// applied is the catalog the session's sets come from.
	applied *catalog.Catalog
	// keys are the secrets of its config, registered with the server's redactor.
	keys []string
	// version is the store version the session's memory matches; 0 when
	// stale (another process wrote the agent: reload when idle).
	version int64
	// missing are the secret fields the stored agent had that this process
	// does not hold (it was restored without them): sends need them again.
	missing []string
	// agentTools are the agents it may call as tools, as the client gave
	// them, and agentSet their tools; budget is the default budget of its
	// runs (nil: none).
	agentTools []*agentv1.AgentTool
	agentSet   *tool.Set
	budget     *agentv1.Budget
	// expand is the session's ExpandProfile (the tenant's, remembering its
	// last expansion); set once, before the session is shared.
	expand func(*agentv1.AgentConfig) (*agentv1.AgentConfig, error)
	// created is when the agent was created, as the store has it.
	created time.Time
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
		return nil, apierr.InvalidField("agent_id", "required")
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	key := storeID(t.ID, id)
	rec, err := s.store.GetAgent(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		s.forget(key) // deleted by another replica: loaded or dropped here
		return nil, apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_AGENT_NOT_FOUND, "no agent %q", id)
	}
	if err != nil {
		return nil, apierr.Store(err)
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
	sess, ok := s.agents.Cached(storeID(t.ID, id))
	if !ok {
		return nil, nil
	}
	v, err := s.store.AgentVersion(ctx, sess.id)
	if errors.Is(err, store.ErrNotFound) {
		s.forget(sess.id) // deleted by another replica
		return nil, apierr.Failure(codes.NotFound, agentv1.ErrorReason_ERROR_REASON_AGENT_NOT_FOUND, "no agent %q", id)
	}
	if err != nil {
		return nil, apierr.Store(err)
	}
	sess.mu.Lock()
	synced := sess.version == v
	sess.mu.Unlock()
	if synced || sess.engine.State().Running {
		return sess, nil
	}
	return nil, nil
}

// agent returns the caller's agent of that id, as a session on this
// replica: loaded from the store, or reloaded when another process changed
// the agent (unless it runs here, where its memory is the newest). The
// session is pinned for the call, which must unpin it
// (s.agents.Unpin(sess)) when done with it: until then it is not dropped
// from memory.
func (s *Server) agent(ctx context.Context, id string) (*session, error) {
	for {
		sess, pinned, err := s.lookup(ctx, id)
		if err != nil || pinned {
			return sess, err
		}
		if s.agents.Pin(sess) {
			return sess, nil
		}
		// Dropped from memory since it was found: load it again.
	}
}

// lookup finds the caller's agent of that id for agent: the session loaded
// here, or one loaded from the store and registered, then pinned.
func (s *Server) lookup(ctx context.Context, id string) (sess *session, pinned bool, err error) {
	if sess, err := s.cachedAgent(ctx, id); sess != nil || err != nil {
		return sess, false, err
	}
	rec, err := s.agentRecord(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if sess, ok := s.agents.Cached(rec.ID); ok {
		sess.mu.Lock()
		synced := sess.version == rec.Version
		sess.mu.Unlock()
		if synced || sess.engine.State().Running {
			return sess, false, nil
		}
		if err := s.reload(ctx, sess, rec); err != nil {
			return nil, false, err
		}
		return sess, false, nil
	}
	h, v, err := s.store.History(ctx, rec.ID)
	if err != nil {
		return nil, false, apierr.Store(err)
	}
	cfg, missing := rec.Spec.GetConfig(), rec.Secrets
	var keys []string
	if held := s.agents.Held(rec.ID, rec.Created); held != nil {
		cfg, missing = secret.With(cfg, held, rec.Secrets)
		keys = secret.Values(cfg)
	}
	sess = &session{id: rec.ID, tenant: rec.Tenant, version: v, tools: rec.Spec.GetTools(), skills: rec.Spec.GetSkills(),
		keys: keys, missing: missing, expand: s.profiles.Expander(rec.Tenant), created: rec.Created,
		agentTools: rec.Spec.GetAgentTools(), budget: rec.Spec.GetBudget()}
	if sess.agentSet, err = s.agentTools(sess.agentTools, "agent.agent_tools"); err != nil {
		return nil, false, apierr.Failure(codes.Internal, agentv1.ErrorReason_ERROR_REASON_AGENT_UNREADABLE, "the stored agent %q cannot be loaded: %v", id, err)
	}
	engine, err := s.newEngine(sess, agent.Options{ID: agentID(rec.ID), Config: cfg, History: h, Usage: rec.Usage})
	if err != nil {
		return nil, false, apierr.Failure(codes.Internal, agentv1.ErrorReason_ERROR_REASON_AGENT_UNREADABLE, "the stored agent %q cannot be loaded: %v", id, err)
	}
	sess.engine = engine
	if sess, err = s.agents.Add(sess); err != nil {
		return nil, false, apierr.Registry(err)
	}
	return sess, true, nil
}

// newEngine makes a session's engine: opts (id, config, history, usage,
// tools, skills) with what the server gives every session (the model
// client, the limits, the redaction of tool output, the journal).
func (s *Server) newEngine(sess *session, opts agent.Options) (*agent.Session, error) {
	opts.LLM, opts.Encoders, opts.ExpandProfile, opts.Price = s.llm, s.encoders, sess.expand, s.profiles.Price
	opts.Logger, opts.Observer = s.log.Named("agent"), s.tel
	opts.MaxToolOutput, opts.MaxToolResultBytes = s.cfg.Limits.MaxToolOutput, int(s.cfg.Limits.MaxToolResultBytes)
	opts.MaxLiveOutput, opts.LiveOutputStop = int64(s.cfg.Limits.MaxLiveOutput), s.cfg.Limits.LiveOutputStop
	opts.RedactToolOutput, opts.Journal = s.secrets.RedactHeld, &journal{srv: s, sess: sess}
	return agent.New(opts)
}

// reload brings an idle session up to the store's version, keeping the
// secrets this process holds for the fields the store still lists.
func (s *Server) reload(ctx context.Context, sess *session, rec *store.Agent) error {
	h, v, err := s.store.History(ctx, sess.id)
	if err != nil {
		return apierr.Store(err)
	}
	cfg, missing := secret.With(rec.Spec.GetConfig(), sess.engine.Config(), rec.Secrets)
	if err := sess.engine.Load(agent.Snapshot{History: h, Usage: rec.Usage}); err != nil {
		return nil // a run started meanwhile: its memory is the newest
	}
	if err := sess.engine.SetConfig(cfg); err != nil {
		return apierr.Failure(codes.Internal, agentv1.ErrorReason_ERROR_REASON_AGENT_UNREADABLE, "the stored config of agent %q is invalid: %v", agentID(sess.id), err)
	}
	keys := secret.Values(cfg)
	sess.mu.Lock()
	old := sess.keys
	sess.keys, sess.missing, sess.version = keys, missing, v
	sess.tools, sess.skills, sess.applied = rec.Spec.GetTools(), rec.Spec.GetSkills(), nil
	sess.agentTools, sess.budget = rec.Spec.GetAgentTools(), rec.Spec.GetBudget()
	sess.agentSet, err = s.agentTools(sess.agentTools, "agent.agent_tools")
	sess.mu.Unlock()
	if err != nil {
		return apierr.Failure(codes.Internal, agentv1.ErrorReason_ERROR_REASON_AGENT_UNREADABLE, "the stored agent tools of agent %q are invalid: %v", agentID(sess.id), err)
	}
	s.secrets.Add(keys...)
	s.secrets.Remove(old...)
	return nil
}

// refresh points the session's tools and skills at the current catalog
// when it changed since they were chosen.
func (sess *session) refresh(c *catalog.Catalog) error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.applied == c {
		return nil
	}
	tools, err := selectTools(c, sess.tools, "agent.tools")
	if err != nil {
		return apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_TOOL_GONE, "a tool this agent names is gone after a reload: %v", err)
	}
	skills, err := selectSkills(c, sess.skills, "agent.skills")
	if err != nil {
		return apierr.Failure(codes.FailedPrecondition, agentv1.ErrorReason_ERROR_REASON_SKILL_GONE, "a skill this agent names is gone after a reload: %v", err)
	}
	if sess.agentSet != nil {
		tools = tool.Merge(tools, sess.agentSet)
	}
	sess.engine.SetTools(tools)
	sess.engine.SetSkills(skills)
	sess.applied = c
	return nil
}

// wrote records that this process wrote the agent, which is now at version
// v: the session's memory matches it unless another process wrote between.
func (sess *session) wrote(v int64) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if v == sess.version+1 {
		sess.version = v
	} else {
		sess.version = 0 // stale: reload when idle
	}
}

// Keys returns the secrets of the session's config.
func (sess *session) Keys() []string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.keys
}

// stale marks the session's memory as not matching the store: it is
// reloaded when next used idle.
func (sess *session) stale() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.version = 0
}

// inMemory returns the session loaded here for the agent key, or nil.
func (s *Server) inMemory(key string) *session {
	sess, _ := s.agents.Cached(key)
	return sess
}
