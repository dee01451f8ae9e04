package config

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Setting is one configuration setting: a flag, an environment variable and
// a config file key for the same value.
type Setting struct {
	// Flag is the flag name, without dashes.
	Flag string
	// Env is the environment variable; empty when there is none.
	Env string
	// File is the dotted config file key; empty when the file cannot set it.
	File string
	// Default is the value when nothing sets it, as a flag would give it.
	Default string
	// Shown is the default as the table shows it, when it is computed at
	// load time (Default then stays empty).
	Shown string
	// Usage says what the setting does.
	Usage string
	// ptr points at the value in a Config.
	ptr func(c *Config) any
}

// settings returns every setting of agent-server, in the order the table shows them.
func settings() []Setting {
	s := append(append(baseSettings(), webhookSettings()...), vaultSettings()...)
	return append(s, Setting{Flag: "version", Usage: "print the version (from the build info) and exit",
		ptr: func(c *Config) any { return &c.Version }})
}

// baseSettings are the settings but the webhooks' and -version.
func baseSettings() []Setting {
	return []Setting{
		{Flag: "config", Env: "AGENTCORE_CONFIG", Usage: "YAML (or JSON) config file with the settings' file keys and `profiles`",
			ptr: func(c *Config) any { return &c.file }},
		{Flag: "listen", Env: "AGENTCORE_LISTEN", File: "listen", Default: "127.0.0.1:50051",
			Usage: "host:port, or unix:PATH for a unix socket (created with mode 0600)",
			ptr:   func(c *Config) any { return &c.Listen }},
		{Flag: "socket-owner", Env: "AGENTCORE_SOCKET_OWNER", File: "socket_owner",
			Usage: "USER[:GROUP]: owner of the unix socket of -listen (still mode 0600), e.g. the application's user when agent-server runs as root",
			ptr:   func(c *Config) any { return &c.SocketOwner }},
		{Flag: "tool-dir", Env: "AGENTCORE_TOOL_DIRS", File: "tool_dirs",
			Usage: "tool plugin directory; repeat the flag, or separate with ':'; later ones win by tool name",
			ptr:   func(c *Config) any { return &c.ToolDirs }},
		{Flag: "skill-dir", Env: "AGENTCORE_SKILL_DIRS", File: "skill_dirs",
			Usage: "skill directory (folders holding SKILL.md); repeatable, ':'-separated; later ones win by name",
			ptr:   func(c *Config) any { return &c.SkillDirs }},
		{Flag: "mcp", Env: "AGENTCORE_MCP", File: "mcp",
			Usage: "MCP definition file (NAME.mcp.json / .yaml) or a directory of them; repeatable, ':'-separated; scanned after the tool dirs",
			ptr:   func(c *Config) any { return &c.MCP }},
		{Flag: "model-base-url", Env: "AGENTCORE_MODEL_BASE_URL", File: "model.base_url",
			Usage: "base URL of the `default` profile's model service, e.g. https://api.openai.com/v1",
			ptr:   func(c *Config) any { return &c.defaultModel.BaseURL }},
		{Flag: "model", Env: "AGENTCORE_MODEL", File: "model.model",
			Usage: "model name of the `default` profile",
			ptr:   func(c *Config) any { return &c.defaultModel.Model }},
		{Flag: "model-protocol", Env: "AGENTCORE_MODEL_PROTOCOL", File: "model.protocol",
			Usage: "protocol of the `default` profile: chat, responses, anthropic or gemini (default chat)",
			ptr:   func(c *Config) any { return &c.defaultModel.Protocol }},
		{Flag: "model-api-key-env", Env: "AGENTCORE_MODEL_API_KEY_ENV", File: "model.api_key_env", Default: DefaultAPIKeyEnv,
			Usage: "name of the environment variable holding the `default` profile's API key (the key itself is never a flag or in the file)",
			ptr:   func(c *Config) any { return &c.defaultModel.APIKeyEnv }},
		{Flag: "model-api-key-file", Env: "AGENTCORE_MODEL_API_KEY_FILE", File: "model.api_key_file",
			Usage: "file holding the `default` profile's API key (instead of -model-api-key-env)",
			ptr:   func(c *Config) any { return &c.defaultModel.APIKeyFile }},
		{Flag: "default-profile", Env: "AGENTCORE_DEFAULT_PROFILE", File: "default_profile", Default: DefaultProfile,
			Usage: "profile used by agents whose config names no profile and no base_url",
			ptr:   func(c *Config) any { return &c.DefaultProfile }},
		{Flag: "max-sessions", Env: "AGENTCORE_MAX_SESSIONS", File: "limits.max_sessions", Default: "10000",
			Usage: "most agents at once (0: no limit); CreateAgent beyond it fails RESOURCE_EXHAUSTED",
			ptr:   func(c *Config) any { return &c.Limits.MaxSessions }},
		{Flag: "max-runs", Env: "AGENTCORE_MAX_RUNS", File: "limits.max_concurrent_runs", Default: "4096",
			Usage: "most sends running at once over all agents (0: no limit); beyond it Send fails RESOURCE_EXHAUSTED",
			ptr:   func(c *Config) any { return &c.Limits.MaxConcurrentRuns }},
		{Flag: "max-loaded-agents", Env: "AGENTCORE_MAX_LOADED_AGENTS", File: "limits.max_loaded_agents", Default: "1000",
			Usage: "most agents held in memory at once; beyond it the least recently used idle ones are dropped and loaded again from the store when next used (0: no limit)",
			ptr:   func(c *Config) any { return &c.Limits.MaxLoadedAgents }},
		{Flag: "agent-memory", Env: "AGENTCORE_AGENT_MEMORY", File: "limits.agent_memory", Default: "256MiB",
			Usage: "memory the agents held in memory may take, their histories counted (what they add to the process's RSS); beyond it the least recently used idle ones are dropped, as with -max-loaded-agents (0: no limit)",
			ptr:   func(c *Config) any { return &c.Limits.AgentMemory }},
		{Flag: "max-message-bytes", Env: "AGENTCORE_MAX_MESSAGE_BYTES", File: "limits.max_message_bytes", Default: "16777216",
			Usage: "largest gRPC message received or sent, in bytes",
			ptr:   func(c *Config) any { return &c.Limits.MaxMessageBytes }},
		{Flag: "max-history", Env: "AGENTCORE_MAX_HISTORY", File: "limits.max_history", Default: "100000",
			Usage: "most messages a history may hold when it is set or a send starts (0: no limit)",
			ptr:   func(c *Config) any { return &c.Limits.MaxHistory }},
		{Flag: "max-tool-output", Env: "AGENTCORE_MAX_TOOL_OUTPUT", File: "limits.max_tool_output", Default: "32000",
			Usage: "characters of text a tool result keeps, cut from the middle; agents may ask for less (config.max_tool_output), not more (0: no limit)",
			ptr:   func(c *Config) any { return &c.Limits.MaxToolOutput }},
		{Flag: "max-tool-result-bytes", Env: "AGENTCORE_MAX_TOOL_RESULT_BYTES", File: "limits.max_tool_result_bytes", Default: "4MiB",
			Usage: "bytes one tool result may add to a history, media included: over it, files are left out and text is cut, with a note (the default is lowered to half of a smaller -max-message-bytes)",
			ptr:   func(c *Config) any { return &c.Limits.MaxToolResultBytes }},
		{Flag: "max-live-output", Env: "AGENTCORE_MAX_LIVE_OUTPUT", File: "limits.max_live_output", Default: "4MiB",
			Usage: "bytes of live output (tool_output events) one tool call streams to clients and keeps in the event log; the rest is left out, counted by one tool_output_capped event, and the call runs on. Agents may ask for less (config.max_live_output), not more (0: no limit)",
			ptr:   func(c *Config) any { return &c.Limits.MaxLiveOutput }},
		{Flag: "live-output-stop", Env: "AGENTCORE_LIVE_OUTPUT_STOP", File: "limits.live_output_stop", Default: "false",
			Usage: "stop a tool call whose live output goes over -max-live-output (its result says so) instead of letting it run on",
			ptr:   func(c *Config) any { return &c.Limits.LiveOutputStop }},
		{Flag: "retry-max-elapsed", Env: "AGENTCORE_RETRY_MAX_ELAPSED", File: "limits.retry_max_elapsed", Default: "3m",
			Usage: "how long a failing model request is retried before the send fails; agents may ask for less (config.retry_max_elapsed), not more",
			ptr:   func(c *Config) any { return &c.Limits.RetryMaxElapsed }},
		{Flag: "retry-max-delay", Env: "AGENTCORE_RETRY_MAX_DELAY", File: "limits.retry_max_delay", Default: "30s",
			Usage: "longest wait between two attempts of a model request, Retry-After included; agents may ask for less, not more",
			ptr:   func(c *Config) any { return &c.Limits.RetryMaxDelay }},
		{Flag: "retry-unreachable", Env: "AGENTCORE_RETRY_UNREACHABLE", File: "limits.retry_unreachable", Default: "5s",
			Usage: "how long a model request that cannot reach its service (connection refused, DNS failure, TLS handshake failure) is retried before the service has answered in its send (0: fail at the first attempt); later in a send such failures are retried within -retry-max-elapsed",
			ptr:   func(c *Config) any { return &c.Limits.RetryUnreachable }},
		{Flag: "max-run-depth", Env: "AGENTCORE_MAX_RUN_DEPTH", File: "limits.max_run_depth", Default: "3",
			Usage: "how deep agents calling agents may go: a root run is at depth 0, a run it starts by calling an agent at 1; a call that would go deeper fails (0: no child runs)",
			ptr:   func(c *Config) any { return &c.Limits.MaxRunDepth }},
		{Flag: "max-child-runs", Env: "AGENTCORE_MAX_CHILD_RUNS", File: "limits.max_child_runs", Default: "8",
			Usage: "child runs one run may have running at once (agents called as tools); a call beyond it fails (0: no limit)",
			ptr:   func(c *Config) any { return &c.Limits.MaxChildRuns }},
		{Flag: "child-queue-wait", Env: "AGENTCORE_CHILD_QUEUE_WAIT", File: "limits.child_queue_wait", Default: "1m",
			Usage: "how long an agent called as a tool (busy policy queue) waits for the agent's run in progress to end before the call fails: two run trees calling each other's agents would wait for each other forever (0: no bound)",
			ptr:   func(c *Config) any { return &c.Limits.ChildQueueWait }},
		{Flag: "tls-cert", Env: "AGENTCORE_TLS_CERT", File: "tls.cert",
			Usage: "PEM certificate file: serve TLS (with -tls-key)",
			ptr:   func(c *Config) any { return &c.TLS.CertFile }},
		{Flag: "tls-key", Env: "AGENTCORE_TLS_KEY", File: "tls.key",
			Usage: "PEM private key file of -tls-cert",
			ptr:   func(c *Config) any { return &c.TLS.KeyFile }},
		{Flag: "tls-client-ca", Env: "AGENTCORE_TLS_CLIENT_CA", File: "tls.client_ca",
			Usage: "PEM CA file: require client certificates it signed (mutual TLS)",
			ptr:   func(c *Config) any { return &c.TLS.ClientCAFile }},
		{Flag: "auth-token-env", Env: "AGENTCORE_AUTH_TOKEN_ENV", File: "auth.token_env", Default: "AGENTCORE_AUTH_TOKEN",
			Usage: "name of the environment variable holding the bearer token; when it is set, every AgentService call needs `authorization: Bearer TOKEN`",
			ptr:   func(c *Config) any { return &c.authTokenEnv }},
		{Flag: "auth-token-file", Env: "AGENTCORE_AUTH_TOKEN_FILE", File: "auth.token_file",
			Usage: "file holding the bearer token (wins over -auth-token-env)",
			ptr:   func(c *Config) any { return &c.authTokenFile }},
		{Flag: "auth-tokens-file", Env: "AGENTCORE_AUTH_TOKENS_FILE", File: "auth.tokens_file",
			Usage: "YAML (or JSON) file of tenants: their tokens (sha256:HEX or plain), client certificates, limits, profiles and admin flag; read again on SIGHUP",
			ptr:   func(c *Config) any { return &c.AuthTokensFile }},
		{Flag: "reflection", Env: "AGENTCORE_REFLECTION", File: "reflection",
			Usage: "gRPC server reflection: on, off or auth (only for callers with a valid token or certificate); default: on for loopback and unix sockets, auth elsewhere",
			ptr:   func(c *Config) any { return &c.Reflection }},
		{Flag: "insecure", Env: "AGENTCORE_INSECURE", File: "insecure", Default: "false",
			Usage: "allow serving on a non-loopback address without TLS and without any token",
			ptr:   func(c *Config) any { return &c.Insecure }},
		{Flag: "plugin-user", Env: "AGENTCORE_PLUGIN_USER", File: "plugin_user",
			Usage: "USER[:GROUP]: when agent-server runs as root, plugin processes run as this user (names or numeric ids)",
			ptr:   func(c *Config) any { return &c.PluginUser }},
		{Flag: "log-format", Env: "AGENTCORE_LOG_FORMAT", File: "log.format", Default: "text",
			Usage: "log format: text (hclog) or json",
			ptr:   func(c *Config) any { return &c.LogFormat }},
		{Flag: "log-level", Env: "AGENTCORE_LOG_LEVEL", File: "log.level", Default: "info",
			Usage: "log level: trace, debug, info, warn or error",
			ptr:   func(c *Config) any { return &c.LogLevel }},
		{Flag: "shutdown-grace", Env: "AGENTCORE_SHUTDOWN_GRACE", File: "shutdown_grace", Default: "10s",
			Usage: "on SIGTERM/SIGINT, how long running sends may go on before they are stopped",
			ptr:   func(c *Config) any { return &c.ShutdownGrace }},
		{Flag: "keepalive-time", Env: "AGENTCORE_KEEPALIVE_TIME", File: "keepalive.time", Default: "30s",
			Usage: "ping a client after this long without activity",
			ptr:   func(c *Config) any { return &c.KeepaliveTime }},
		{Flag: "keepalive-timeout", Env: "AGENTCORE_KEEPALIVE_TIMEOUT", File: "keepalive.timeout", Default: "10s",
			Usage: "close the connection when a ping is not answered within this",
			ptr:   func(c *Config) any { return &c.KeepaliveTimeout }},
		{Flag: "mcp-listen", Env: "AGENTCORE_MCP_LISTEN", File: "mcp_listen",
			Usage: "host:port or unix:PATH: also serve the hosted tools over MCP streamable HTTP at /mcp (same TLS, tokens and tenants as the gRPC API)",
			ptr:   func(c *Config) any { return &c.MCPListen }},
		{Flag: "a2a-listen", Env: "AGENTCORE_A2A_LISTEN", File: "a2a_listen",
			Usage: "host:port or unix:PATH: also serve the agents over A2A (JSON-RPC) at /a2a/AGENT_ID, cards at /a2a/AGENT_ID/.well-known/agent-card.json (same TLS, tokens and tenants as the gRPC API); empty: no A2A",
			ptr:   func(c *Config) any { return &c.A2AListen }},
		{Flag: "http-listen", Env: "AGENTCORE_HTTP_LISTEN", File: "http.listen",
			Usage: "host:port (or unix:PATH) for the HTTP/JSON gateway, its OpenAPI document and the web console; empty: no HTTP. Same TLS, tokens and tenants as gRPC",
			ptr:   func(c *Config) any { return &c.HTTP.Listen }},
		{Flag: "http-cors-origin", Env: "AGENTCORE_HTTP_CORS_ORIGINS", File: "http.cors_origins",
			Usage: "origin (https://app.example.com, or *) whose pages may call the HTTP API; repeatable, ','-separated; none: no cross-origin calls",
			ptr:   func(c *Config) any { return (*commaList)(&c.HTTP.CORSOrigins) }},
		{Flag: "max-idle-plugins", Env: "AGENTCORE_MAX_IDLE_PLUGINS", File: "max_idle_plugins", Default: "4",
			Usage: "idle processes kept per plugin binary for reuse",
			ptr:   func(c *Config) any { return &c.MaxIdlePlugins }},
		{Flag: "min-idle-plugins", Env: "AGENTCORE_MIN_IDLE_PLUGINS", File: "min_idle_plugins", Default: "1",
			Usage: "idle processes per plugin binary started ahead, at load and after a kill, timeout or crash, so the next call is warm (0: none); a call made before the replacement is up waits for it",
			ptr:   func(c *Config) any { return &c.MinIdlePlugins }},
		{Flag: "plugin-gomaxprocs", Env: "AGENTCORE_PLUGIN_GOMAXPROCS", File: "plugin_gomaxprocs", Default: "1",
			Usage: "GOMAXPROCS of plugin processes: a process serves one call at a time, and one spares a Go plugin the runtime's hand-offs between cores on each call (0: as agent-server's environment has it, else one per CPU)",
			ptr:   func(c *Config) any { return &c.PluginGOMAXPROCS }},
		{Flag: "skip-bad-plugins", Env: "AGENTCORE_SKIP_BAD_PLUGINS", File: "skip_bad_plugins", Default: "false",
			Usage: "log a warning for a tool file that is no working plugin and go on, instead of failing the start",
			ptr:   func(c *Config) any { return &c.SkipBadPlugins }},
		{Flag: "tool-limits", Env: "AGENTCORE_TOOL_LIMITS", File: "tool_limits.mechanism", Default: "auto",
			Usage: "how tool limits are enforced: auto (cgroup v2, else cgroup v1, else rlimits; logged at start), cgroup2, cgroup1, rlimit or off",
			ptr:   func(c *Config) any { return &c.ToolLimits.Mechanism }},
		{Flag: "tool-memory", Env: "AGENTCORE_TOOL_MEMORY", File: "tool_limits.memory", Default: "1GiB",
			Usage: "memory of a tool call's whole process tree when the tool asks for none (0: no limit); over it the call is killed",
			ptr:   func(c *Config) any { return &c.ToolLimits.Memory }},
		{Flag: "tool-memory-max", Env: "AGENTCORE_TOOL_MEMORY_MAX", File: "tool_limits.memory_max", Default: "4GiB",
			Usage: "most memory a tool may ask for (0: no cap)",
			ptr:   func(c *Config) any { return &c.ToolLimits.MemoryMax }},
		{Flag: "tool-processes", Env: "AGENTCORE_TOOL_PROCESSES", File: "tool_limits.processes", Default: "1024",
			Usage: "processes and threads of a tool call's tree when the tool asks for none (0: no limit; cgroups only)",
			ptr:   func(c *Config) any { return &c.ToolLimits.Processes }},
		{Flag: "tool-processes-max", Env: "AGENTCORE_TOOL_PROCESSES_MAX", File: "tool_limits.processes_max", Default: "16384",
			Usage: "most processes a tool may ask for (0: no cap)",
			ptr:   func(c *Config) any { return &c.ToolLimits.ProcessesMax }},
		{Flag: "tool-cpu-time", Env: "AGENTCORE_TOOL_CPU_TIME", File: "tool_limits.cpu_time", Default: "0s",
			Usage: "CPU time (user + system) of one tool call when the tool asks for none (0: no limit)",
			ptr:   func(c *Config) any { return &c.ToolLimits.CPUTime }},
		{Flag: "tool-cpu-time-max", Env: "AGENTCORE_TOOL_CPU_TIME_MAX", File: "tool_limits.cpu_time_max", Default: "0s",
			Usage: "most CPU time a tool may ask for (0: no cap)",
			ptr:   func(c *Config) any { return &c.ToolLimits.CPUTimeMax }},
		{Flag: "tool-open-files", Env: "AGENTCORE_TOOL_OPEN_FILES", File: "tool_limits.open_files", Default: "0",
			Usage: "open files per tool process when the tool asks for none (0: agent-server's own limit)",
			ptr:   func(c *Config) any { return &c.ToolLimits.OpenFiles }},
		{Flag: "tool-open-files-max", Env: "AGENTCORE_TOOL_OPEN_FILES_MAX", File: "tool_limits.open_files_max", Default: "0",
			Usage: "most open files a tool may ask for (0: no cap)",
			ptr:   func(c *Config) any { return &c.ToolLimits.OpenFilesMax }},
		{Flag: "store", Env: "AGENTCORE_STORE", File: "store", Shown: "sqlite:<data-dir>/agentcore.db",
			Usage: "where agents, histories, runs and events are kept: sqlite:PATH (one server), postgres://… (replicas; the password is best in PGPASSWORD), or memory (nothing kept)",
			ptr:   func(c *Config) any { return &c.Store }},
		{Flag: "data-dir", Env: "AGENTCORE_DATA_DIR", File: "data_dir", Shown: "$XDG_STATE_HOME/agentcore, else ~/.local/state/agentcore",
			Usage: "folder of the default SQLite store",
			ptr:   func(c *Config) any { return &c.DataDir }},
		{Flag: "event-retention", Env: "AGENTCORE_EVENT_RETENTION", File: "event_retention", Default: "24h",
			Usage: "how long the events of ended runs are kept for Attach (runs themselves stay)",
			ptr:   func(c *Config) any { return &c.EventRetention }},
		{Flag: "event-retention-run-bytes", Env: "AGENTCORE_EVENT_RETENTION_RUN_BYTES", File: "event_retention_run_bytes", Default: "64MiB",
			Usage: "the events of an ended run that hold more than this are deleted at the next sweep, whatever their age (GetRun's event_bytes; 0: no bound)",
			ptr:   func(c *Config) any { return &c.EventRetentionRunBytes }},
		{Flag: "event-retention-bytes", Env: "AGENTCORE_EVENT_RETENTION_BYTES", File: "event_retention_bytes", Default: "1GiB",
			Usage: "the events of all runs together: over it, those of the runs that ended first are deleted, whatever their age (0: no bound)",
			ptr:   func(c *Config) any { return &c.EventRetentionBytes }},
		{Flag: "lease-ttl", Env: "AGENTCORE_LEASE_TTL", File: "lease_ttl", Default: "10s",
			Usage: "a running agent's lease, renewed by its replica; once it expires (the replica died) another replica ends the run as interrupted, or resumes it (on_interrupt resume)",
			ptr:   func(c *Config) any { return &c.LeaseTTL }},
		{Flag: "on-interrupt", Env: "AGENTCORE_ON_INTERRUPT", File: "on_interrupt", Default: "fail",
			Usage: "what happens to a run cut off by a crash when its config says nothing (on_interrupt): fail (it ends interrupted) or resume (this server at its restart, or another replica once the lease expires, finishes it)",
			ptr:   func(c *Config) any { return &c.OnInterrupt }},
		{Flag: "resume-attempts", Env: "AGENTCORE_RESUME_ATTEMPTS", File: "resume_attempts", Default: "3",
			Usage: "how many times a run is resumed after a crash; cut off once more, it ends failed (RESUME_LIMIT)",
			ptr:   func(c *Config) any { return &c.ResumeAttempts }},
		{Flag: "permission-timeout", Env: "AGENTCORE_PERMISSION_TIMEOUT", File: "permission_timeout", Default: "10m",
			Usage: "how long a permission request waits for an answer before the call is denied",
			ptr:   func(c *Config) any { return &c.PermissionTimeout }},
		{Flag: "replica-id", Env: "AGENTCORE_REPLICA_ID", File: "replica_id", Shown: "the host name",
			Usage: "this server's name in the store (run owner); keep it stable across restarts so that its cut-off runs are recovered at once",
			ptr:   func(c *Config) any { return &c.ReplicaID }},
		{Flag: "metrics-listen", Env: "AGENTCORE_METRICS_LISTEN", File: "telemetry.metrics_listen",
			Usage: "host:port of an HTTP listener serving Prometheus /metrics (off when empty); tracing is set with the OTEL_* variables",
			ptr:   func(c *Config) any { return &c.MetricsListen }},
		{Flag: "pprof", Env: "AGENTCORE_PPROF", File: "telemetry.pprof", Default: "false",
			Usage: "also serve the Go runtime profiles at /debug/pprof/ on -metrics-listen",
			ptr:   func(c *Config) any { return &c.Pprof }},
		{Flag: "trace-content", Env: "AGENTCORE_TRACE_CONTENT", File: "telemetry.trace_content", Default: "false",
			Usage: "put message content (prompts, answers, tool arguments and results) in trace spans",
			ptr:   func(c *Config) any { return &c.TraceContent }},
		{Flag: "render-labels", Env: "AGENTCORE_RENDER_LABELS", File: "render_labels", Default: "english",
			Usage: "labels of the history GetHistory renders as text when a request names none: english ([call read …], [read result]) or original (agent-core's: [调用 read …], [read 返回])",
			ptr:   func(c *Config) any { return &c.RenderLabels }},
	}
}

