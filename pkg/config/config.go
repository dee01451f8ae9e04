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
// environment variable or the file holding its API key, and the bearer token
// comes from an environment variable or a file. The one exception, a
// password in the store's URL, SecretArgs takes out of the command line.
package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
	// SocketOwner is USER[:GROUP], the owner given to the unix socket of Listen.
	SocketOwner string
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
	// AuthTokensFile names the tenants file (YAML or JSON: tenants, their
	// tokens, limits and profiles); it is read again on SIGHUP.
	AuthTokensFile string
	// Reflection is "on", "off" or "auth" (only for authenticated callers);
	// empty means on for loopback and unix sockets, auth elsewhere.
	Reflection string
	// Insecure allows serving on a non-loopback address without TLS and without a token.
	Insecure bool
	// PluginUser is USER[:GROUP]: when the server runs as root, plugin
	// processes run as this user (and group; default: the user's own).
	PluginUser string
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
	// PluginGOMAXPROCS is the GOMAXPROCS plugin processes are started
	// with (0: the host's environment's, or the Go runtime's default).
	PluginGOMAXPROCS int
	// HTTP configures the HTTP/JSON gateway and web console; off when HTTP.Listen is empty.
	HTTP HTTP
	// SkipBadPlugins turns a tool file that is no working plugin into a
	// warning instead of a failed start.
	SkipBadPlugins bool
	// ToolLimits bound the resources of each tool call's process tree.
	ToolLimits ToolLimits
	// Warnings are what Load found suspicious but not wrong (an empty API
	// key variable): the server logs them at start.
	Warnings []string
	// MetricsListen, when set, is the host:port of the HTTP listener serving /metrics.
	MetricsListen string
	// Pprof adds /debug/pprof/ to the metrics listener.
	Pprof bool
	// TraceContent puts message content in trace spans.
	TraceContent bool
	// Version asks to print the version and exit (-version).
	Version bool
	// MCPListen, when set, is host:port or unix:PATH where the hosted tools
	// are served over MCP streamable HTTP (path /mcp).
	MCPListen string
	// Store is where agents, histories, runs and events are kept:
	// "sqlite:PATH", a postgres:// URL or "memory". Load fills in the
	// default, sqlite in DataDir.
	Store string
	// DataDir holds the default SQLite store.
	DataDir string
	// EventRetention is how long the events of ended runs are kept.
	EventRetention time.Duration
	// LeaseTTL is how long a running agent's lease lasts unless renewed.
	LeaseTTL time.Duration
	// PermissionTimeout is how long a permission request waits for an answer.
	PermissionTimeout time.Duration
	// ReplicaID names this server in the store (default: the host name).
	ReplicaID string
	// StorePassword is PGPASSWORD as Load read it: the PostgreSQL store's
	// password when its URL holds none. The server keeps the variable out of
	// its environment (see SecretEnv), so the store gets it from here.
	StorePassword string `json:"-"`
	// TraceHeaders are the headers of every OTLP trace export, from
	// OTEL_EXPORTER_OTLP_TRACES_HEADERS or else OTEL_EXPORTER_OTLP_HEADERS
	// as Load read them: they carry backends' API keys, so the server keeps
	// the variables out of its environment and the exporter gets them from here.
	TraceHeaders map[string]string `json:"-"`

	// file is the config file read, if any.
	file string
	// authTokenEnv and authTokenFile say where AuthToken comes from.
	authTokenEnv, authTokenFile string
	// defaultModel collects the model flags and variables for the default profile.
	defaultModel Profile
	// otlpSecrets are the header values of every OTLP headers variable.
	otlpSecrets []string
	// storeEnvSecret is set when AGENTCORE_STORE holds a password.
	storeEnvSecret bool
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
	// MaxToolOutput is the most characters of text a tool result keeps (cut
	// from the middle); a client may ask for less, not more.
	MaxToolOutput int
	// MaxToolResultBytes is the most bytes one tool result may add to a
	// history, media included.
	MaxToolResultBytes Bytes
	// RetryMaxElapsed is how long a failing model request is retried; a
	// client may ask for less, not more.
	RetryMaxElapsed time.Duration
	// RetryMaxDelay caps one wait between retries; a client may ask for less.
	RetryMaxDelay time.Duration
}

