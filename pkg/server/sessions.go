package server

import (
	"context"
	"encoding/base64"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// List paging.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// session is one agent and what the server keeps beside it.
type session struct {
	s *agent.Session
	// tenant owns the agent: only its calls see it.
	tenant string

	mu sync.Mutex
	// tools and skills are the selections as the client gave them: they are
	// resolved against the catalog again after a reload.
	tools  *agentv1.ToolSelection
	skills *agentv1.SkillSelection
	// applied is the catalog the session's sets come from.
	applied *catalog
	// keys are the secrets of its config, registered with the server's redactor.
	keys []string
}

// agentKey names a session: each tenant has its own agent ids, so that one
// tenant cannot learn that another's id exists.
type agentKey struct{ tenant, id string }

// registry holds the sessions by tenant and id and counts agents and
// running sends, in all and per tenant.
type registry struct {
	mu      sync.RWMutex
	m       map[agentKey]*session
	agents  map[string]int // per tenant
	running int
	runs    map[string]int // per tenant
	closing bool
}

func (r *registry) init() {
	r.m = map[agentKey]*session{}
	r.agents = map[string]int{}
	r.runs = map[string]int{}
}

// get returns the tenant's agent of that id; another tenant's is NOT_FOUND.
func (r *registry) get(t *auth.Tenant, id string) (*session, error) {
	if id == "" {
		return nil, invalidField("agent_id", "required")
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.m[agentKey{t.ID, id}]
	if !ok {
		return nil, failure(codes.NotFound, ReasonNotFound, "no agent %q", id)
	}
	return e, nil
}

// startRun counts a send of the tenant against the server's limit and the
// tenant's; done undoes it.
func (r *registry) startRun(limit int, t *auth.Tenant) (done func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, failure(codes.Unavailable, ReasonShuttingDown, "the server is shutting down")
	}
	if limit > 0 && r.running >= limit {
		return nil, limitFailure(ReasonRunLimit, "server", "%d sends are running, the server's limit (-max-runs); retry later", r.running)
	}
	if n := r.runs[t.ID]; t.MaxConcurrentRuns > 0 && n >= t.MaxConcurrentRuns {
		return nil, limitFailure(ReasonRunLimit, "tenant", "%d sends of this tenant are running, its limit (limits.concurrent_runs); retry later", n)
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

// add registers a new session under the server's and the tenant's limits.
func (r *registry) add(e *session, limit int, t *auth.Tenant) error {
	k := agentKey{t.ID, e.s.ID()}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closing:
		return failure(codes.Unavailable, ReasonShuttingDown, "the server is shutting down")
	case r.m[k] != nil:
		return failure(codes.AlreadyExists, ReasonExists, "agent %q exists", k.id)
	case limit > 0 && len(r.m) >= limit:
		return limitFailure(ReasonSessionLimit, "server", "the server holds %d agents, its limit (-max-sessions); delete some first", len(r.m))
	case t.MaxAgents > 0 && r.agents[t.ID] >= t.MaxAgents:
		return limitFailure(ReasonSessionLimit, "tenant", "this tenant holds %d agents, its limit (limits.agents); delete some first", r.agents[t.ID])
	}
	r.m[k] = e
	r.agents[t.ID]++
	return nil
}

// remove forgets the session if it is still registered; it reports whether it was.
func (r *registry) remove(e *session) bool {
	k := agentKey{e.tenant, e.s.ID()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[k] != e {
		return false
	}
	delete(r.m, k)
	if r.agents[e.tenant]--; r.agents[e.tenant] <= 0 {
		delete(r.agents, e.tenant)
	}
	return true
}

// of returns the tenant's sessions.
func (r *registry) of(tenant string) []*session {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*session, 0, r.agents[tenant])
	for k, e := range r.m {
		if k.tenant == tenant {
			out = append(out, e)
		}
	}
	return out
}

// count returns how many sessions there are.
func (r *registry) count() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
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
	r.m = map[agentKey]*session{}
	r.agents = map[string]int{}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), afterStop)
	defer cancel()
	for _, e := range all {
		_, _ = e.s.Close(ctx)
	}
}

func (r *registry) shuttingDown() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.closing
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

// withDefaultProfile names the server's default profile in a config that
// names no profile and no base URL, so that such an agent uses the server's
// model, when the tenant may use it.
func (s *Server) withDefaultProfile(c *agentv1.AgentConfig, t *auth.Tenant) *agentv1.AgentConfig {
	if c.GetProfile() != "" || c.GetBaseUrl() != "" {
		return c
	}
	if p, ok := s.cfg.Profile(""); !ok || !t.AllowsProfile(p.Name) {
		return c
	}
	if c == nil {
		c = &agentv1.AgentConfig{}
	} else {
		c = proto.Clone(c).(*agentv1.AgentConfig)
	}
	name := s.cfg.DefaultProfile
	c.Profile = &name
	return c
}

