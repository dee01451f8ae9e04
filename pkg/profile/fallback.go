package profile

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/config"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// A config's fallback models are its own list (config.fallback.models)
// or, when it gives none, its main profile's (the config file's fallbacks,
// or the profile's defaults.fallback). A fallback naming a profile gets
// that profile's endpoint, key, model, protocol and provider options under
// its own fields. A profile the tenant may not use is refused when the
// client listed it, and left out when the main profile did: the operator's
// list offers each tenant the fallbacks it may use.

// fallbackRef is the profile one fallback model names, if any; skip says
// the model is left out (a profile's fallback the tenant may not use).
type fallbackRef struct {
	prof *config.Profile
	skip bool
}

// fallbackModels returns the fallback list a config uses: its own, else its
// main profile's (own says which).
func fallbackModels(c *agentv1.AgentConfig, main *config.Profile) (models []*agentv1.FallbackModel, own bool) {
	if ms := c.GetFallback().GetModels(); len(ms) > 0 {
		return ms, true
	}
	if main == nil {
		return nil, false
	}
	if f := main.Fallback; f != nil {
		return f.GetModels(), false
	}
	return main.Defaults.GetFallback().GetModels(), false
}

// fallbackProfiles looks up the profiles the config's fallback models name.
func (p *Profiles) fallbackProfiles(c *agentv1.AgentConfig, main *config.Profile, t *auth.Tenant) ([]fallbackRef, []agent.FieldViolation) {
	models, own := fallbackModels(c, main)
	if len(models) == 0 {
		return nil, nil
	}
	var vs []agent.FieldViolation
	refs := make([]fallbackRef, len(models))
	for i, m := range models {
		name := m.GetProfile()
		if name == "" {
			continue
		}
		prof, ok := p.profileFor(t, name)
		switch {
		case ok:
			refs[i].prof = prof
		case own:
			vs = append(vs, agent.FieldViolation{Field: fmt.Sprintf("config.fallback.models[%d].profile", i), Description: p.unknownProfile(t, name)})
		default:
			refs[i].skip = true
		}
	}
	return refs, vs
}

// checkFallbackKeys finds where the config's fallback models would send a
// server-held key elsewhere than to its profile's endpoints: a fallback
// naming a profile with a key, at a base URL or with credential headers of
// the client's; or one on the main endpoint (naming neither a profile nor
// a base URL) with credential headers, when the main model uses a
// profile's key.
func checkFallbackKeys(c *agentv1.AgentConfig, main *config.Profile, refs []fallbackRef) []agent.FieldViolation {
	models, _ := fallbackModels(c, main)
	var mainKey *config.Profile
	if c.ApiKey == nil && main != nil && main.APIKey != "" {
		mainKey = main
	}
	var vs []agent.FieldViolation
	for i, m := range models {
		ref := refs[i]
		if ref.skip {
			continue
		}
		field := fmt.Sprintf("config.fallback.models[%d]", i)
		var key *config.Profile
		var ep endpoint
		switch {
		case m.ApiKey != nil:
		case ref.prof != nil:
			if ref.prof.APIKey != "" {
				key = ref.prof
			}
		case m.BaseUrl == nil:
			key = mainKey // the main endpoint, which checkKeyBinding checked
		}
		switch {
		case m.BaseUrl != nil:
			ep = endpoint{url: m.GetBaseUrl(), field: field + ".base_url"}
		case ref.prof != nil:
			ep = endpoint{url: profileURL(ref.prof), from: ref.prof}
		}
		var h headers
		if m.Provider != nil {
			h = headers{m: m.GetProvider().GetHeaders(), field: field + ".provider.headers"}
		}
		vs = append(vs, checkCall(key, ep, h, field+".profile")...)
	}
	return vs
}

// expandFallbacks returns the fallback models with the profiles they name
// filled in, those left out dropped.
func expandFallbacks(models []*agentv1.FallbackModel, refs []fallbackRef) []*agentv1.FallbackModel {
	out := make([]*agentv1.FallbackModel, 0, len(models))
	for i, m := range models {
		switch {
		case refs[i].skip:
		case refs[i].prof != nil:
			out = append(out, mergeFallback(refs[i].prof, m))
		default:
			out = append(out, m)
		}
	}
	return out
}

// mergeFallback puts a profile under a fallback model's own fields, as
// mergeCompact does for the compaction model (the two have the same
// fields).
func mergeFallback(p *config.Profile, m *agentv1.FallbackModel) *agentv1.FallbackModel {
	c := mergeCompact(p, &agentv1.CompactConfig{BaseUrl: m.BaseUrl, ApiKey: m.ApiKey, Model: m.Model, Protocol: m.Protocol, Provider: m.Provider})
	return &agentv1.FallbackModel{Profile: proto.String(p.Name), BaseUrl: c.BaseUrl, ApiKey: c.ApiKey, Model: c.Model,
		Protocol: c.Protocol, Provider: c.Provider}
}