// ToolLimits are the resource limits of tool calls: for each kind, what a
// tool that asks for nothing gets, and the most a tool may ask for (0: no
// limit, no cap), with overrides per plugin or tool from the config file.
type ToolLimits struct {
	// Mechanism is auto, cgroup2, cgroup1, rlimit or off.
	Mechanism               string
	Memory, MemoryMax       Bytes
	Processes, ProcessesMax int
	CPUTime, CPUTimeMax     time.Duration
	OpenFiles, OpenFilesMax int
	// Overrides are keyed by a tool's name or a plugin's file name (the
	// config file's plugins section).
	Overrides map[string]PluginLimits
}

// PluginLimits override some limits of a plugin's or a tool's calls,
// whatever it asks for; nil fields are not overridden, zero means no limit.
type PluginLimits struct {
	Memory    *Bytes
	Processes *int
	CPUTime   *time.Duration
	OpenFiles *int
}

// Bytes is a size in bytes; settings write it as 512MiB, 1GiB, 4096…
type Bytes uint64

// ParseBytes reads a size: a number with an optional binary unit, B,
// K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (1K = 1024), e.g. "256MiB", "1g".
func ParseBytes(s string) (Bytes, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	shift := -1
	switch strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i") {
	case "":
		shift = 0
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	case "t":
		shift = 40
	}
	v, err := strconv.ParseFloat(num, 64)
	if shift < 0 || num == "" || err != nil || v < 0 || v*float64(uint64(1)<<shift) >= 1<<63 {
		return 0, fmt.Errorf("%q is not a size such as 512MiB or 1GiB", s)
	}
	return Bytes(v * float64(uint64(1)<<shift)), nil
}

// String prints the size in the largest binary unit that keeps it whole.
func (b Bytes) String() string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if b != 0 && b%(1<<u.shift) == 0 {
			return strconv.FormatUint(uint64(b>>u.shift), 10) + u.name
		}
	}
	return strconv.FormatUint(uint64(b), 10)
}

// HTTP configures the HTTP/JSON gateway (and the web console on the same
// listener). It uses the TLS and authentication of the gRPC service.
type HTTP struct {
	// Listen is host:port or unix:PATH; empty: no HTTP listener.
	Listen string
	// CORSOrigins are the origins (scheme://host[:port], or "*") whose
	// pages may call the API; none: no cross-origin calls.
	CORSOrigins []string
}

// TLS names the certificate files.
type TLS struct {
	CertFile, KeyFile string
	// ClientCAFile, when set, makes client certificates signed by it required.
	ClientCAFile string
}

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
// token, the store's password, the OTLP exporters' header values), for
// redaction from logs, errors, events and tool results.
func (c *Config) Secrets() []string {
	var s []string
	if c.AuthToken != "" {
		s = append(s, c.AuthToken)
	}
	if p := storePassword(c.Store); p != "" {
		s = append(s, p)
	}
	if c.StorePassword != "" {
		s = append(s, c.StorePassword)
	}
	for _, p := range c.Profiles {
		if p.APIKey != "" {
			s = append(s, p.APIKey)
		}
	}
	return append(s, c.otlpSecrets...)
}

