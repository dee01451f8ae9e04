// Package profile holds what the server does with its model profiles
// (config.Profile, -profile and the config file's profiles): the default
// profile an agent that names no model gets, the expansion of an agent's
// config with the profiles it names (those its tenant may use, looked up
// at each use), and the binding of a server-held API key to its profile's
// endpoints (endpoints.go), so that a client can use the operator's key
// but never send it elsewhere.
package profile

import (
	"slices"
	"strings"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/webhook"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Profiles are a server's model profiles as its tenants may use them.
type Profiles struct {
	// cfg holds the profiles and the default profile's name, read at each
	// use.
	cfg *config.Config
	// tenant looks a tenant up by id (auth.Authenticator.Lookup), at each
	// use: a reload of the tokens file applies to the next send.
	tenant func(id string) (*auth.Tenant, bool)
	// webhooks are the hosts a config's webhook may name
	// (-webhook-allowed-hosts).
	webhooks *webhook.Allow
}

// New returns the profiles of cfg, for the tenants lookup finds.
func New(cfg *config.Config, lookup func(id string) (*auth.Tenant, bool)) *Profiles {
	webhooks, _ := webhook.ParseAllow(cfg.Webhooks.AllowedHosts) // a bad entry fails the start (runhooks.New)
	return &Profiles{cfg: cfg, tenant: lookup, webhooks: webhooks}
}

// An agent whose config names no profile and no base URL follows the
// server's default profile: it is looked up at each use (a send, a
// compaction, GetAgent), never written into the stored config, so that an
// agent created before the server had a model, or before its operator
// changed -default-profile, uses the model the server has now.
//
// Agents created by servers before this rule carry the default pinned as
// config.profile. A stored config naming a profile is honoured as named
// (the store cannot tell a pinned name from one a client chose), with one
// exception: the name "default" (config.DefaultProfile, the profile the
// model flags and variables fill in) on a server that has no profile of
// that name means the server's current default profile. Those pinned
// agents keep working when the operator moves from AGENTCORE_MODEL_* to a
// config file whose default profile has another name.

// profileName returns the profile a config of the tenant uses and whether
// it is the server's default followed (not named by the config): "" when
// it uses none.
func (p *Profiles) profileName(c *agentv1.AgentConfig, t *auth.Tenant) (name string, follows bool) {
	name = c.GetProfile()
	switch {
	case name == "" && c.GetBaseUrl() == "":
		d := p.defaultFor(t)
		return d, d != ""
	case name == config.DefaultProfile && p.cfg.Profiles[name] == nil:
		if d := p.defaultFor(t); d != "" {
			return d, true
		}
	}
	return name, false
}

// defaultFor returns the name of the server's default profile when there
// is one and the tenant may use it; "" otherwise.
func (p *Profiles) defaultFor(t *auth.Tenant) string {
	if d, ok := p.cfg.Profile(""); !ok || !t.AllowsProfile(d.Name) {
		return ""
	}
	return p.cfg.DefaultProfile
}

// lookup returns the tenant of id as the tokens file has it now; a tenant
// gone from it may use no profile any more.
func (p *Profiles) lookup(id string) *auth.Tenant {
	if t, ok := p.tenant(id); ok {
		return t
	}
	return &auth.Tenant{ID: id, Profiles: []string{}}
}

// Effective says which model a stored config of the tenant would use now,
// with the server's profiles as they are: the profile (named, or the
// default followed), the model, the protocol and the base URL's host
// (never a key, nor the URL's path or query). It returns nil when the
// config reaches no model or a send would refuse it (expand).
func (p *Profiles) Effective(c *agentv1.AgentConfig, tenant string) *agentv1.EffectiveModel {
	t := p.lookup(tenant)
	name, follows := p.profileName(c, t)
	exp, err := p.expand(c, t, nil) // what a send would use, or refuse
	if err != nil {
		return nil
	}
	if exp.GetBaseUrl() == "" || exp.GetModel() == "" {
		return nil
	}
	proto := exp.GetProtocol()
	if proto == agentv1.Protocol_PROTOCOL_UNSPECIFIED {
		proto = agentv1.Protocol_PROTOCOL_CHAT // llm.ResolveConfig's default
	}
	return &agentv1.EffectiveModel{Profile: name, FollowsDefault: follows, Model: exp.GetModel(),
		Protocol: proto, BaseUrlHost: Host(exp.GetBaseUrl())}
}

// Expander returns the agent.Options.ExpandProfile of a session of a
// tenant: the tenant's rights are looked up at each use, so that a reload
// of the tokens file applies to the next send. It remembers its last
// expansion: a session expands its stored config (which it never changes,
// and replaces whole) at every send, and the result is only read.
func (p *Profiles) Expander(tenant string) func(*agentv1.AgentConfig) (*agentv1.AgentConfig, error) {
	var memo atomic.Pointer[expansion]
	return func(c *agentv1.AgentConfig) (*agentv1.AgentConfig, error) {
		return p.expand(c, p.lookup(tenant), &memo)
	}
}

// expansion is a config expanded with its profiles (nil when it names
// none): given the same config and the same profiles, the result is the
// same.
type expansion struct {
	in, out    *agentv1.AgentConfig
	main, comp *config.Profile
	fallbacks  []fallbackRef
}

// expand fills in the profiles a config names (or the default it follows),
// those the tenant may use, and refuses a config that would send a profile's key elsewhere than to
// the profile's endpoints (checkKeyBinding). memo, when not nil, holds the
// last expansion, returned again for the same config and profiles.
func (p *Profiles) expand(c *agentv1.AgentConfig, t *auth.Tenant, memo *atomic.Pointer[expansion]) (*agentv1.AgentConfig, error) {
	if c == nil {
		c = &agentv1.AgentConfig{}
	}
	var vs []agent.FieldViolation
	var main, comp *config.Profile
	if name, _ := p.profileName(c, t); name != "" {
		prof, ok := p.profileFor(t, name)
		if !ok {
			vs = append(vs, agent.FieldViolation{Field: "config.profile", Description: p.unknownProfile(t, name)})
		}
		main = prof
	}
	if name := c.GetCompact().GetProfile(); name != "" {
		prof, ok := p.profileFor(t, name)
		if !ok {
			vs = append(vs, agent.FieldViolation{Field: "config.compact.profile", Description: p.unknownProfile(t, name)})
		}
		comp = prof
	}
	fallbacks, fvs := p.fallbackProfiles(c, main, t)
	vs = append(vs, fvs...)
	if len(vs) > 0 {
		return nil, &agent.ValidationError{Violations: vs}
	}
	if memo != nil {
		if m := memo.Load(); m != nil && m.in == c && m.main == main && m.comp == comp && slices.Equal(m.fallbacks, fallbacks) {
			return m.out, nil
		}
	}
	vs = checkKeyBinding(c, main, comp)
	vs = append(vs, checkFallbackKeys(c, main, fallbacks)...)
	if u := c.GetWebhook().GetUrl(); u != "" {
		if err := p.webhooks.Check(u); err != nil {
			vs = append(vs, agent.FieldViolation{Field: "config.webhook.url", Description: err.Error()})
		}
	}
	if len(vs) > 0 {
		return nil, &agent.ValidationError{Violations: vs}
	}
	out := c
	if main != nil {
		out = agent.MergeConfig(main.AgentConfig(), c)
	}
	if comp != nil {
		out = proto.Clone(out).(*agentv1.AgentConfig)
		out.Compact = mergeCompact(comp, out.GetCompact())
	}
	if len(out.GetFallback().GetModels()) > 0 {
		out = proto.Clone(out).(*agentv1.AgentConfig)
		out.Fallback.Models = expandFallbacks(out.Fallback.Models, fallbacks)
		if len(out.Fallback.Models) == 0 { // every one the profile gave is closed to the tenant
			out.Fallback = nil
		}
	}
	if memo != nil {
		memo.Store(&expansion{in: c, out: out, main: main, comp: comp, fallbacks: fallbacks})
	}
	return out, nil
}

// profileFor returns the named profile when the tenant may use it.
func (p *Profiles) profileFor(t *auth.Tenant, name string) (*config.Profile, bool) {
	prof, ok := p.cfg.Profiles[name]
	if !ok || !t.AllowsProfile(name) {
		return nil, false
	}
	return prof, true
}

// unknownProfile says that a profile is not there, listing those the
// tenant may use (the same words for a profile it may not use: no leak).
func (p *Profiles) unknownProfile(t *auth.Tenant, name string) string {
	var names []string
	for _, n := range p.cfg.ProfileNames() {
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

// CheckRunnable refuses a config of the tenant that can never reach a
// model: one that, with its profile (or the server's default) filled in,
// has a base URL and no model, or a model and neither a base URL nor a
// profile (a config naming neither may still get both from a send's
// override, and fails that send for want of a model). Bad fields are an
// *agent.ValidationError, named as in an agent's config ("config.model").
func (p *Profiles) CheckRunnable(c *agentv1.AgentConfig, tenant string) error {
	exp, err := p.Expander(tenant)(c)
	if err != nil {
		return err
	}
	where := "the config"
	if name, follows := p.profileName(c, p.lookup(tenant)); follows {
		where = "the config and the server's default profile " + name
	} else if name != "" {
		where = "the config and its profile " + name
	}
	switch {
	case exp.GetBaseUrl() != "" && exp.GetModel() == "":
		return &agent.ValidationError{Violations: []agent.FieldViolation{{Field: "config.model",
			Description: "required: " + where + " give a base URL (" + Host(exp.GetBaseUrl()) + ") but no model; set agent.config.model"}}}
	case exp.GetBaseUrl() == "" && exp.GetModel() != "" && exp.GetProfile() == "":
		return &agent.ValidationError{Violations: []agent.FieldViolation{{Field: "config.base_url",
			Description: "required: the config names a model (" + exp.GetModel() + ") but no base URL and no profile, and the server has no default model; set agent.config.base_url or agent.config.profile"}}}
	}
	return nil
}

// Price is the sessions' agent.Options.Price: the server's prices by
// profile and model.
func (p *Profiles) Price(profile, model string) (agent.Price, bool) {
	prof, ok := p.cfg.Profile(profile)
	if !ok {
		return agent.Price{}, false
	}
	pr, ok := prof.Price(model)
	return agent.Price{Input: pr.Input, Output: pr.Output}, ok
}
