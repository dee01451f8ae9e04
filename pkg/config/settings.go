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
	// Usage says what the setting does.
	Usage string
	// ptr points at the value in a Config.
	ptr func(c *Config) any
}

// settings returns every setting of agent-server, in the order the table shows them.
func settings() []Setting {
	return []Setting{
		{Flag: "config", Env: "AGENTCORE_CONFIG", Usage: "YAML (or JSON) config file with the keys of this table and `profiles`",
			ptr: func(c *Config) any { return &c.file }},
		{Flag: "listen", Env: "AGENTCORE_LISTEN", File: "listen", Default: "127.0.0.1:50051",
			Usage: "host:port, or unix:PATH for a unix socket (created with mode 0600)",
			ptr:   func(c *Config) any { return &c.Listen }},
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
		{Flag: "default-profile", Env: "AGENTCORE_DEFAULT_PROFILE", File: "default_profile", Default: DefaultProfile,
			Usage: "profile used by agents whose config names no profile and no base_url",
			ptr:   func(c *Config) any { return &c.DefaultProfile }},
		{Flag: "max-sessions", Env: "AGENTCORE_MAX_SESSIONS", File: "limits.max_sessions", Default: "10000",
			Usage: "most agents at once (0: no limit); CreateAgent beyond it fails RESOURCE_EXHAUSTED",
			ptr:   func(c *Config) any { return &c.Limits.MaxSessions }},
		{Flag: "max-runs", Env: "AGENTCORE_MAX_RUNS", File: "limits.max_concurrent_runs", Default: "4096",
			Usage: "most sends running at once over all agents (0: no limit); beyond it Send fails RESOURCE_EXHAUSTED",
			ptr:   func(c *Config) any { return &c.Limits.MaxConcurrentRuns }},
		{Flag: "max-message-bytes", Env: "AGENTCORE_MAX_MESSAGE_BYTES", File: "limits.max_message_bytes", Default: "16777216",
			Usage: "largest gRPC message received or sent, in bytes",
			ptr:   func(c *Config) any { return &c.Limits.MaxMessageBytes }},
		{Flag: "max-history", Env: "AGENTCORE_MAX_HISTORY", File: "limits.max_history", Default: "100000",
			Usage: "most messages a history may hold when it is set or a send starts (0: no limit)",
			ptr:   func(c *Config) any { return &c.Limits.MaxHistory }},
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
		{Flag: "max-idle-plugins", Env: "AGENTCORE_MAX_IDLE_PLUGINS", File: "max_idle_plugins", Default: "4",
			Usage: "idle processes kept per plugin binary for reuse",
			ptr:   func(c *Config) any { return &c.MaxIdlePlugins }},
		{Flag: "min-idle-plugins", Env: "AGENTCORE_MIN_IDLE_PLUGINS", File: "min_idle_plugins", Default: "1",
			Usage: "idle processes per plugin binary started ahead, at load and after a kill, timeout or crash, so the next call is warm (0: none)",
			ptr:   func(c *Config) any { return &c.MinIdlePlugins }},
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

// set parses v into the setting's value; a list setting appends.
func (s *Setting) set(c *Config, v string) error {
	switch p := s.ptr(c).(type) {
	case *string:
		*p = v
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
	case *agentv1.Protocol:
		proto, err := ParseProtocol(v)
		if err != nil {
			return err
		}
		*p = proto
	default:
		panic(fmt.Sprintf("config: setting %s has an unsupported type %T", s.Flag, p))
	}
	return nil
}

// reset clears a list setting before a new source sets it.
func (s *Setting) reset(c *Config) {
	if p, ok := s.ptr(c).(*[]string); ok {
		*p = nil
	}
}

// get prints the setting's current value.
func (s *Setting) get(c *Config) string {
	switch p := s.ptr(c).(type) {
	case *[]string:
		return strings.Join(*p, string(os.PathListSeparator))
	case *agentv1.Protocol:
		if *p == agentv1.Protocol_PROTOCOL_UNSPECIFIED {
			return ""
		}
		return strings.ToLower(strings.TrimPrefix(p.String(), "PROTOCOL_"))
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *time.Duration:
		return p.String()
	}
	return ""
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
		fmt.Fprintf(&b, "| `-%s` | %s | %s | %s | %s |\n", s.Flag, cell(s.Env), cell(file), cell(s.Default),
			strings.ReplaceAll(s.Usage, "|", "\\|"))
	}
	b.WriteString("| - | - | `profiles.NAME.base_url`, `.model`, `.protocol`, `.api_key_env`, `.defaults` | | a named model profile; `defaults` is any agent config in its JSON form (`system`, `maxTokens`, `provider`…); an agent picks it with `config.profile` |\n")
	return b.String()
}