// expander returns the ExpandProfile of the sessions of a tenant: the
// tenant's rights are looked up at each use, so that a reload of the
// tokens file applies to the next send.
func (s *Server) expander(tenant string) func(*agentv1.AgentConfig) (*agentv1.AgentConfig, error) {
	return func(c *agentv1.AgentConfig) (*agentv1.AgentConfig, error) {
		t, ok := s.auth.Lookup(tenant)
		if !ok { // the tenant is gone from the tokens file: no profile is its any more
			t = &auth.Tenant{ID: tenant, Profiles: []string{}}
		}
		return s.expandProfile(c, t)
	}
}

// expandProfile fills in the profiles a config names, those the tenant may
// use, and refuses a config that would send a profile's key elsewhere than
// to the profile's endpoints (checkKeyBinding).
func (s *Server) expandProfile(c *agentv1.AgentConfig, t *auth.Tenant) (*agentv1.AgentConfig, error) {
	var vs []agent.FieldViolation
	out := c
	var main, comp *config.Profile
	if name := c.GetProfile(); name != "" {
		p, ok := s.profileFor(t, name)
		if !ok {
			vs = append(vs, agent.FieldViolation{Field: "config.profile", Description: s.unknownProfile(t, name)})
		} else {
			main = p
			out = agent.MergeConfig(p.AgentConfig(), c)
		}
	}
	if name := c.GetCompact().GetProfile(); name != "" {
		p, ok := s.profileFor(t, name)
		if !ok {
			vs = append(vs, agent.FieldViolation{Field: "config.compact.profile", Description: s.unknownProfile(t, name)})
		} else {
			comp = p
			out = proto.Clone(out).(*agentv1.AgentConfig)
			out.Compact = mergeCompact(p, out.GetCompact())
		}
	}
	if len(vs) == 0 {
		vs = checkKeyBinding(c, main, comp)
	}
	if len(vs) > 0 {
		return nil, &agent.ValidationError{Violations: vs}
	}
	return out, nil
}

// profileFor returns the named profile when the tenant may use it.
func (s *Server) profileFor(t *auth.Tenant, name string) (*config.Profile, bool) {
	p, ok := s.cfg.Profiles[name]
	if !ok || !t.AllowsProfile(name) {
		return nil, false
	}
	return p, true
}

// unknownProfile says that a profile is not there, listing those the
// tenant may use (the same words for a profile it may not use: no leak).
func (s *Server) unknownProfile(t *auth.Tenant, name string) string {
	var names []string
	for _, n := range s.cfg.ProfileNames() {
		if t.AllowsProfile(n) {
			names = append(names, n)
		}
	}
	return "no profile " + strings.TrimSpace(name) + " on this server (it has " + strings.Join(names, ", ") + ")"
}

// mergeCompact puts a profile under a compaction config's own fields.
func mergeCompact(p *config.Profile, c *agentv1.CompactConfig) *agentv1.CompactConfig {
	base := &agentv1.CompactConfig{}
	pc := p.AgentConfig()
	base.BaseUrl, base.ApiKey, base.Model, base.Protocol = pc.BaseUrl, pc.ApiKey, pc.Model, pc.Protocol
	base.Provider = pc.GetProvider()
	own := proto.Clone(c).(*agentv1.CompactConfig)
	if own.BaseUrl != nil {
		base.BaseUrl = own.BaseUrl
	}
	if own.ApiKey != nil {
		base.ApiKey = own.ApiKey
	}
	if own.Model != nil {
		base.Model = own.Model
	}
	if own.Protocol != agentv1.Protocol_PROTOCOL_UNSPECIFIED {
		base.Protocol = own.Protocol
	}
	if own.Provider != nil {
		base.Provider = own.Provider
	}
	return base
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
		return failure(codes.FailedPrecondition, "TOOL_GONE", "a tool this agent names is gone after a reload: %v", err)
	}
	skills, err := selectSkills(c, e.skills, "agent.skills")
	if err != nil {
		return failure(codes.FailedPrecondition, "SKILL_GONE", "a skill this agent names is gone after a reload: %v", err)
	}
	e.s.SetTools(tools)
	e.s.SetSkills(skills)
	e.applied = c
	return nil
}

// CreateAgent creates a session owned by the caller's tenant.
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
	cfg := s.withDefaultProfile(a.GetConfig(), t)
	sess, err := agent.New(agent.Options{
		ID: id, Config: cfg, History: req.GetHistory(), Tools: tools, Skills: skills,
		LLM: s.llm, Encoders: s.encoders, ExpandProfile: s.expander(t.ID), Logger: s.log.Named("agent"), Observer: s.tel,
		MaxToolOutput: s.cfg.Limits.MaxToolOutput, MaxToolResultBytes: int(s.cfg.Limits.MaxToolResultBytes),
	})
	if err != nil {
		return nil, fieldsUnder(err, "", map[string]string{"config": "agent.config"})
	}
	if err := s.checkRunnable(cfg, s.expander(t.ID)); err != nil {
		return nil, err
	}
	e := &session{s: sess, tenant: t.ID, tools: a.GetTools(), skills: a.GetSkills(), applied: c, keys: configKeys(a.GetConfig())}
	if err := s.agents.add(e, s.cfg.Limits.MaxSessions, t); err != nil {
		return nil, err
	}
	s.secrets.add(e.keys...)
	return &agentv1.CreateAgentResponse{Agent: s.agentProto(e)}, nil
}

