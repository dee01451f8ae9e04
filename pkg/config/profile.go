package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Profile is a named model setting. The API key is read from the environment
// variable APIKeyEnv, or the file APIKeyFile, when the config is loaded; it
// is never in the config file. The key is a server-held key: it is sent only
// to BaseURL and to the endpoints listed in AllowedBaseURLs.
type Profile struct {
	Name      string
	BaseURL   string
	Model     string
	Protocol  agentv1.Protocol
	APIKeyEnv string
	// APIKeyFile names a file holding the key (instead of APIKeyEnv).
	APIKeyFile string
	// AllowedBaseURLs are further endpoints a client may point this profile
	// at while it uses the profile's key (same scheme, host, port and path
	// prefix as one of them).
	AllowedBaseURLs []string
	// APIKey is the key read from APIKeyEnv or APIKeyFile; never printed.
	APIKey string `json:"-"`
	// Defaults are further config fields (system, provider, max_tokens…) the
	// profile supplies; an agent's own fields override them.
	Defaults *agentv1.AgentConfig
	// Prices are what tokens cost per million, by model name; "*" prices
	// the profile's other models. Budgets count cost with them.
	Prices map[string]Price
	// Fallback lists, as profile names, the models a round of an agent
	// using this profile falls back on, and the error kinds that hand it
	// on (config file keys fallbacks and fallback_on); nil: none.
	Fallback *agentv1.FallbackConfig
}

// Price is what a model's tokens cost, per million, in any one currency.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Price returns the price of model's tokens under the profile.
func (p *Profile) Price(model string) (Price, bool) {
	if pr, ok := p.Prices[model]; ok {
		return pr, true
	}
	pr, ok := p.Prices["*"]
	return pr, ok
}

// AgentConfig returns the profile as an agent config: its defaults with the
// base URL, key, model and protocol set over them.
func (p *Profile) AgentConfig() *agentv1.AgentConfig {
	c := &agentv1.AgentConfig{}
	if p.Defaults != nil {
		c = proto.Clone(p.Defaults).(*agentv1.AgentConfig)
	}
	name := p.Name
	c.Profile = &name
	if p.BaseURL != "" {
		c.BaseUrl = &p.BaseURL
	}
	if p.Model != "" {
		c.Model = &p.Model
	}
	if p.APIKey != "" {
		c.ApiKey = &p.APIKey
	}
	if p.Protocol != agentv1.Protocol_PROTOCOL_UNSPECIFIED {
		c.Protocol = p.Protocol
	}
	if p.Fallback != nil {
		c.Fallback = proto.Clone(p.Fallback).(*agentv1.FallbackConfig)
	}
	return c
}

// Profile returns the named profile; an empty name means the default profile.
func (c *Config) Profile(name string) (*Profile, bool) {
	if name == "" {
		name = c.DefaultProfile
	}
	if name == "" {
		return nil, false
	}
	p, ok := c.Profiles[name]
	return p, ok
}

