package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// finish resolves secrets and profiles and checks the whole, step by
// step; every problem found is reported, not only the first.
func (c *Config) finish(getenv func(string) string) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c.readAuthToken(getenv, bad)
	c.readWebhookSecret(getenv, bad)
	c.readVault(getenv, bad)
	c.finishProfiles(getenv, bad)
	c.checkBaseURLs(bad)
	c.checkDefaultModel(bad, getenv)
	c.checkListeners(bad)
	c.checkAccess(bad)
	c.checkLogging(bad)
	c.checkLimits(bad)
	c.checkToolLimits(bad)
	c.finishStore(getenv, bad)
	c.readSecretEnv(getenv)
	c.checkDurations(bad)
	return errors.Join(errs...)
}

// readAuthToken reads the bearer token from its file or its variable.
func (c *Config) readAuthToken(getenv func(string) string, bad func(string, ...any)) {
	if c.authTokenFile != "" {
		tok, err := readSecretFile(c.authTokenFile)
		if err != nil {
			bad("auth token file: %w", err)
		}
		c.AuthToken = tok
	} else if c.authTokenEnv != "" {
		c.AuthToken = strings.TrimSpace(getenv(c.authTokenEnv))
	}
}

// checkListeners checks the listen addresses: the gRPC service's, the HTTP
// gateway's (with its CORS origins), the MCP and the metrics listeners'.
func (c *Config) checkListeners(bad func(string, ...any)) {
	if err := checkListen("listen", c.Listen); err != nil {
		bad("%w", err)
	}
	if _, unix := c.UnixSocket(); c.SocketOwner != "" && !unix {
		bad("socket-owner: -listen %q is not a unix socket", c.Listen)
	}
	if c.HTTP.Listen != "" {
		if err := checkListen("http listen", c.HTTP.Listen); err != nil {
			bad("%w", err)
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
	if c.MCPListen != "" {
		if err := checkListen("mcp-listen", c.MCPListen); err != nil {
			bad("%w", err)
		}
	}
	if c.A2AListen != "" {
		if err := checkListen("a2a-listen", c.A2AListen); err != nil {
			bad("%w", err)
		}
	}
	// agent-server opens the metrics listener over TCP only.
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			bad("metrics listen %q: want host:port", c.MetricsListen)
		}
	} else if c.Pprof {
		bad("-pprof: serves on the metrics listener; set -metrics-listen too")
	}
}

// checkListen checks a listen address, host:port or unix:PATH; name names
// its setting in the error.
func checkListen(name, addr string) error {
	if path, ok := unixPath(addr); ok {
		if path == "" {
			return fmt.Errorf("%s %q: the unix socket path is empty", name, addr)
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s %q: want host:port or unix:PATH", name, addr)
	}
	return nil
}

// checkAccess checks who may reach the service and what it runs as:
// reflection, the plugins' and the socket's owners, TLS.
func (c *Config) checkAccess(bad func(string, ...any)) {
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
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls: -tls-cert and -tls-key go together")
	}
	if c.TLS.ClientCAFile != "" && c.TLS.CertFile == "" {
		bad("tls: -tls-client-ca (mutual TLS) needs -tls-cert and -tls-key")
	}
}

// checkLogging checks the log format and level, and the rendered
// history's labels.
func (c *Config) checkLogging(bad func(string, ...any)) {
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("log format %q: want text or json", c.LogFormat)
	}
	if hclog.LevelFromString(c.LogLevel) == hclog.NoLevel {
		bad("log level %q: want trace, debug, info, warn or error", c.LogLevel)
	}
	if c.RenderLabels != "english" && c.RenderLabels != "original" {
		bad("render labels %q: want english or original (agent-core's)", c.RenderLabels)
	}
}

// checkLimits checks the server's counts and sizes, and fits the default
// tool result size to a smaller message limit.
func (c *Config) checkLimits(bad func(string, ...any)) {
	for _, n := range []struct {
		name string
		v    int
	}{
		{"max-sessions", c.Limits.MaxSessions}, {"max-runs", c.Limits.MaxConcurrentRuns}, {"max-loaded-agents", c.Limits.MaxLoadedAgents},
		{"max-message-bytes", c.Limits.MaxMessageBytes}, {"max-history", c.Limits.MaxHistory},
		{"max-idle-plugins", c.MaxIdlePlugins}, {"min-idle-plugins", c.MinIdlePlugins}, {"max-tool-output", c.Limits.MaxToolOutput},
		{"plugin-gomaxprocs", c.PluginGOMAXPROCS}, {"max-run-depth", c.Limits.MaxRunDepth}, {"max-child-runs", c.Limits.MaxChildRuns},
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
}

// checkDurations checks that no duration setting is negative.
func (c *Config) checkDurations(bad func(string, ...any)) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"shutdown-grace", c.ShutdownGrace}, {"keepalive-time", c.KeepaliveTime}, {"keepalive-timeout", c.KeepaliveTimeout},
		{"retry-max-elapsed", c.Limits.RetryMaxElapsed}, {"retry-max-delay", c.Limits.RetryMaxDelay},
		{"retry-unreachable", c.Limits.RetryUnreachable},
		{"event-retention", c.EventRetention}, {"permission-timeout", c.PermissionTimeout}} {
		if d.v < 0 {
			bad("-%s %s: must not be negative", d.name, d.v)
		}
	}
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
