package profile

import (
	"net/url"
	"strings"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/internal/urlscope"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// credentialHeaders are the request headers that carry an API key in one
// of the model protocols (lower case).
var credentialHeaders = []string{"authorization", "x-api-key", "x-goog-api-key", "api-key"}

// A server-held key (a profile's api_key_env or api_key_file) is sent only
// to its profile's endpoints: the profile's base_url and its
// allowed_base_urls. checkKeyBinding finds where a client's config would
// send one elsewhere: to a base URL it chose (config.base_url,
// config.compact.base_url), to another profile's endpoint (a compaction
// profile without a key of its own inherits the main one), or with
// credential headers of its own. A client that gives its own api_key in the
// same config may send it anywhere.

// endpoint is where one model call goes and who chose it.
type endpoint struct {
	url string
	// field is the config field a client set it with; "" when a profile gave it.
	field string
	// from is the profile that gave it (field == "").
	from *config.Profile
}

// headers are one model call's extra headers and who chose them.
type headers struct {
	m     map[string]string
	field string // "" when a profile gave them
}

// checkKeyBinding checks the config a client gave (profiles not yet
// expanded) against the profiles it names: main (config.profile) and comp
// (config.compact.profile), either nil.
func checkKeyBinding(c *agentv1.AgentConfig, main, comp *config.Profile) []agent.FieldViolation {
	var vs []agent.FieldViolation
	// The main model.
	var mainKey *config.Profile // the profile whose key the main model uses, if any
	if c.ApiKey == nil && main != nil && main.APIKey != "" {
		mainKey = main
	}
	mainURL := endpoint{}
	switch {
	case c.BaseUrl != nil:
		mainURL = endpoint{url: c.GetBaseUrl(), field: "config.base_url"}
	case main != nil:
		mainURL = endpoint{url: profileURL(main), from: main}
	}
	mainHeaders := headers{}
	if c.Provider != nil {
		mainHeaders = headers{m: c.GetProvider().GetHeaders(), field: "config.provider.headers"}
	}
	vs = append(vs, checkCall(mainKey, mainURL, mainHeaders, "config.profile")...)

	// The compaction model: its own fields, else its profile's, else the main model's.
	cc := c.GetCompact()
	if cc == nil {
		return vs
	}
	compKey := mainKey
	switch {
	case cc.ApiKey != nil:
		compKey = nil
	case comp != nil && comp.APIKey != "":
		compKey = comp
	case c.ApiKey != nil:
		compKey = nil
	}
	compURL := mainURL
	switch {
	case cc.BaseUrl != nil:
		compURL = endpoint{url: cc.GetBaseUrl(), field: "config.compact.base_url"}
	case comp != nil && profileURL(comp) != "":
		compURL = endpoint{url: profileURL(comp), from: comp}
	}
	compHeaders := mainHeaders
	switch {
	case cc.Provider != nil:
		compHeaders = headers{m: cc.GetProvider().GetHeaders(), field: "config.compact.provider.headers"}
	case comp != nil && comp.Defaults.GetProvider() != nil:
		compHeaders = headers{}
	}
	for _, v := range checkCall(compKey, compURL, compHeaders, "config.compact.profile") {
		if !containsViolation(vs, v.Field) {
			vs = append(vs, v)
		}
	}
	return vs
}

// checkCall checks one model call that uses key's key (nil: no server-held
// key). profileField names the field to blame when a profile's endpoint
// would get another profile's key.
func checkCall(key *config.Profile, ep endpoint, h headers, profileField string) []agent.FieldViolation {
	if key == nil {
		return nil
	}
	var vs []agent.FieldViolation
	switch {
	case ep.url == "", ep.from == key:
	case ep.field != "" && !allowedFor(key, ep.url):
		vs = append(vs, agent.FieldViolation{Field: ep.field, Description: "this config uses the API key of the server's profile " +
			key.Name + ", which is sent only to that profile's base_url (or an endpoint the operator allowed in profiles." +
			key.Name + ".allowed_base_urls); give your own api_key in this config to use another endpoint"})
	case ep.field == "" && !allowedFor(key, ep.url):
		vs = append(vs, agent.FieldViolation{Field: profileField, Description: "profile " + ep.from.Name +
			" has no API key of its own and would be sent the key of profile " + key.Name +
			", which goes only to that profile's endpoints; give an api_key in this config, or name a profile with its own key"})
	}
	if h.field != "" {
		for name := range h.m {
			if isCredentialHeader(name) {
				vs = append(vs, agent.FieldViolation{Field: h.field, Description: "header " + name +
					" carries credentials, which a config using the server's API key (profile " + key.Name +
					") may not add or replace; give your own api_key in this config to send your own credentials"})
			}
		}
	}
	return vs
}

func containsViolation(vs []agent.FieldViolation, field string) bool {
	for _, v := range vs {
		if v.Field == field {
			return true
		}
	}
	return false
}

func isCredentialHeader(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, h := range credentialHeaders {
		if name == h {
			return true
		}
	}
	return false
}

// profileURL is the base URL a profile's config gives.
func profileURL(p *config.Profile) string {
	if p.BaseURL != "" {
		return p.BaseURL
	}
	return p.Defaults.GetBaseUrl()
}

// allowedFor reports whether u is one of the profile's endpoints.
func allowedFor(p *config.Profile, u string) bool {
	if base := profileURL(p); base != "" && urlscope.Within(u, base) {
		return true
	}
	for _, a := range p.AllowedBaseURLs {
		if urlscope.Within(u, a) {
			return true
		}
	}
	return false
}

// Host returns the host of a URL (never its path, which may hold a key).
func Host(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "an unparsable URL"
}
