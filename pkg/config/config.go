// Package config holds agent-server's configuration: where it listens, where
// its tools, skills and MCP definitions are, its model profiles, limits, TLS,
// authentication and logging.
//
// Every setting is one row of a table: a command-line flag, an environment
// variable and a key of the optional YAML (or JSON) config file. A flag wins
// over the environment, which wins over the file, which wins over the default.
// Table prints the rows as the Markdown table the README shows.
//
// Secrets never sit in the file or on the command line: a profile names the
// environment variable holding its API key, and the bearer token comes from an
// environment variable or a file.
package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// DefaultProfile is the name of the profile the model flags and environment
// variables fill in, and the profile an agent uses when its config names none.
const DefaultProfile = "default"

// DefaultAPIKeyEnv is the environment variable holding the default profile's API key.
const DefaultAPIKeyEnv = "AGENTCORE_MODEL_API_KEY"

// Config is agent-server's configuration.
type Config struct {
	// Listen is host:port, or unix:PATH for a unix socket (made with mode 0600).
	Listen string
	// ToolDirs are scanned for tool plugins in order; later ones win by tool name.
	ToolDirs []string
	// SkillDirs are scanned for skills in order; later ones win by skill name.
	SkillDirs []string
	// MCP are MCP definition files, or directories holding them, scanned after ToolDirs.
	MCP []string
	// Profiles are named model settings, keyed by name.
	Profiles map[string]*Profile
	// DefaultProfile names the profile used by agents whose config names none
	// and has no base URL; empty means none.
	DefaultProfile string
	// Limits bound what clients may use.
	Limits Limits
	// TLS, when CertFile is set, serves TLS; with ClientCAFile, mutual TLS.
	TLS TLS
	// AuthToken, when set, is the bearer token every AgentService call must carry.
	AuthToken string `json:"-"`
	// LogFormat is "text" (hclog) or "json".
	LogFormat string
	// LogLevel is trace, debug, info, warn or error.
	LogLevel string
	// ShutdownGrace is how long runs may go on after SIGTERM before they are stopped.
	ShutdownGrace time.Duration
	// KeepaliveTime is the idle time after which the server pings a client.
	KeepaliveTime time.Duration
	// KeepaliveTimeout is how long the server waits for a ping's answer.
	KeepaliveTimeout time.Duration
	// MaxIdlePlugins is how many idle processes are kept per plugin (0: the default).
	MaxIdlePlugins int
	// MinIdlePlugins is how many idle processes per plugin are started
	// ahead, at load and after a process is killed or crashes (0: none).
	MinIdlePlugins int

	// file is the config file read, if any.
	file string
	// authTokenEnv and authTokenFile say where AuthToken comes from.
	authTokenEnv, authTokenFile string
	// defaultModel collects the model flags and variables for the default profile.
	defaultModel Profile
}

// Limits bound what clients may use. Zero means no limit.
type Limits struct {
	// MaxSessions is how many agents may exist at once.
	MaxSessions int
	// MaxConcurrentRuns is how many sends may run at once, over all agents.
	MaxConcurrentRuns int
	// MaxMessageBytes is the largest gRPC message received or sent.
	MaxMessageBytes int
	// MaxHistory is the most messages a history may hold when it is set or a send starts.
	MaxHistory int
}

// TLS names the certificate files.
type TLS struct {
	CertFile, KeyFile string
	// ClientCAFile, when set, makes client certificates signed by it required.
	ClientCAFile string
}

// Profile is a named model setting. The API key is read from the environment
// variable APIKeyEnv when the config is loaded; it is never in the file.
type Profile struct {
	Name      string
	BaseURL   string
	Model     string
	Protocol  agentv1.Protocol
	APIKeyEnv string
	// APIKey is the key read from APIKeyEnv; never printed.
	APIKey string `json:"-"`
	// Defaults are further config fields (system, provider, max_tokens…) the
	// profile supplies; an agent's own fields override them.
	Defaults *agentv1.AgentConfig
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

// Secrets returns every secret the config holds (API keys, the bearer
// token), for redaction from logs and errors.
func (c *Config) Secrets() []string {
	var s []string
	if c.AuthToken != "" {
		s = append(s, c.AuthToken)
	}
	for _, p := range c.Profiles {
		if p.APIKey != "" {
			s = append(s, p.APIKey)
		}
	}
	return s
}

// SecretEnv returns the names of the environment variables that held
// secrets (profile keys, the bearer token), so that the server can remove
// them before it starts plugins, which inherit its environment.
func (c *Config) SecretEnv() []string {
	var names []string
	if c.authTokenEnv != "" && c.authTokenFile == "" {
		names = append(names, c.authTokenEnv)
	}
	for _, p := range c.Profiles {
		if p.APIKeyEnv != "" {
			names = append(names, p.APIKeyEnv)
		}
	}
	return names
}

// UnixSocket returns the socket path when Listen is unix:PATH.
func (c *Config) UnixSocket() (string, bool) {
	return unixPath(c.Listen)
}

func unixPath(listen string) (string, bool) {
	if p, ok := strings.CutPrefix(listen, "unix://"); ok {
		return p, true
	}
	return strings.CutPrefix(listen, "unix:")
}

// Logger returns an hclog logger writing to w in the configured format and level.
func (c *Config) Logger(name string, w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      hclog.LevelFromString(c.LogLevel),
		JSONFormat: c.LogFormat == "json",
		Output:     w,
	})
}