// agentProto is the public view of a session: no secret in it.
func (s *Server) agentProto(e *session) *agentv1.Agent {
	st := e.s.State()
	e.mu.Lock()
	tools, skills := e.tools, e.skills
	e.mu.Unlock()
	a := &agentv1.Agent{
		Id: st.ID, Config: st.Config, State: agentv1.AgentState_AGENT_STATE_IDLE, RunId: st.RunID,
		HistoryLength: int32(st.HistoryLength), Usage: st.Usage, HasApiKey: st.HasAPIKey,
		Tools: tools, Skills: skills,
		CreateTime: timestamppb.New(st.Created), UpdateTime: timestamppb.New(st.Updated),
	}
	if st.Running {
		a.State = agentv1.AgentState_AGENT_STATE_RUNNING
	}
	return a
}

// GetAgent returns one session.
func (s *Server) GetAgent(ctx context.Context, req *agentv1.GetAgentRequest) (*agentv1.GetAgentResponse, error) {
	e, err := s.agent(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	return &agentv1.GetAgentResponse{Agent: s.agentProto(e)}, nil
}

// ListAgents pages through the caller's sessions ordered by id.
func (s *Server) ListAgents(ctx context.Context, req *agentv1.ListAgentsRequest) (*agentv1.ListAgentsResponse, error) {
	t, err := s.tenant(ctx)
	if err != nil {
		return nil, err
	}
	size := int(req.GetPageSize())
	switch {
	case size < 0:
		return nil, invalidField("page_size", "must not be negative")
	case size == 0:
		size = defaultPageSize
	case size > maxPageSize:
		size = maxPageSize
	}
	after := ""
	if tok := req.GetPageToken(); tok != "" {
		b, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return nil, invalidField("page_token", "not a token this server gave")
		}
		after = string(b)
	}
	all := s.agents.of(t.ID)
	sort.Slice(all, func(i, j int) bool { return all[i].s.ID() < all[j].s.ID() })
	i := sort.Search(len(all), func(i int) bool { return all[i].s.ID() > after })
	resp := &agentv1.ListAgentsResponse{}
	for ; i < len(all) && len(resp.Agents) < size; i++ {
		resp.Agents = append(resp.Agents, s.agentProto(all[i]))
	}
	if i < len(all) && len(resp.Agents) > 0 {
		resp.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(resp.Agents[len(resp.Agents)-1].GetId()))
	}
	return resp, nil
}

// DeleteAgent stops any run, kills its tool processes and forgets the session.
func (s *Server) DeleteAgent(ctx context.Context, req *agentv1.DeleteAgentRequest) (*agentv1.DeleteAgentResponse, error) {
	e, err := s.agent(ctx, req.GetAgentId())
	if err != nil {
		return nil, err
	}
	s.agents.remove(e)
	stopped, err := e.s.Close(ctx)
	s.secrets.remove(e.keys...)
	if err != nil {
		return nil, err
	}
	return &agentv1.DeleteAgentResponse{StoppedRun: stopped}, nil
}

// checkRunnable refuses a config that can never reach a model: one that,
// with its profile filled in, has a base URL and no model, or a model and
// neither a base URL nor a profile (a config naming neither may still get
// both from a send's override, and fails that send with NO_MODEL).
func (s *Server) checkRunnable(c *agentv1.AgentConfig, expand func(*agentv1.AgentConfig) (*agentv1.AgentConfig, error)) error {
	exp := c
	if c.GetProfile() != "" || c.GetCompact().GetProfile() != "" {
		e, err := expand(c)
		if err != nil {
			return fieldsUnder(err, "", map[string]string{"config": "agent.config"})
		}
		exp = e
	}
	where := "the config"
	if name := c.GetProfile(); name != "" {
		where = "the config and its profile " + name
	}
	switch {
	case exp.GetBaseUrl() != "" && exp.GetModel() == "":
		return invalidField("agent.config.model", "required: %s give a base URL (%s) but no model; set agent.config.model", where, hostOf(exp.GetBaseUrl()))
	case exp.GetBaseUrl() == "" && exp.GetModel() != "" && exp.GetProfile() == "":
		return invalidField("agent.config.base_url", "required: the config names a model (%s) but no base URL and no profile, and the server has no default model; set agent.config.base_url or agent.config.profile", exp.GetModel())
	}
	return nil
}

// hostOf returns the host of a URL (never its path, which may hold a key).
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "an unparsable URL"
}

// checkHistorySize enforces the history limit on a history of n messages.
func (s *Server) checkHistorySize(n int, field string) error {
	if max := s.cfg.Limits.MaxHistory; max > 0 && n > max {
		return failure(codes.ResourceExhausted, ReasonHistoryLimit,
			"%s holds %d messages, more than the server's limit of %d (-max-history)", field, n, max)
	}
	return nil
}
