// Package config holds agent-server's configuration: where it listens, where
// its tools, skills and MCP definitions are, its model profiles, limits, TLS,
// authentication and logging.
//
// Every setting is one row of a table: a command-line flag, an environment
// variable and a key of the optional YAML (or JSON) config file. A flag wins
// over the environment, which wins over the file, which wins over the default.
// Table prints the rows as the Markdown table docs/configuration.md shows.
//
// Secrets never sit in the file or on the command line: a profile names the
// environment variable or the file holding its API key, and the bearer token
// comes from an environment variable or a file. The one exception, a
// password in the store's URL, SecretArgs takes out of the command line.
package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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
	// Webhooks configure the webhooks runs call when they end.
	Webhooks Webhooks
	// Vault configures the token vault and the OAuth connect flow.
	Vault Vault
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
	// RenderLabels are the labels of GetHistory's rendered text when a
	// request names none: "english" or "original" (agent-core's, in Chinese).
	RenderLabels string
	// Version asks to print the version and exit (-version).
	Version bool
	// MCPListen, when set, is host:port or unix:PATH where the hosted tools
	// are served over MCP streamable HTTP (path /mcp).
	MCPListen string
	// A2AListen, when set, is host:port or unix:PATH where the agents are
	// served over A2A (pkg/a2a, path /a2a/AGENT_ID).
	A2AListen string
	// Store is where agents, histories, runs and events are kept:
	// "sqlite:PATH", a postgres:// URL or "memory". Load fills in the
	// default, sqlite in DataDir.
	Store string
	// DataDir holds the default SQLite store.
	DataDir string
	// EventRetention is how long the events of ended runs are kept.
	EventRetention time.Duration
	// EventRetentionRunBytes: the events of an ended run that hold more
	// are deleted at the next sweep (0: no bound).
	EventRetentionRunBytes Bytes
	// EventRetentionBytes bounds the events of all runs: over it, those of
	// the runs that ended first are deleted (0: no bound).
	EventRetentionBytes Bytes
	// LeaseTTL is how long a running agent's lease lasts unless renewed.
	LeaseTTL time.Duration
	// PermissionTimeout is how long a permission request waits for an answer.
	PermissionTimeout time.Duration
	// OnInterrupt is what happens to a run cut off by a crash when its
	// config says nothing: "fail" or "resume".
	OnInterrupt string
	// ResumeAttempts bounds how many times a run is resumed after a crash.
	ResumeAttempts int
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
	// origin says where a setting's value came from, by flag name: its
	// flag, its variable or its config file key, for messages.
	origin map[string]string
	// otlpSecrets are the header values of every OTLP headers variable.
	otlpSecrets []string
	// storeEnvSecret is set when AGENTCORE_STORE holds a password.
	storeEnvSecret bool
}

// Limits bound what clients may use. Zero means no limit.
type Limits struct {
	// MaxSessions is how many agents may exist at once.
	MaxSessions int
	// MaxLoadedAgents is how many agents may be held in memory at once; the
	// least recently used idle ones are dropped beyond it (the store holds them).
	MaxLoadedAgents int
	// AgentMemory is the memory the agents held in memory may take, as
	// their footprints estimate it; the least recently used idle ones are
	// dropped beyond it.
	AgentMemory Bytes
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
	// MaxLiveOutput is the most bytes of live output one tool call streams
	// to clients and keeps in the event log; a client may ask for less.
	MaxLiveOutput Bytes
	// LiveOutputStop stops a tool call whose live output goes over
	// MaxLiveOutput, instead of letting it run on unseen.
	LiveOutputStop bool
	// RetryMaxElapsed is how long a failing model request is retried; a
	// client may ask for less, not more.
	RetryMaxElapsed time.Duration
	// RetryMaxDelay caps one wait between retries; a client may ask for less.
	RetryMaxDelay time.Duration
	// RetryUnreachable is how long a model request that cannot reach its
	// service at all (connection refused, DNS failure, TLS handshake
	// failure) is retried when the service has not answered yet in its
	// send; 0 fails it at its first attempt. Later in a send such failures
	// are retried within RetryMaxElapsed, as other network errors are.
	RetryUnreachable time.Duration
	// MaxRunDepth is how deep a run tree may grow: a root run is at depth
	// 0, its child runs (agents called as tools) at 1; a call that would
	// start a run deeper fails.
	MaxRunDepth int
	// MaxChildRuns is how many child runs one run may have running at once.
	MaxChildRuns int
	// ChildQueueWait bounds how long a child run waits for its agent's run
	// in progress to end (0: no bound).
	ChildQueueWait time.Duration
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

// String prints the config without its secrets.
func (c Config) String() string {
	return fmt.Sprintf("listen=%s http_listen=%s tool_dirs=%v skill_dirs=%v mcp=%v profiles=%v default_profile=%s auth=%t tenants=%s tls=%t store=%s",
		c.Listen, c.HTTP.Listen, c.ToolDirs, c.SkillDirs, c.MCP, c.ProfileNames(), c.DefaultProfile, c.AuthToken != "", c.AuthTokensFile, c.TLS.CertFile != "", c.StoreName())
}

// GoString is String.
func (c Config) GoString() string { return c.String() }