// ProfileNames returns the profile names, sorted.
func (c *Config) ProfileNames() []string {
	names := make([]string, 0, len(c.Profiles))
	for n := range c.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// profileError is a problem at a key under one profile.
func profileError(key string, err error) error {
	return fmt.Errorf(".%s: %w", key, err)
}

func parseProfile(name string, v any) (*Profile, error) {
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf(": want a map with %s", profileKeys)
	}
	p := &Profile{Name: name}
	for k, val := range m {
		str := func() (string, error) {
			s, ok := val.(string)
			if !ok {
				return "", profileError(k, fmt.Errorf("want a string"))
			}
			return s, nil
		}
		var err error
		switch k {
		case "base_url":
			p.BaseURL, err = str()
		case "model":
			p.Model, err = str()
		case "api_key_env":
			p.APIKeyEnv, err = str()
		case "api_key_file":
			p.APIKeyFile, err = str()
		case "allowed_base_urls":
			p.AllowedBaseURLs, err = stringList(val)
			if err != nil {
				err = profileError(k, err)
			}
		case "protocol":
			var s string
			if s, err = str(); err == nil {
				if p.Protocol, err = ParseProtocol(s); err != nil {
					err = profileError(k, err)
				}
			}
		case "prices":
			err = parsePrices(p, val)
		case "fallbacks":
			var names []string
			if names, err = stringList(val); err != nil {
				err = profileError(k, fmt.Errorf("want a list of profile names: %w", err))
				break
			}
			if p.Fallback == nil {
				p.Fallback = &agentv1.FallbackConfig{}
			}
			for _, n := range names {
				p.Fallback.Models = append(p.Fallback.Models, &agentv1.FallbackModel{Profile: proto.String(n)})
			}
		case "fallback_on":
			var kinds []string
			if kinds, err = stringList(val); err != nil {
				err = profileError(k, err)
				break
			}
			if p.Fallback == nil {
				p.Fallback = &agentv1.FallbackConfig{}
			}
			for _, kind := range kinds {
				ek, kerr := parseErrorKind(kind)
				if kerr != nil {
					err = profileError(k, kerr)
					break
				}
				p.Fallback.On = append(p.Fallback.On, ek)
			}
		case "api_key":
			err = profileError(k, errors.New("an API key must not be in the config file; set api_key_env to the name of the variable holding it"))
		case "defaults":
			js, jerr := json.Marshal(val)
			if jerr != nil {
				return nil, profileError(k, jerr)
			}
			p.Defaults = &agentv1.AgentConfig{}
			if uerr := protojson.Unmarshal(js, p.Defaults); uerr != nil {
				err = profileError(k, fmt.Errorf("not an agent config: %w", uerr))
			}
		default:
			err = profileError(k, fmt.Errorf("unknown key (want %s)", profileKeys))
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// parsePrices reads a profile's prices: {model: {input: n, output: n}}.
func parsePrices(p *Profile, val any) error {
	js, err := json.Marshal(val)
	if err != nil {
		return profileError("prices", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p.Prices); err != nil {
		return profileError("prices", fmt.Errorf("want {model: {input: price, output: price}} per million tokens: %w", err))
	}
	for m, pr := range p.Prices {
		if pr.Input < 0 || pr.Output < 0 {
			return profileError("prices."+m, errors.New("a price must not be negative"))
		}
	}
	return nil
}

// profileKeys are the keys of a profile, for messages.
const profileKeys = "base_url, model, protocol, api_key_env, api_key_file, allowed_base_urls, defaults, prices, fallbacks, fallback_on"

// fallbackKinds are the error kinds a fallback may be taken on, as the
// config file names them.
const fallbackKinds = "server, limit, timeout, network, auth, request or unknown"

// parseErrorKind reads an error kind a round may fall back on.
func parseErrorKind(s string) (agentv1.ErrorKind, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if name != "aborted" && name != "unspecified" {
		if k, ok := agentv1.ErrorKind_value["ERROR_KIND_"+strings.ToUpper(name)]; ok {
			return agentv1.ErrorKind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown error kind %q: want %s", s, fallbackKinds)
}

// ParseProtocol reads a protocol name: chat, responses, anthropic or gemini.
func ParseProtocol(s string) (agentv1.Protocol, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "chat":
		return agentv1.Protocol_PROTOCOL_CHAT, nil
	case "responses":
		return agentv1.Protocol_PROTOCOL_RESPONSES, nil
	case "anthropic":
		return agentv1.Protocol_PROTOCOL_ANTHROPIC, nil
	case "gemini":
		return agentv1.Protocol_PROTOCOL_GEMINI, nil
	}
	return 0, fmt.Errorf("unknown protocol %q: want chat, responses, anthropic or gemini", s)
}

// finishProfiles fills the default profile in from the model settings,
// reads every profile's API key and checks the profiles.
func (c *Config) finishProfiles(getenv func(string) string, bad func(string, ...any)) {
	if c.Profiles == nil {
		c.Profiles = map[string]*Profile{}
	}
	// The model flags and variables fill in the default profile.
	if d := c.defaultModel; d.BaseURL != "" || d.Model != "" || d.Protocol != agentv1.Protocol_PROTOCOL_UNSPECIFIED {
		p := c.Profiles[DefaultProfile]
		if p == nil {
			p = &Profile{Name: DefaultProfile}
			c.Profiles[DefaultProfile] = p
		}
		if d.BaseURL != "" {
			p.BaseURL = d.BaseURL
		}
		if d.Model != "" {
			p.Model = d.Model
		}
		if d.Protocol != agentv1.Protocol_PROTOCOL_UNSPECIFIED {
			p.Protocol = d.Protocol
		}
	}
	if p := c.Profiles[DefaultProfile]; p != nil && p.APIKeyEnv == "" && p.APIKeyFile == "" {
		if c.defaultModel.APIKeyFile != "" {
			p.APIKeyFile = c.defaultModel.APIKeyFile
		} else {
			p.APIKeyEnv = c.defaultModel.APIKeyEnv
		}
	}
	for name, p := range c.Profiles {
		p.Name = name
		switch {
		case p.APIKeyEnv != "" && p.APIKeyFile != "":
			bad("profiles.%s: give api_key_env or api_key_file, not both", name)
		case p.APIKeyFile != "":
			key, err := readSecretFile(p.APIKeyFile)
			if err != nil {
				bad("profiles.%s.api_key_file: %w", name, err)
			}
			p.APIKey = key
		case p.APIKeyEnv != "":
			p.APIKey = strings.TrimSpace(getenv(p.APIKeyEnv))
		}
		for i, u := range p.AllowedBaseURLs {
			if err := checkEndpoint(u); err != nil {
				bad("profiles.%s.allowed_base_urls[%d] %q: %w", name, i, u, err)
			}
		}
		if p.Defaults.GetApiKey() != "" || p.Defaults.GetCompact().GetApiKey() != "" {
			bad("profiles.%s.defaults: an API key must not be in the config file; set api_key_env to the variable holding it", name)
		}
		for _, m := range p.Defaults.GetFallback().GetModels() {
			if m.GetApiKey() != "" {
				bad("profiles.%s.defaults.fallback: an API key must not be in the config file; list the fallback as a profile of its own in profiles.%s.fallbacks", name, name)
				break
			}
		}
		c.checkFallbacks(p, bad)
	}
	if c.DefaultProfile != "" && c.DefaultProfile != DefaultProfile && c.Profiles[c.DefaultProfile] == nil {
		bad("default_profile %q: no such profile (have %v)", c.DefaultProfile, c.ProfileNames())
	}
}

// checkFallbacks fails a profile whose fallbacks name no profile, or only
// kinds.
func (c *Config) checkFallbacks(p *Profile, bad func(string, ...any)) {
	f := p.Fallback
	if f == nil {
		return
	}
	if len(f.GetModels()) == 0 {
		bad("profiles.%s.fallback_on: there is no fallback to take (profiles.%s.fallbacks is empty)", p.Name, p.Name)
	}
	for i, m := range f.GetModels() {
		if c.Profiles[m.GetProfile()] == nil {
			bad("profiles.%s.fallbacks[%d] %q: no such profile (have %v)", p.Name, i, m.GetProfile(), c.ProfileNames())
		}
	}
}

// checkBaseURLs fails a model base URL that is not an absolute http or
// https URL with a host, naming the flag, variable or config file key that
// set it: such a URL would only fail later, at every CreateAgent or send,
// blaming a field the user never set.
func (c *Config) checkBaseURLs(bad func(string, ...any)) {
	for _, name := range c.ProfileNames() {
		p := c.Profiles[name]
		where := "config file key profiles." + name + ".base_url"
		if name == DefaultProfile && c.defaultModel.BaseURL != "" {
			where = c.originOf("model-base-url")
		}
		if p.BaseURL != "" {
			if err := CheckBaseURL(p.BaseURL); err != nil {
				bad("%s %q: %w", where, withoutCredentials(p.BaseURL), err)
			}
		}
		if u := p.Defaults.GetBaseUrl(); u != "" {
			if err := CheckBaseURL(u); err != nil {
				bad("config file key profiles.%s.defaults.baseUrl %q: %w", name, withoutCredentials(u), err)
			}
		}
	}
}

// withoutCredentials is a URL as a message may repeat it: without the
// user and password it may hold.
func withoutCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// CheckBaseURL checks that s is a model service's base URL: an absolute
// http or https URL with a host, without credentials. The error says what
// is wrong and, for a URL without a scheme, what was likely meant.
func CheckBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case !strings.Contains(s, "://"):
		return fmt.Errorf("not an absolute URL (no http:// or https://); did you mean %q?", "http://"+strings.TrimLeft(s, "/"))
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q: want http or https", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return errors.New("no host: want an absolute http or https URL such as https://api.openai.com/v1")
	case u.User != nil:
		return errors.New("must not hold credentials: give the key in the variable api_key_env names (AGENTCORE_MODEL_API_KEY for the default profile)")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("must not have a query or a fragment: the protocol adds its own path to it")
	}
	return nil
}

// checkDefaultModel fails a default model set by half (a base URL without
// a model, or the reverse), naming both settings, and warns when the
// variable meant to hold a profile's API key is empty.
func (c *Config) checkDefaultModel(bad func(string, ...any), getenv func(string) string) {
	if p := c.Profiles[DefaultProfile]; p != nil {
		switch {
		case p.BaseURL != "" && p.Model == "":
			bad("the default model is half set: -model-base-url (AGENTCORE_MODEL_BASE_URL, model.base_url) is %s but -model (AGENTCORE_MODEL, model.model) is not set; set both, or neither to run without a default model", p.BaseURL)
		case p.BaseURL == "" && p.Model != "":
			bad("the default model is half set: -model (AGENTCORE_MODEL, model.model) is %s but -model-base-url (AGENTCORE_MODEL_BASE_URL, model.base_url) is not set; set both, or neither to run without a default model", p.Model)
		}
	}
	if name := c.DefaultProfile; name != DefaultProfile {
		if p := c.Profiles[name]; p != nil && (p.BaseURL == "") != (p.Model == "") {
			bad("default_profile %s is half set: profiles.%s.base_url and profiles.%s.model go together", name, name, name)
		}
	}
	for _, name := range c.ProfileNames() {
		p := c.Profiles[name]
		if p.BaseURL != "" && p.APIKeyFile == "" && p.APIKeyEnv != "" && strings.TrimSpace(getenv(p.APIKeyEnv)) == "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s is empty or unset: profile %s's requests to %s carry no API key (set it, or ignore this for a model that needs none)",
				p.APIKeyEnv, name, hostOf(p.BaseURL)))
		}
	}
}

// hostOf returns the host of a URL, or the URL when it has none.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// checkEndpoint checks that s is an absolute http or https URL without credentials.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return errors.New("want an absolute http or https URL")
	case u.User != nil:
		return errors.New("must not hold credentials")
	}
	return nil
}

// String prints the profile without its API key.
func (p Profile) String() string {
	key := "unset"
	if p.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("profile %s (base_url=%s model=%s protocol=%s api_key_env=%s api_key_file=%s key %s)",
		p.Name, p.BaseURL, p.Model, p.Protocol, p.APIKeyEnv, p.APIKeyFile, key)
}

// GoString is String: a key never reaches %#v either.
func (p Profile) GoString() string { return p.String() }
