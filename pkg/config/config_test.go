package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const fileBody = `
listen: 0.0.0.0:6000
tool_dirs: [/file/tools]
limits:
  max_sessions: 7
log:
  format: json
shutdown_grace: 3s
profiles:
  cheap:
    base_url: https://cheap.example/v1
    model: small
    protocol: anthropic
    api_key_env: CHEAP_KEY
    defaults:
      system: be brief
      maxTokens: 1000
      provider: {temperature: 0.2}
    prices:
      small: {input: 0.5, output: 1.5}
      "*": {input: 3, output: 15}
`

// trustBody is a config file with the trust boundary's settings.
const trustBody = `
auth: {tokens_file: /etc/agentcore/tenants.yaml}
profiles:
  main:
    base_url: https://api.example/v1
    api_key_file: KEYFILE
    allowed_base_urls: [https://eu.example/v1, https://us.example/v1]
`

func TestLoadPrecedence(t *testing.T) {
	file := writeFile(t, "agent-server.yaml", fileBody)
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c *Config)
	}{
		{"defaults", nil, nil, func(t *testing.T, c *Config) {
			if c.Listen != "127.0.0.1:50051" || c.LogFormat != "text" || c.LogLevel != "info" || c.ShutdownGrace != 10*time.Second {
				t.Errorf("defaults: %v", c)
			}
			if len(c.Profiles) != 0 || c.AuthToken != "" {
				t.Errorf("no profile and no token expected: %v", c)
			}
			if c.Limits.MaxLoadedAgents != 1000 || c.Limits.AgentMemory != 256<<20 {
				t.Errorf("loaded agents' bounds: %d, %v", c.Limits.MaxLoadedAgents, c.Limits.AgentMemory)
			}
		}},
		{"loaded agents' bounds", []string{"-max-loaded-agents", "0"}, map[string]string{"AGENTCORE_AGENT_MEMORY": "64MiB"}, func(t *testing.T, c *Config) {
			if c.Limits.MaxLoadedAgents != 0 || c.Limits.AgentMemory != 64<<20 {
				t.Errorf("loaded agents' bounds: %d, %v", c.Limits.MaxLoadedAgents, c.Limits.AgentMemory)
			}
		}},
		{"file", []string{"-config", file}, map[string]string{"CHEAP_KEY": "sk-cheap"}, func(t *testing.T, c *Config) {
			if c.Listen != "0.0.0.0:6000" || c.Limits.MaxSessions != 7 || c.LogFormat != "json" || c.ShutdownGrace != 3*time.Second {
				t.Errorf("file values not applied: %v %+v", c, c.Limits)
			}
			if fmt.Sprint(c.ToolDirs) != "[/file/tools]" {
				t.Errorf("tool dirs %v", c.ToolDirs)
			}
			p, ok := c.Profiles["cheap"]
			if !ok || p.APIKey != "sk-cheap" || p.Protocol != agentv1.Protocol_PROTOCOL_ANTHROPIC {
				t.Fatalf("profile: %v", p)
			}
			ac := p.AgentConfig()
			if ac.GetSystem() != "be brief" || ac.GetMaxTokens() != 1000 || ac.GetProvider().GetTemperature() != 0.2 ||
				ac.GetBaseUrl() != "https://cheap.example/v1" || ac.GetApiKey() != "sk-cheap" || ac.GetProfile() != "cheap" {
				t.Errorf("agent config of the profile: %v", ac)
			}
			if pr, ok := p.Price("small"); !ok || pr != (Price{Input: 0.5, Output: 1.5}) {
				t.Errorf("price of small: %v %v", pr, ok)
			}
			if pr, ok := p.Price("large"); !ok || pr.Output != 15 {
				t.Errorf("price of another model: %v %v", pr, ok)
			}
			if c.Limits.MaxRunDepth != 3 || c.Limits.MaxChildRuns != 8 {
				t.Errorf("run tree bounds %d, %d", c.Limits.MaxRunDepth, c.Limits.MaxChildRuns)
			}
		}},
		{"env over file", []string{"-config", file}, map[string]string{"AGENTCORE_LISTEN": "unix:/tmp/a.sock", "AGENTCORE_TOOL_DIRS": "/e1:/e2"}, func(t *testing.T, c *Config) {
			if c.Listen != "unix:/tmp/a.sock" || fmt.Sprint(c.ToolDirs) != "[/e1 /e2]" {
				t.Errorf("env did not win: %v", c)
			}
			if p, ok := c.UnixSocket(); !ok || p != "/tmp/a.sock" {
				t.Errorf("unix socket %q %v", p, ok)
			}
		}},
		{"flag over env", []string{"-config", file, "-tool-dir", "/f1", "-tool-dir", "/f2", "-listen", "127.0.0.1:1"},
			map[string]string{"AGENTCORE_LISTEN": "unix:/tmp/a.sock", "AGENTCORE_TOOL_DIRS": "/e1"}, func(t *testing.T, c *Config) {
				if c.Listen != "127.0.0.1:1" || fmt.Sprint(c.ToolDirs) != "[/f1 /f2]" {
					t.Errorf("flags did not win: %v", c)
				}
			}},
		{"config from env", nil, map[string]string{"AGENTCORE_CONFIG": file}, func(t *testing.T, c *Config) {
			if c.Listen != "0.0.0.0:6000" {
				t.Errorf("AGENTCORE_CONFIG not read: %v", c)
			}
		}},
		{"default profile from env", nil, map[string]string{
			"AGENTCORE_MODEL_BASE_URL": "http://127.0.0.1:9/v1", "AGENTCORE_MODEL": "m", "AGENTCORE_MODEL_PROTOCOL": "responses",
			"AGENTCORE_MODEL_API_KEY": "sk-secret", "AGENTCORE_AUTH_TOKEN": "tok"}, func(t *testing.T, c *Config) {
			p, ok := c.Profile("")
			if !ok || p.BaseURL != "http://127.0.0.1:9/v1" || p.Model != "m" || p.APIKey != "sk-secret" ||
				p.Protocol != agentv1.Protocol_PROTOCOL_RESPONSES {
				t.Fatalf("default profile: %v", p)
			}
			if c.AuthToken != "tok" {
				t.Errorf("auth token not read")
			}
			for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", *c), fmt.Sprintf("%#v", *p), fmt.Sprint(*p)} {
				if strings.Contains(s, "sk-secret") || strings.Contains(s, "tok,") {
					t.Errorf("a secret printed: %s", s)
				}
			}
			if got := c.Secrets(); len(got) != 2 {
				t.Errorf("secrets %d, want 2", len(got))
			}
		}},
		{"http", []string{"-http-listen", "127.0.0.1:8080", "-http-cors-origin", "https://a.example, http://localhost:3000",
			"-http-cors-origin", "*"}, nil, func(t *testing.T, c *Config) {
			if c.HTTP.Listen != "127.0.0.1:8080" || fmt.Sprint(c.HTTP.CORSOrigins) != "[https://a.example http://localhost:3000 *]" {
				t.Errorf("http settings: %+v", c.HTTP)
			}
		}},
		{"http from file and env", []string{"-config", writeFile(t, "h.yaml", "http:\n  listen: 127.0.0.1:1\n  cors_origins: [https://f.example]\n")},
			map[string]string{"AGENTCORE_HTTP_CORS_ORIGINS": "https://e.example:8443"}, func(t *testing.T, c *Config) {
				if c.HTTP.Listen != "127.0.0.1:1" || fmt.Sprint(c.HTTP.CORSOrigins) != "[https://e.example:8443]" {
					t.Errorf("http settings: %+v", c.HTTP)
				}
			}},
		{"trust settings", []string{"-config", writeFile(t, "trust.yaml", strings.Replace(trustBody, "KEYFILE", writeFile(t, "key", "sk-from-file\n"), 1)),
			"-insecure", "-plugin-user", "nobody:nogroup"},
			map[string]string{"AGENTCORE_REFLECTION": "auth"}, func(t *testing.T, c *Config) {
				p := c.Profiles["main"]
				if p == nil || p.APIKey != "sk-from-file" || fmt.Sprint(p.AllowedBaseURLs) != "[https://eu.example/v1 https://us.example/v1]" {
					t.Fatalf("profile main: %v %v", p, p.AllowedBaseURLs)
				}
				if !c.Insecure || c.Reflection != "auth" || c.PluginUser != "nobody:nogroup" || c.AuthTokensFile != "/etc/agentcore/tenants.yaml" {
					t.Errorf("trust settings: %+v", c)
				}
				if got := fmt.Sprint(c.SecretEnv()); got != "[AGENTCORE_AUTH_TOKEN AGENTCORE_MODEL_API_KEY AGENTCORE_VAULT_KEY AGENTCORE_WEBHOOK_SECRET "+
					"OTEL_EXPORTER_OTLP_HEADERS OTEL_EXPORTER_OTLP_METRICS_HEADERS OTEL_EXPORTER_OTLP_TRACES_HEADERS PGPASSWORD]" {
					t.Errorf("SecretEnv %s: the default key, token, vault key and webhook secret variables, PGPASSWORD and the OTLP headers are always kept out", got)
				}
			}},
		{"fallbacks", []string{"-config", writeFile(t, "fb.yaml", "profiles:\n  main:\n    base_url: http://a.test\n    model: big\n"+
			"    fallbacks: [backup]\n    fallback_on: [server, limit]\n  backup:\n    base_url: http://b.test\n    model: small\n    protocol: anthropic\n")},
			nil, func(t *testing.T, c *Config) {
				f := c.Profiles["main"].AgentConfig().GetFallback()
				if len(f.GetModels()) != 1 || f.GetModels()[0].GetProfile() != "backup" ||
					fmt.Sprint(f.GetOn()) != "[ERROR_KIND_SERVER ERROR_KIND_LIMIT]" {
					t.Errorf("main's fallback = %v", f)
				}
				if c.Profiles["backup"].AgentConfig().GetFallback() != nil {
					t.Error("backup got a fallback")
				}
			}},
		{"key from another variable", []string{"-model", "m", "-model-base-url", "http://x", "-model-api-key-env", "MY_KEY"},
			map[string]string{"MY_KEY": "k2"}, func(t *testing.T, c *Config) {
				if p, _ := c.Profile(""); p == nil || p.APIKey != "k2" {
					t.Errorf("key from MY_KEY: %v", p)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(tt.args, env(tt.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	bothKeys := writeFile(t, "e.yaml", "profiles:\n  p:\n    api_key_env: K\n    api_key_file: /k\n")
	badAllowed := writeFile(t, "f.yaml", "profiles:\n  p:\n    allowed_base_urls: [\"ftp://x\"]\n")
	keyInFile := writeFile(t, "a.yaml", "profiles:\n  p:\n    api_key: sk-x\n")
	keyInDefaults := writeFile(t, "b.yaml", "profiles:\n  p:\n    defaults: {apiKey: sk-x}\n")
	unknownKey := writeFile(t, "c.yaml", "listn: x\n")
	badDefaults := writeFile(t, "d.yaml", "profiles:\n  p:\n    defaults: {temperature: 2}\n")
	tokenFile := writeFile(t, "empty", "\n")
	badPrice := writeFile(t, "g.yaml", "profiles:\n  p:\n    prices: {m: {input: 1, outptu: 2}}\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad listen", []string{"-listen", "nowhere"}, nil, `listen "nowhere": want host:port or unix:PATH`},
		{"empty unix socket path", []string{"-listen", "unix:"}, nil, `listen "unix:": the unix socket path is empty`},
		{"bad mcp listen", []string{"-mcp-listen", "nowhere"}, nil, `mcp-listen "nowhere": want host:port or unix:PATH`},
		{"empty mcp unix socket path", []string{"-mcp-listen", "unix://"}, nil, `mcp-listen "unix://": the unix socket path is empty`},
		{"bad number", []string{"-max-sessions", "many"}, nil, "max-sessions"},
		{"negative", []string{"-max-runs", "-1"}, nil, "max-runs"},
		{"negative loaded agents", []string{"-max-loaded-agents", "-1"}, nil, "max-loaded-agents"},
		{"bad agent memory", []string{"-agent-memory", "lots"}, nil, "agent-memory"},
		{"negative depth", []string{"-max-run-depth", "-1"}, nil, "max-run-depth"},
		{"bad price", []string{"-config", badPrice}, nil, "profiles.p.prices"},
		{"fallback to no profile", []string{"-config", writeFile(t, "fb1.yaml", "profiles:\n  p:\n    fallbacks: [q]\n")}, nil, `profiles.p.fallbacks[0] "q": no such profile`},
		{"aborted falls back", []string{"-config", writeFile(t, "fb2.yaml", "profiles:\n  p:\n    fallbacks: [p]\n    fallback_on: [aborted]\n")}, nil, `profiles.p.fallback_on: unknown error kind "aborted"`},
		{"kinds without fallbacks", []string{"-config", writeFile(t, "fb3.yaml", "profiles:\n  p:\n    fallback_on: [server]\n")}, nil, "profiles.p.fallback_on: there is no fallback"},
		{"key in a fallback's defaults", []string{"-config", writeFile(t, "fb4.yaml", "profiles:\n  p:\n    defaults: {fallback: {models: [{baseUrl: \"http://x\", model: m, apiKey: sk-x}]}}\n")}, nil, "profiles.p.defaults.fallback"},
		{"bad duration env", nil, map[string]string{"AGENTCORE_SHUTDOWN_GRACE": "soon"}, "AGENTCORE_SHUTDOWN_GRACE"},
		{"bad protocol", []string{"-model-protocol", "smoke"}, nil, "unknown protocol"},
		{"bad log format", []string{"-log-format", "xml"}, nil, "log format"},
		{"key alone", []string{"-tls-cert", "c.pem"}, nil, "tls"},
		{"client ca alone", []string{"-tls-client-ca", "ca.pem"}, nil, "mutual TLS"},
		{"api key in file", []string{"-config", keyInFile}, nil, "profiles.p.api_key"},
		{"api key in defaults", []string{"-config", keyInDefaults}, nil, "profiles.p.defaults"},
		{"unknown key", []string{"-config", unknownKey}, nil, `"listn"`},
		{"defaults not a config", []string{"-config", badDefaults}, nil, "profiles.p.defaults"},
		{"missing file", []string{"-config", "/nonexistent/x.yaml"}, nil, "config file"},
		{"empty token file", []string{"-auth-token-file", tokenFile}, nil, "empty"},
		{"unknown default profile", []string{"-default-profile", "nope"}, nil, "nope"},
		{"stray argument", []string{"extra"}, nil, "unexpected arguments"},
		{"vault keys twice", []string{"-vault-key-file", "/etc/agentcore/vault.key"}, map[string]string{"AGENTCORE_VAULT_KEY": "a2V5"}, "give one"},
		{"public url with a query", []string{"-public-url", "https://a.example/?x=1"}, nil, "-public-url"},
		{"public url without a scheme", []string{"-public-url", "a.example"}, nil, "-public-url"},
		{"connect timeout too short", []string{"-connect-timeout", "5s"}, nil, "want 1m to 24h"},
		{"bad http listen", []string{"-http-listen", "8080"}, nil, `http listen "8080": want host:port or unix:PATH`},
		{"empty http unix socket path", []string{"-http-listen", "unix:"}, nil, `http listen "unix:": the unix socket path is empty`},
		{"http on the grpc address", []string{"-listen", "127.0.0.1:7", "-http-listen", "127.0.0.1:7"}, nil, "gRPC service listens there"},
		{"origin with a path", []string{"-http-listen", ":8080", "-http-cors-origin", "https://a.example/app"}, nil, "cors origin"},
		{"origin without a scheme", []string{"-http-listen", ":8080", "-http-cors-origin", "a.example"}, nil, "cors origin"},
		{"cors without http", []string{"-http-cors-origin", "*"}, nil, "needs -http-listen"},
		{"base URL without model", []string{"-model-base-url", "http://x/v1"}, nil,
			"-model-base-url (AGENTCORE_MODEL_BASE_URL, model.base_url) is http://x/v1 but -model (AGENTCORE_MODEL, model.model) is not set"},
		{"model without base URL", nil, map[string]string{"AGENTCORE_MODEL": "gpt"},
			"-model (AGENTCORE_MODEL, model.model) is gpt but -model-base-url (AGENTCORE_MODEL_BASE_URL, model.base_url) is not set"},
		{"bad size", []string{"-tool-memory", "lots"}, nil, "tool-memory"},
		{"tiny memory", []string{"-tool-memory", "1MiB"}, nil, "-tool-memory 1MiB: must be 0 (no limit) or at least 16MiB"},
		{"too few processes", []string{"-tool-processes", "3"}, nil, "-tool-processes 3"},
		{"bad mechanism", []string{"-tool-limits", "jail"}, nil, `-tool-limits "jail"`},
		{"result over the message limit", []string{"-max-tool-result-bytes", "16MiB"}, nil, "-max-tool-result-bytes 16MiB"},
		{"bad switch", nil, map[string]string{"AGENTCORE_SKIP_BAD_PLUGINS": "maybe"}, "AGENTCORE_SKIP_BAD_PLUGINS"},
		{"bad plugin key", []string{"-config", writeFile(t, "e.yaml", "plugins:\n  shell: {memry: 1GiB}\n")}, nil, "plugins.shell.memry"},
		{"bad plugin size", []string{"-config", writeFile(t, "f.yaml", "plugins:\n  shell: {memory: 2}\n")}, nil, "plugins.shell.memory 2"},
		{"env and file key", []string{"-config", bothKeys}, nil, "not both"},
		{"missing key file", []string{"-model", "m", "-model-base-url", "http://x", "-model-api-key-file", "/nonexistent/key"}, nil, "api_key_file"},
		{"allowed url not http", []string{"-config", badAllowed}, nil, "allowed_base_urls[0]"},
		{"webhook hosts without a secret", []string{"-webhook-allowed-hosts", "hooks.example.com"}, nil, "-webhook-allowed-hosts needs a signing secret: set AGENTCORE_WEBHOOK_SECRET"},
		{"empty webhook secret file", []string{"-webhook-secret-file", tokenFile}, nil, "webhook secret file"},
		{"no webhook attempt", []string{"-webhook-max-attempts", "0"}, nil, "-webhook-max-attempts 0"},
		{"no webhook timeout", []string{"-webhook-timeout", "0s"}, nil, "-webhook-timeout 0s"},
		{"bad reflection", []string{"-reflection", "maybe"}, nil, "reflection"},
		{"bad bool", []string{"-insecure=perhaps"}, nil, "insecure"},
		{"bad plugin user", []string{"-plugin-user", ":x"}, nil, "plugin-user"},
		{"socket owner over tcp", []string{"-socket-owner", "nobody"}, nil, "not a unix socket"},
		{"a typo'd flag", []string{"-tool-dri", "x"}, nil, "flag provided but not defined: -tool-dri; did you mean -tool-dir?"},
		{"a typo'd flag with two dashes", []string{"--modle", "x"}, nil, "did you mean -model?"},
		{"an unknown flag", []string{"-frobnicate"}, nil, "flag provided but not defined: -frobnicate (agent-server -help lists every flag)"},
		{"base URL without a scheme", nil, map[string]string{"AGENTCORE_MODEL_BASE_URL": "127.0.0.1:18080/v1", "AGENTCORE_MODEL": "m"},
			`AGENTCORE_MODEL_BASE_URL "127.0.0.1:18080/v1": not an absolute URL (no http:// or https://); did you mean "http://127.0.0.1:18080/v1"?`},
		{"base URL flag with a bad scheme", []string{"-model-base-url", "htp://x", "-model", "m"}, nil, `-model-base-url "htp://x": scheme "htp": want http or https`},
		{"base URL from the file", []string{"-config", writeFile(t, "g.yaml", "model: {base_url: \"https://\", model: m}\n")}, nil,
			`config file key model.base_url "https://": no host`},
		{"base URL with credentials", []string{"-model-base-url", "https://u:sk-x@h/v1", "-model", "m"}, nil, "must not hold credentials"},
		{"profile base URL", []string{"-config", writeFile(t, "h.yaml", "profiles:\n  p:\n    base_url: api.example.com\n    model: m\n")}, nil,
			`config file key profiles.p.base_url "api.example.com": not an absolute URL`},
		{"profile defaults base URL", []string{"-config", writeFile(t, "i.yaml", "profiles:\n  p:\n    defaults: {baseUrl: \"ftp://x\"}\n")}, nil,
			`profiles.p.defaults.baseUrl "ftp://x": scheme "ftp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.args, env(tt.env), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "sk-x") {
				t.Errorf("the error repeats the key: %v", err)
			}
		})
	}
}

func TestLimitSettings(t *testing.T) {
	file := writeFile(t, "limits.yaml", `
tool_limits: {memory: 2GiB, processes: 256, cpu_time: 1m}
limits: {max_tool_output: 10000, retry_max_elapsed: 1m}
skip_bad_plugins: true
plugins:
  shell: {memory: 512MiB, cpu_time: none}
  read_file: {open_files: 64, processes: 0}
`)
	c, err := Load([]string{"-config", file, "-tool-memory-max", "8g"}, env(map[string]string{"AGENTCORE_RETRY_MAX_DELAY": "5s"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	tl := c.ToolLimits
	if tl.Mechanism != "auto" || tl.Memory != 2<<30 || tl.MemoryMax != 8<<30 || tl.Processes != 256 || tl.CPUTime != time.Minute || tl.ProcessesMax != 16384 {
		t.Errorf("tool limits = %+v", tl)
	}
	sh, rf := tl.Overrides["shell"], tl.Overrides["read_file"]
	if sh.Memory == nil || *sh.Memory != 512<<20 || sh.CPUTime == nil || *sh.CPUTime != 0 || sh.Processes != nil {
		t.Errorf("shell override = %+v", sh)
	}
	if rf.OpenFiles == nil || *rf.OpenFiles != 64 || rf.Processes == nil || *rf.Processes != 0 || rf.Memory != nil {
		t.Errorf("read_file override = %+v", rf)
	}
	if !c.SkipBadPlugins || c.Limits.MaxToolOutput != 10000 || c.Limits.RetryMaxElapsed != time.Minute || c.Limits.RetryMaxDelay != 5*time.Second {
		t.Errorf("limits = %+v, skip %v", c.Limits, c.SkipBadPlugins)
	}
	if c.Limits.MaxToolResultBytes != 4<<20 {
		t.Errorf("max tool result bytes = %v", c.Limits.MaxToolResultBytes)
	}
	// The result cap's default follows a small message limit.
	if c, err := Load([]string{"-max-message-bytes", "1048576"}, env(nil), io.Discard); err != nil || c.Limits.MaxToolResultBytes != 512<<10 {
		t.Fatalf("result cap under a 1 MiB message limit: %v, %v", c, err)
	}
	// A switch takes no value on the command line.
	c, err = Load([]string{"-skip-bad-plugins", "-tool-limits", "rlimit"}, env(nil), io.Discard)
	if err != nil || !c.SkipBadPlugins || c.ToolLimits.Mechanism != "rlimit" {
		t.Fatalf("switch: %v, %v", c, err)
	}
}

func TestEmptyKeyVariableWarns(t *testing.T) {
	c, err := Load([]string{"-model-base-url", "https://api.example.com/v1/secret-path", "-model", "m"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "AGENTCORE_MODEL_API_KEY is empty or unset") ||
		!strings.Contains(c.Warnings[0], "api.example.com") || strings.Contains(c.Warnings[0], "secret-path") {
		t.Fatalf("warnings = %q", c.Warnings)
	}
	c, err = Load([]string{"-model-base-url", "https://api.example.com/v1", "-model", "m"}, env(map[string]string{"AGENTCORE_MODEL_API_KEY": "k"}), io.Discard)
	if err != nil || len(c.Warnings) != 0 {
		t.Fatalf("warnings with a key = %q, %v", c.Warnings, err)
	}
}

func TestBytes(t *testing.T) {
	for in, want := range map[string]Bytes{"256MiB": 256 << 20, "1g": 1 << 30, "1.5GiB": 3 << 29, "512": 512, "64 KB": 64 << 10, "0": 0} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "MiB", "12 parsecs", "-1", "1e40G"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", bad)
		}
	}
	if s := Bytes(3 << 29).String(); s != "1536MiB" {
		t.Errorf("String = %s", s)
	}
}

// TestHelpPrintsPlainText pins -help: every setting with its flag,
// variable and file key, as plain text (the Markdown table is docs/configuration.md's).
func TestHelpPrintsPlainText(t *testing.T) {
	var b strings.Builder
	_, err := Load([]string{"-help"}, env(nil), &b)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v, want flag.ErrHelp", err)
	}
	out := b.String()
	for _, s := range settings() {
		for _, want := range []string{"  -" + s.Flag, s.Env, s.File} {
			if !strings.Contains(out, want) {
				t.Errorf("help lacks %q of -%s", want, s.Flag)
			}
		}
	}
	if strings.ContainsAny(out, "|`") {
		t.Errorf("help is not plain text:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 80 {
			t.Errorf("help line longer than 80 columns: %q", line)
		}
	}
}

// TestTelemetrySettings pins the telemetry flags: booleans without a value,
// from the environment, and the checks that tie them together.
func TestTelemetrySettings(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		want    func(*Config) bool
		wantErr string
	}{
		{"off by default", nil, nil, func(c *Config) bool { return c.MetricsListen == "" && !c.Pprof && !c.TraceContent }, ""},
		{"flags", []string{"-metrics-listen", "127.0.0.1:9090", "-pprof", "-trace-content"}, nil,
			func(c *Config) bool { return c.MetricsListen == "127.0.0.1:9090" && c.Pprof && c.TraceContent }, ""},
		{"environment", nil, map[string]string{"AGENTCORE_METRICS_LISTEN": ":9090", "AGENTCORE_PPROF": "true", "AGENTCORE_TRACE_CONTENT": "1"},
			func(c *Config) bool { return c.MetricsListen == ":9090" && c.Pprof && c.TraceContent }, ""},
		{"flag wins", []string{"-trace-content=false"}, map[string]string{"AGENTCORE_TRACE_CONTENT": "true"},
			func(c *Config) bool { return !c.TraceContent }, ""},
		{"bad bool", nil, map[string]string{"AGENTCORE_PPROF": "maybe"}, nil, "AGENTCORE_PPROF"},
		{"bad address", []string{"-metrics-listen", "nope"}, nil, nil, "metrics listen"},
		{"pprof alone", []string{"-pprof"}, nil, nil, "-metrics-listen"},
		{"version skips the rest", []string{"-version", "-listen", "nope"}, map[string]string{"AGENTCORE_PPROF": "maybe"},
			func(c *Config) bool { return c.Version }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.args, env(tc.env), io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(c) {
				t.Errorf("unexpected config %+v", *c)
			}
		})
	}
}

// TestDocsTable keeps the settings table of docs/configuration.md equal to
// the code's.
func TestDocsTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Skip("no docs/configuration.md:", err)
	}
	if !strings.Contains(string(b), Table()) {
		t.Errorf("docs/configuration.md's settings table is stale; paste config.Table(), printed below:\n%s", Table())
	}
}