func settingByFile(key string) *Setting {
	all := settings()
	for i := range all {
		if all[i].File == key {
			return &all[i]
		}
	}
	return nil
}

// commaList is a list setting whose values may hold ':' (URLs): its
// elements are separated by commas instead of the path list separator.
type commaList []string

// set parses v into the setting's value; a list setting appends.
func (s *Setting) set(c *Config, v string) error {
	switch p := s.ptr(c).(type) {
	case *string:
		*p = v
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not a whole number", v)
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not a duration such as 10s or 1m30s", v)
		}
		*p = d
	case *[]string:
		for _, e := range strings.Split(v, string(os.PathListSeparator)) {
			if e = strings.TrimSpace(e); e != "" {
				*p = append(*p, e)
			}
		}
	case *commaList:
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				*p = append(*p, e)
			}
		}
	case *agentv1.Protocol:
		proto, err := ParseProtocol(v)
		if err != nil {
			return err
		}
		*p = proto
	case *Bytes:
		b, err := ParseBytes(v)
		if err != nil {
			return err
		}
		*p = b
	default:
		panic(fmt.Sprintf("config: setting %s has an unsupported type %T", s.Flag, p))
	}
	return nil
}

// reset clears a list setting before a new source sets it.
func (s *Setting) reset(c *Config) {
	switch p := s.ptr(c).(type) {
	case *[]string:
		*p = nil
	case *commaList:
		*p = nil
	}
}