// Load reads the configuration from args (without the program name), the
// environment (getenv, e.g. os.Getenv) and the config file they name
// (-config or AGENTCORE_CONFIG). A bad setting is an error naming its flag,
// variable or key. -help returns flag.ErrHelp after printing the table.
func Load(args []string, getenv func(string) string, help io.Writer) (*Config, error) {
	// A first pass over the flags finds the config file.
	probe := defaults()
	if err := newFlagSet(probe, io.Discard).Parse(args); err != nil && !errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	path := probe.file
	if path == "" {
		path = getenv("AGENTCORE_CONFIG")
	}

	c := defaults()
	if path != "" {
		if err := loadFile(c, path); err != nil {
			return nil, err
		}
	}
	for _, s := range settings() {
		if s.Env == "" {
			continue
		}
		if v := getenv(s.Env); v != "" {
			s.reset(c)
			if err := s.set(c, v); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Env, err)
			}
		}
	}
	fs := newFlagSet(c, help)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q: every setting is a flag (see -help)", fs.Args())
	}
	if err := c.finish(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

func defaults() *Config {
	c := &Config{}
	for _, s := range settings() {
		if s.Default != "" {
			if err := s.set(c, s.Default); err != nil {
				panic(fmt.Sprintf("config: bad default of -%s: %v", s.Flag, err))
			}
		}
	}
	return c
}

// flagValue is one setting as a flag: the first use of a list flag replaces
// the list from the file or environment, later uses append.
type flagValue struct {
	s    *Setting
	c    *Config
	seen bool
}

func (f *flagValue) String() string {
	if f == nil || f.c == nil {
		return ""
	}
	return f.s.get(f.c)
}

func (f *flagValue) Set(v string) error {
	if !f.seen {
		f.s.reset(f.c)
		f.seen = true
	}
	return f.s.set(f.c, v)
}

func newFlagSet(c *Config, help io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("agent-server", flag.ContinueOnError)
	fs.SetOutput(help)
	fs.Usage = func() {
		fmt.Fprintf(help, "Usage: agent-server [flags]\n\nEvery setting is a flag, an environment variable and a config file key;\na flag wins over the environment, which wins over the file.\n\n%s", Table())
	}
	all := settings()
	for i := range all {
		s := &all[i]
		fs.Var(&flagValue{s: s, c: c}, s.Flag, s.Usage)
	}
	return fs
}

// loadFile reads the config file into c.
func loadFile(c *Config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	profiles, _ := raw["profiles"].(map[string]any)
	if v, ok := raw["profiles"]; ok && profiles == nil && v != nil {
		return fmt.Errorf("config file %s: profiles: want a map of profile names to profiles", path)
	}
	delete(raw, "profiles")
	for k, v := range flatten("", raw) {
		s := settingByFile(k)
		if s == nil {
			return fmt.Errorf("config file %s: unknown key %q (see the configuration table)", path, k)
		}
		s.reset(c)
		vals, ok := v.([]any)
		if !ok {
			vals = []any{v}
		}
		for _, e := range vals {
			if err := s.set(c, fmt.Sprint(e)); err != nil {
				return fmt.Errorf("config file %s: %s: %w", path, k, err)
			}
		}
	}
	c.Profiles = map[string]*Profile{}
	for name, v := range profiles {
		p, err := parseProfile(name, v)
		if err != nil {
			return fmt.Errorf("config file %s: profiles.%s%w", path, name, err)
		}
		c.Profiles[name] = p
	}
	return nil
}

// profileError is a problem at a key under one profile.
func profileError(key string, err error) error {
	return fmt.Errorf(".%s: %w", key, err)
}

func parseProfile(name string, v any) (*Profile, error) {
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf(": want a map with base_url, model, protocol, api_key_env, defaults")
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
		case "protocol":
			var s string
			if s, err = str(); err == nil {
				if p.Protocol, err = ParseProtocol(s); err != nil {
					err = profileError(k, err)
				}
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
			err = profileError(k, errors.New("unknown key (want base_url, model, protocol, api_key_env, defaults)"))
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// flatten turns nested maps into dotted keys; lists and scalars are leaves.
func flatten(prefix string, m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			for k2, v2 := range flatten(key, sub) {
				out[k2] = v2
			}
			continue
		}
		out[key] = v
	}
	return out
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

// finish resolves secrets and profiles and checks the whole.
func (c *Config) finish(getenv func(string) string) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if c.authTokenFile != "" {
		b, err := os.ReadFile(c.authTokenFile)
		switch {
		case err != nil:
			bad("auth token file: %w", err)
		case strings.TrimSpace(string(b)) == "":
			bad("auth token file %s is empty", c.authTokenFile)
		default:
			c.AuthToken = strings.TrimSpace(string(b))
		}
	} else if c.authTokenEnv != "" {
		c.AuthToken = strings.TrimSpace(getenv(c.authTokenEnv))
	}

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
	if p := c.Profiles[DefaultProfile]; p != nil && p.APIKeyEnv == "" {
		p.APIKeyEnv = c.defaultModel.APIKeyEnv
	}
	for name, p := range c.Profiles {
		p.Name = name
		if p.APIKeyEnv != "" {
			p.APIKey = strings.TrimSpace(getenv(p.APIKeyEnv))
		}
		if p.Defaults.GetApiKey() != "" || p.Defaults.GetCompact().GetApiKey() != "" {
			bad("profiles.%s.defaults: an API key must not be in the config file; set api_key_env to the variable holding it", name)
		}
	}
	if c.DefaultProfile != "" && c.DefaultProfile != DefaultProfile && c.Profiles[c.DefaultProfile] == nil {
		bad("default_profile %q: no such profile (have %v)", c.DefaultProfile, c.ProfileNames())
	}

	if path, ok := c.UnixSocket(); ok {
		if path == "" {
			bad("listen %q: the unix socket path is empty", c.Listen)
		}
	} else if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen %q: want host:port or unix:PATH", c.Listen)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log format %q: want text or json", c.LogFormat)
	}
	if hclog.LevelFromString(c.LogLevel) == hclog.NoLevel {
		bad("log level %q: want trace, debug, info, warn or error", c.LogLevel)
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls: -tls-cert and -tls-key go together")
	}
	if c.TLS.ClientCAFile != "" && c.TLS.CertFile == "" {
		bad("tls: -tls-client-ca (mutual TLS) needs -tls-cert and -tls-key")
	}
	for _, n := range []struct {
		name string
		v    int
	}{
		{"max-sessions", c.Limits.MaxSessions}, {"max-runs", c.Limits.MaxConcurrentRuns},
		{"max-message-bytes", c.Limits.MaxMessageBytes}, {"max-history", c.Limits.MaxHistory},
		{"max-idle-plugins", c.MaxIdlePlugins}, {"min-idle-plugins", c.MinIdlePlugins},
	} {
		if n.v < 0 {
			bad("-%s %d: must not be negative", n.name, n.v)
		}
	}
	if c.Limits.MaxMessageBytes == 0 {
		bad("-max-message-bytes: must be positive")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"shutdown-grace", c.ShutdownGrace}, {"keepalive-time", c.KeepaliveTime}, {"keepalive-timeout", c.KeepaliveTimeout}} {
		if d.v < 0 {
			bad("-%s %s: must not be negative", d.name, d.v)
		}
	}
	return errors.Join(errs...)
}

// String prints the profile without its API key.
func (p Profile) String() string {
	key := "unset"
	if p.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("profile %s (base_url=%s model=%s protocol=%s api_key_env=%s key %s)",
		p.Name, p.BaseURL, p.Model, p.Protocol, p.APIKeyEnv, key)
}

// GoString is String: a key never reaches %#v either.
func (p Profile) GoString() string { return p.String() }

// String prints the config without its secrets.
func (c Config) String() string {
	return fmt.Sprintf("listen=%s tool_dirs=%v skill_dirs=%v mcp=%v profiles=%v default_profile=%s auth=%t tls=%t",
		c.Listen, c.ToolDirs, c.SkillDirs, c.MCP, c.ProfileNames(), c.DefaultProfile, c.AuthToken != "", c.TLS.CertFile != "")
}

// GoString is String.
func (c Config) GoString() string { return c.String() }