// TestJSONLogsAreReadable pins the JSON log format: enums by name and
// durations as text, in direct values, implied values and named loggers;
// the text format is hclog's own.
func TestJSONLogsAreReadable(t *testing.T) {
	var b strings.Builder
	c := &Config{LogFormat: "json", LogLevel: "info"}
	log := c.Logger("agent-server", &b).Named("agent").With("protocol", agentv1.Protocol_PROTOCOL_CHAT)
	log.Info("run ended", "reason", agentv1.EndReason_END_REASON_NO_TOOL, "duration", 1500*time.Millisecond,
		"code", codes.Unavailable, "steps", 2, "error", errors.New("boom"), "origins", []string{"https://a.example"})
	var rec map[string]any
	if err := json.Unmarshal([]byte(b.String()), &rec); err != nil {
		t.Fatalf("not one JSON line: %q: %v", b.String(), err)
	}
	want := map[string]any{
		"reason": "END_REASON_NO_TOOL", "duration": "1.5s", "code": "Unavailable", "protocol": "PROTOCOL_CHAT",
		"steps": float64(2), "error": "boom", "@module": "agent-server.agent",
	}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("%s = %#v, want %#v", k, rec[k], v)
		}
	}
}

// TestAuditLoggerKeepsINFO: at -log-level error the server's logger drops
// INFO lines; the audit logger keeps them, in the same format.
func TestAuditLoggerKeepsINFO(t *testing.T) {
	for _, level := range []string{"warn", "error"} {
		var b strings.Builder
		c := &Config{LogFormat: "json", LogLevel: level}
		c.Logger("agent-server", &b).Info("dropped")
		c.AuditLogger("agent-server", &b).Info("audit", "call", "Stop", "duration", 2*time.Second)
		c.AuditLogger("agent-server", &b).Debug("no debug either")
		var rec map[string]any
		if err := json.Unmarshal([]byte(b.String()), &rec); err != nil {
			t.Fatalf("%s: not the one audit line: %q: %v", level, b.String(), err)
		}
		if rec["@module"] != "agent-server.audit" || rec["@level"] != "info" || rec["call"] != "Stop" || rec["duration"] != "2s" {
			t.Errorf("%s: audit line %v", level, rec)
		}
	}
}