// get prints the setting's current value.
func (s *Setting) get(c *Config) string {
	switch p := s.ptr(c).(type) {
	case *[]string:
		return strings.Join(*p, string(os.PathListSeparator))
	case *commaList:
		return strings.Join(*p, ",")
	case *agentv1.Protocol:
		if *p == agentv1.Protocol_PROTOCOL_UNSPECIFIED {
			return ""
		}
		return strings.ToLower(strings.TrimPrefix(p.String(), "PROTOCOL_"))
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		return p.String()
	case *Bytes:
		return p.String()
	}
	return ""
}

// Help returns what -help prints: every setting as plain text, its flag
// and default, then what it does, its environment variable and config file
// key.
func Help() string {
	var b strings.Builder
	b.WriteString("Usage: agent-server [flags]\n\n" +
		"Every setting is a flag, an environment variable and a config file key;\n" +
		"a flag wins over the environment, which wins over the file.\n" +
		"Tracing is set with the standard OTEL_* variables (docs/observability.md).\n\n")
	for _, s := range settings() {
		if s.Default != "" {
			fmt.Fprintf(&b, "  -%s (default %s)\n", s.Flag, s.Default)
		} else {
			fmt.Fprintf(&b, "  -%s\n", s.Flag)
		}
		for _, line := range wrap(s.Usage, 70) {
			fmt.Fprintf(&b, "        %s\n", line)
		}
		var where []string
		if s.Env != "" {
			where = append(where, "env "+s.Env)
		}
		if s.File != "" {
			where = append(where, "file key "+s.File)
		}
		if line := strings.Join(where, ", "); len(line) > 72 {
			for _, w := range where {
				fmt.Fprintf(&b, "        %s\n", w)
			}
		} else if line != "" {
			fmt.Fprintf(&b, "        %s\n", line)
		}
	}
	b.WriteString("\nModel profiles are set in the config file only: profiles.NAME.base_url, .model,\n" +
		".protocol, .api_key_env, .api_key_file, .allowed_base_urls, .defaults, .prices,\n" +
		".fallbacks, .fallback_on;\n" +
		"an agent picks one with config.profile. A profile's key is sent only to its\n" +
		"base_url and its allowed_base_urls.\n" +
		"Limits per plugin or tool are set in the config file only: plugins.NAME.memory,\n" +
		".processes, .cpu_time, .open_files (NAME: a plugin's file or a tool's name).\n")
	return b.String()
}