// SecretEnv returns the names of the environment variables that may hold
// secrets, sorted, so that the server can keep them out of its own
// environment and out of its plugins': the profiles' key variables, the
// bearer token's, PGPASSWORD, AGENTCORE_STORE when it holds a password, and
// the OTLP exporters' header variables.
func (c *Config) SecretEnv() []string {
	seen := map[string]bool{pgPasswordEnv: true}
	for _, n := range append([]string{c.authTokenEnv, c.defaultModel.APIKeyEnv}, otlpHeaderEnv...) {
		seen[n] = true
	}
	for _, p := range c.Profiles {
		seen[p.APIKeyEnv] = true
	}
	if c.storeEnvSecret {
		seen[storeEnv] = true
	}
	delete(seen, "")
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
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
	if probe.Version {
		return probe, nil // -version needs nothing else to be right
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

// IsBoolFlag lets a boolean setting be given as -flag, without a value.
func (f *flagValue) IsBoolFlag() bool {
	_, ok := f.s.ptr(&Config{}).(*bool)
	return ok
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
	fs.Usage = func() { fmt.Fprint(help, Help()) }
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
	plugins, _ := raw["plugins"].(map[string]any)
	if v, ok := raw["plugins"]; ok && plugins == nil && v != nil {
		return fmt.Errorf("config file %s: plugins: want a map of plugin or tool names to limits", path)
	}
	delete(raw, "plugins")
	for name, v := range plugins {
		pl, err := parsePluginLimits(v)
		if err != nil {
			return fmt.Errorf("config file %s: plugins.%s%w", path, name, err)
		}
		if c.ToolLimits.Overrides == nil {
			c.ToolLimits.Overrides = map[string]PluginLimits{}
		}
		c.ToolLimits.Overrides[name] = pl
	}
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

// parsePluginLimits reads one entry of the config file's plugins section:
// memory (a size), processes, cpu_time (a duration), open_files; 0 or
// "none" lifts the limit.
func parsePluginLimits(v any) (PluginLimits, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return PluginLimits{}, errors.New(": want a map with memory, processes, cpu_time, open_files")
	}
	var pl PluginLimits
	for k, val := range m {
		s := strings.TrimSpace(fmt.Sprint(val))
		none := strings.EqualFold(s, "none")
		var err error
		switch k {
		case "memory":
			var b Bytes
			if !none {
				b, err = ParseBytes(s)
			}
			pl.Memory = &b
		case "processes", "open_files":
			n := 0
			if !none {
				if n, err = strconv.Atoi(s); err == nil && n < 0 {
					err = errors.New("must not be negative")
				}
			}
			if k == "processes" {
				pl.Processes = &n
			} else {
				pl.OpenFiles = &n
			}
		case "cpu_time":
			var d time.Duration
			if !none {
				if d, err = time.ParseDuration(s); err == nil && d < 0 {
					err = errors.New("must not be negative")
				}
			}
			pl.CPUTime = &d
		default:
			err = errors.New("unknown key (want memory, processes, cpu_time, open_files)")
		}
		if err != nil {
			return PluginLimits{}, profileError(k, err)
		}
	}
	return pl, nil
}

// profileKeys are the keys of a profile, for messages.
const profileKeys = "base_url, model, protocol, api_key_env, api_key_file, allowed_base_urls, defaults"

// stringList reads a YAML list of strings (or one string).
func stringList(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("want a list of strings")
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, errors.New("want a list of strings")
		}
		out = append(out, s)
	}
	return out, nil
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
		tok, err := readSecretFile(c.authTokenFile)
		if err != nil {
			bad("auth token file: %w", err)
		}
		c.AuthToken = tok
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
	}
	if c.DefaultProfile != "" && c.DefaultProfile != DefaultProfile && c.Profiles[c.DefaultProfile] == nil {
		bad("default_profile %q: no such profile (have %v)", c.DefaultProfile, c.ProfileNames())
	}
	c.checkDefaultModel(bad, getenv)

	if path, ok := c.UnixSocket(); ok {
		if path == "" {
			bad("listen %q: the unix socket path is empty", c.Listen)
		}
	} else if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen %q: want host:port or unix:PATH", c.Listen)
	}
	if c.HTTP.Listen != "" {
		if path, ok := unixPath(c.HTTP.Listen); ok {
			if path == "" {
				bad("http listen %q: the unix socket path is empty", c.HTTP.Listen)
			}
		} else if _, _, err := net.SplitHostPort(c.HTTP.Listen); err != nil {
			bad("http listen %q: want host:port or unix:PATH", c.HTTP.Listen)
		}
		if _, port, _ := net.SplitHostPort(c.HTTP.Listen); c.HTTP.Listen == c.Listen && port != "0" {
			bad("http listen %q: the gRPC service listens there (-listen)", c.HTTP.Listen)
		}
	}
	for _, o := range c.HTTP.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			bad("http cors origin %q: %v", o, err)
		}
	}
	if len(c.HTTP.CORSOrigins) > 0 && c.HTTP.Listen == "" {
		bad("-http-cors-origin needs -http-listen")
	}
	switch c.Reflection {
	case "", "on", "off", "auth":
	default:
		bad("reflection %q: want on, off or auth", c.Reflection)
	}
	for _, o := range []struct{ flag, v string }{{"plugin-user", c.PluginUser}, {"socket-owner", c.SocketOwner}} {
		if u, g, _ := strings.Cut(o.v, ":"); o.v != "" && (strings.TrimSpace(u) == "" || strings.Contains(g, ":")) {
			bad("%s %q: want USER or USER:GROUP (names or numeric ids)", o.flag, o.v)
		}
	}
	if _, unix := c.UnixSocket(); c.SocketOwner != "" && !unix {
		bad("socket-owner: -listen %q is not a unix socket", c.Listen)
	}
	if c.MCPListen != "" {
		if path, ok := unixPath(c.MCPListen); ok {
			if path == "" {
				bad("mcp-listen %q: the unix socket path is empty", c.MCPListen)
			}
		} else if _, _, err := net.SplitHostPort(c.MCPListen); err != nil {
			bad("mcp-listen %q: want host:port or unix:PATH", c.MCPListen)
		}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log format %q: want text or json", c.LogFormat)
	}
	if hclog.LevelFromString(c.LogLevel) == hclog.NoLevel {
		bad("log level %q: want trace, debug, info, warn or error", c.LogLevel)
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			bad("metrics listen %q: want host:port", c.MetricsListen)
		}
	} else if c.Pprof {
		bad("-pprof: serves on the metrics listener; set -metrics-listen too")
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
		{"max-idle-plugins", c.MaxIdlePlugins}, {"min-idle-plugins", c.MinIdlePlugins}, {"max-tool-output", c.Limits.MaxToolOutput},
		{"plugin-gomaxprocs", c.PluginGOMAXPROCS},
	} {
		if n.v < 0 {
			bad("-%s %d: must not be negative", n.name, n.v)
		}
	}
	if c.Limits.MaxMessageBytes == 0 {
		bad("-max-message-bytes: must be positive")
	}
	if c.Limits.MaxToolResultBytes == defaultToolResultBytes && int64(c.Limits.MaxMessageBytes) < 2*defaultToolResultBytes {
		// The default follows a smaller message limit; a value set by hand is checked.
		c.Limits.MaxToolResultBytes = Bytes(c.Limits.MaxMessageBytes / 2)
	}
	if r := int64(c.Limits.MaxToolResultBytes); r <= 0 || r > int64(c.Limits.MaxMessageBytes)-minMessageRoom {
		bad("-max-tool-result-bytes %s: must be positive and leave %d KiB of -max-message-bytes (%d) for the rest of an event",
			c.Limits.MaxToolResultBytes, minMessageRoom>>10, c.Limits.MaxMessageBytes)
	}
	c.checkToolLimits(bad)
	c.finishStore(getenv, bad)
	c.readSecretEnv(getenv)
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"shutdown-grace", c.ShutdownGrace}, {"keepalive-time", c.KeepaliveTime}, {"keepalive-timeout", c.KeepaliveTimeout},
		{"retry-max-elapsed", c.Limits.RetryMaxElapsed}, {"retry-max-delay", c.Limits.RetryMaxDelay},
		{"event-retention", c.EventRetention}, {"permission-timeout", c.PermissionTimeout}} {
		if d.v < 0 {
			bad("-%s %s: must not be negative", d.name, d.v)
		}
	}
	return errors.Join(errs...)
}