func TestStoreSettings(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantStore string
		wantErr   string
	}{
		{"default under XDG_STATE_HOME", nil, map[string]string{"XDG_STATE_HOME": "/state", "HOME": "/home/u"}, "sqlite:/state/agentcore/agentcore.db", ""},
		{"default under HOME", nil, map[string]string{"HOME": "/home/u"}, "sqlite:/home/u/.local/state/agentcore/agentcore.db", ""},
		{"data dir", []string{"-data-dir", "/var/lib/ac"}, nil, "sqlite:/var/lib/ac/agentcore.db", ""},
		{"memory", []string{"-store", "memory"}, nil, "memory", ""},
		{"postgres from env", nil, map[string]string{"AGENTCORE_STORE": "postgres://u:pw@db/ac"}, "postgres://u:pw@db/ac", ""},
		{"unknown", []string{"-store", "mysql://x"}, nil, "", "want sqlite:PATH, postgres://… or memory"},
		{"empty sqlite path", []string{"-store", "sqlite:"}, nil, "", "needs a file path"},
		{"short lease", []string{"-store", "memory", "-lease-ttl", "10ms"}, nil, "", "at least 1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.args, env(tc.env), io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Store != tc.wantStore || c.ReplicaID == "" || c.LeaseTTL != 10*time.Second || c.EventRetention != 24*time.Hour || c.PermissionTimeout != 10*time.Minute {
				t.Fatalf("store %q replica %q lease %v retention %v permission %v", c.Store, c.ReplicaID, c.LeaseTTL, c.EventRetention, c.PermissionTimeout)
			}
		})
	}
	c, err := Load([]string{"-store", "postgres://ac:hunter22@db:5432/ac"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Secrets(), ","), "hunter22") || strings.Contains(c.String(), "hunter22") || strings.Contains(c.StoreName(), "hunter22") {
		t.Fatalf("the store's password: secrets %v, String %s", c.Secrets(), c)
	}
}