// wrap splits text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(strings.ReplaceAll(text, "`", "")) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Table returns the settings as a Markdown table: flag, environment
// variable, config file key, default, meaning.
func Table() string {
	var b strings.Builder
	b.WriteString("| flag | environment variable | config file key | default | meaning |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	cell := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, s := range settings() {
		file := s.File
		if file == "" && s.Flag != "config" {
			file = "-"
		}
		def := cell(s.Default)
		if s.Shown != "" {
			def = cell(s.Shown)
		}
		fmt.Fprintf(&b, "| `-%s` | %s | %s | %s | %s |\n", s.Flag, cell(s.Env), cell(file), def,
			strings.ReplaceAll(s.Usage, "|", "\\|"))
	}
	b.WriteString("| - | - | `profiles.NAME.base_url`, `.model`, `.protocol`, `.api_key_env`, `.api_key_file`, `.allowed_base_urls`, `.defaults`, `.prices`, `.fallbacks`, `.fallback_on` | | a named model profile; `defaults` is any agent config in its JSON form (`system`, `maxTokens`, `provider`…); an agent picks it with `config.profile`; its key is sent only to `base_url` and the `allowed_base_urls`; `prices` are `{MODEL: {input: n, output: n}}` per million tokens (`*`: its other models), for budgets' cost; `fallbacks` are profile names a failing round falls back on, `fallback_on` the error kinds that do (default server, limit, timeout, network) |\n")
	b.WriteString("| - | - | `plugins.NAME.memory`, `.processes`, `.cpu_time`, `.open_files` | | limits of a plugin's tools (NAME: its file name, e.g. `shell`) or of one tool (NAME: the tool's name), whatever they ask for and above the maximums; 0 or `none` lifts a limit |\n")
	return b.String()
}