// checkOrigin accepts "*" or an origin as browsers send it: scheme://host[:port].
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New(`want "*" or scheme://host[:port], e.g. https://app.example.com`)
	}
	return nil
}

// defaultToolResultBytes is -max-tool-result-bytes' default (settings.go).
const defaultToolResultBytes = 4 << 20

// minMessageRoom is what a tool result leaves of -max-message-bytes for
// the rest of the event carrying it.
const minMessageRoom = 64 << 10

// Tool limits below these would not let a plugin start: a Go plugin alone
// runs about ten threads and maps about 10 MiB.
const (
	minToolProcesses = 16
	minToolMemory    = 16 << 20
)

// checkToolLimits checks the tool limit settings and overrides.
func (c *Config) checkToolLimits(bad func(string, ...any)) {
	t := c.ToolLimits
	switch t.Mechanism {
	case "auto", "cgroup2", "cgroup1", "rlimit", "off":
	default:
		bad("-tool-limits %q: want auto, cgroup2, cgroup1, rlimit or off", t.Mechanism)
	}
	mem := func(name string, b Bytes) {
		if b != 0 && b < minToolMemory {
			bad("%s %s: must be 0 (no limit) or at least %s", name, b, Bytes(minToolMemory))
		}
	}
	procs := func(name string, n int) {
		if n != 0 && n < minToolProcesses {
			bad("%s %d: must be 0 (no limit) or at least %d (threads count: a Go plugin alone runs about ten)", name, n, minToolProcesses)
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"tool-processes", t.Processes}, {"tool-processes-max", t.ProcessesMax}, {"tool-open-files", t.OpenFiles}, {"tool-open-files-max", t.OpenFilesMax}} {
		if n.v < 0 {
			bad("-%s %d: must not be negative", n.name, n.v)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"tool-cpu-time", t.CPUTime}, {"tool-cpu-time-max", t.CPUTimeMax}} {
		if d.v < 0 {
			bad("-%s %s: must not be negative", d.name, d.v)
		}
	}
	mem("-tool-memory", t.Memory)
	mem("-tool-memory-max", t.MemoryMax)
	procs("-tool-processes", t.Processes)
	procs("-tool-processes-max", t.ProcessesMax)
	for _, name := range sortedKeys(t.Overrides) {
		o := t.Overrides[name]
		if o.Memory != nil {
			mem("plugins."+name+".memory", *o.Memory)
		}
		if o.Processes != nil {
			procs("plugins."+name+".processes", *o.Processes)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// readSecretFile reads a file holding one secret, trimmed of white space.
func readSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
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

// String prints the config without its secrets.
func (c Config) String() string {
	return fmt.Sprintf("listen=%s http_listen=%s tool_dirs=%v skill_dirs=%v mcp=%v profiles=%v default_profile=%s auth=%t tenants=%s tls=%t store=%s",
		c.Listen, c.HTTP.Listen, c.ToolDirs, c.SkillDirs, c.MCP, c.ProfileNames(), c.DefaultProfile, c.AuthToken != "", c.AuthTokensFile, c.TLS.CertFile != "", c.StoreName())
}

// GoString is String.
func (c Config) GoString() string { return c.String() }

// finishStore fills in the default store and replica id and checks them.
func (c *Config) finishStore(getenv func(string) string, bad func(string, ...any)) {
	if c.DataDir == "" {
		if d := getenv("XDG_STATE_HOME"); d != "" {
			c.DataDir = filepath.Join(d, "agentcore")
		} else if h := getenv("HOME"); h != "" {
			c.DataDir = filepath.Join(h, ".local", "state", "agentcore")
		} else if h, err := os.UserHomeDir(); err == nil {
			c.DataDir = filepath.Join(h, ".local", "state", "agentcore")
		}
	}
	if c.Store == "" {
		if c.DataDir == "" {
			bad("-store: no default: neither -data-dir, XDG_STATE_HOME nor HOME is set; give -store sqlite:PATH, postgres://… or memory")
		}
		c.Store = "sqlite:" + filepath.Join(c.DataDir, "agentcore.db")
	}
	switch kind, rest := c.StoreKind(); kind {
	case "sqlite":
		if rest == "" {
			bad("-store %q: sqlite: needs a file path, e.g. sqlite:/var/lib/agentcore/agentcore.db", c.Store)
		}
	case "postgres", "memory":
	default:
		bad("-store %q: want sqlite:PATH, postgres://… or memory", c.StoreName())
	}
	if c.ReplicaID == "" {
		if h, err := os.Hostname(); err == nil {
			c.ReplicaID = h
		} else {
			c.ReplicaID = "agent-server"
		}
	}
	if c.LeaseTTL < time.Second {
		bad("-lease-ttl %s: must be at least 1s", c.LeaseTTL)
	}
}

// StoreKind splits Store into its driver ("sqlite", "postgres", "memory"
// or "" when unknown) and the rest (the SQLite path, or the whole URL).
func (c *Config) StoreKind() (kind, rest string) {
	switch s := c.Store; {
	case s == "memory":
		return "memory", ""
	case strings.HasPrefix(s, "sqlite:"):
		return "sqlite", strings.TrimPrefix(strings.TrimPrefix(s, "sqlite:"), "//")
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		return "postgres", s
	}
	return "", c.Store
}

// StoreName is Store without a password.
func (c *Config) StoreName() string {
	if storePassword(c.Store) == "" {
		return c.Store
	}
	return withoutStorePassword(c.Store)
}
