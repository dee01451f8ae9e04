package config

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Variables holding secrets besides the profiles' keys and the bearer token.
const (
	// pgPasswordEnv is libpq's (and pgx's) password variable.
	pgPasswordEnv = "PGPASSWORD"
	// storeEnv is the store setting's variable; a postgres:// URL may hold a password.
	storeEnv = "AGENTCORE_STORE"
	// tracesHeadersEnv and headersEnv are the OTLP trace exporter's header
	// variables, the signal's own first.
	tracesHeadersEnv = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	headersEnv       = "OTEL_EXPORTER_OTLP_HEADERS"
)

// otlpHeaderEnv are the OTLP exporters' header variables: they carry
// backends' API keys (agent-server exports only traces, but a metrics
// variable set for another program is a secret all the same).
var otlpHeaderEnv = []string{headersEnv, tracesHeadersEnv, "OTEL_EXPORTER_OTLP_METRICS_HEADERS"}

// readSecretEnv reads the secret variables other than the keys and the token.
func (c *Config) readSecretEnv(getenv func(string) string) {
	c.StorePassword = getenv(pgPasswordEnv)
	c.storeEnvSecret = storePassword(getenv(storeEnv)) != ""
	c.otlpSecrets = nil
	for _, name := range otlpHeaderEnv {
		raw := getenv(name)
		for _, v := range parseOTLPHeaders(raw) {
			c.otlpSecrets = append(c.otlpSecrets, v)
			// "Bearer KEY", "Basic B64": the credential alone is a secret too.
			if _, cred, ok := strings.Cut(v, " "); ok {
				c.otlpSecrets = append(c.otlpSecrets, strings.TrimSpace(cred))
			}
			if esc := url.PathEscape(v); esc != v && strings.Contains(raw, esc) {
				c.otlpSecrets = append(c.otlpSecrets, esc)
			}
		}
	}
	c.TraceHeaders = nil
	for _, name := range []string{tracesHeadersEnv, headersEnv} {
		if v := getenv(name); strings.TrimSpace(v) != "" {
			c.TraceHeaders = parseOTLPHeaders(v) // the signal's own variable replaces the common one
			break
		}
	}
}

// parseOTLPHeaders reads an OTEL_EXPORTER_OTLP_*HEADERS value as the
// OpenTelemetry exporters do: comma-separated name=value pairs, values
// percent-decoded, both trimmed; a malformed pair is left out.
func parseOTLPHeaders(s string) map[string]string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	h := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		if !ok || !headerName(name) {
			continue
		}
		v, err := url.PathUnescape(value)
		if err != nil {
			continue
		}
		h[name] = strings.TrimSpace(v)
	}
	return h
}

// headerName reports whether s is an HTTP header name (RFC 9110 token).
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}

// storePassword returns the password a postgres:// store URL holds, in its
// user info or its password parameter; "" when it holds none.
func storePassword(store string) string {
	u, err := url.Parse(store)
	if err != nil {
		return ""
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			return p
		}
	}
	return u.Query().Get("password")
}

// withoutStorePassword returns a store URL without its password (user info
// and password parameter).
func withoutStorePassword(store string) string {
	u, err := url.Parse(store)
	if err != nil {
		return store
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	if q := u.Query(); q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// secretFlag reports whether a flag's value may hold a secret: the store's
// URL, with its password.
func secretFlag(name string) bool { return name == "store" }

// argKey names, among the values SecretArgs hides, the argument at index i.
// The space keeps it apart from every environment variable's name.
func argKey(i int) string { return "arg " + strconv.Itoa(i) }

// SecretArgs returns args (the command line without the program name) with
// the password taken out of every flag value that holds one (-store
// postgres://user:PASSWORD@…), and the arguments it changed, as they were,
// keyed so that RestoreArgs puts them back. The kernel shows a process's
// arguments to every user in /proc/PID/cmdline: agent-server re-executes
// itself with the clean ones, handing the others over.
func SecretArgs(args []string) (clean []string, hidden map[string]string) {
	fs := newFlagSet(defaults(), io.Discard)
	clean = append([]string(nil), args...)
	for i := 0; i < len(args); i++ {
		// The walk of flag.FlagSet.Parse: it ends at the first argument that is no flag.
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			break
		}
		name := strings.TrimPrefix(a[1:], "-")
		name, value, inline := strings.Cut(name, "=")
		f := fs.Lookup(name)
		if f == nil {
			break // Load fails on it
		}
		at := i
		if !inline {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				continue
			}
			if i+1 >= len(args) {
				break
			}
			i++
			at, value = i, args[i]
		}
		if !secretFlag(name) || storePassword(value) == "" {
			continue
		}
		if hidden == nil {
			hidden = map[string]string{}
		}
		hidden[argKey(at)] = args[at]
		clean[at] = strings.TrimSuffix(args[at], value) + withoutStorePassword(value)
	}
	return clean, hidden
}

// RestoreArgs puts back into args the arguments SecretArgs hid (hidden may
// hold other values too: they are ignored).
func RestoreArgs(args []string, hidden map[string]string) []string {
	var out []string
	for i := range args {
		if v, ok := hidden[argKey(i)]; ok {
			if out == nil {
				out = append([]string(nil), args...)
			}
			out[i] = v
		}
	}
	if out == nil {
		return args
	}
	return out
}

// Secrets returns every secret the config holds (API keys, the bearer
// token, the webhooks' signing secret, the vault's keys, the store's password, the OTLP
// exporters' header values), for
// redaction from logs, errors, events and tool results.
func (c *Config) Secrets() []string {
	var s []string
	if c.AuthToken != "" {
		s = append(s, c.AuthToken)
	}
	if c.Webhooks.Secret != "" {
		s = append(s, c.Webhooks.Secret, strings.TrimPrefix(c.Webhooks.Secret, "whsec_"))
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
	s = append(s, c.Vault.secrets()...)
	return append(s, c.otlpSecrets...)
}

// SecretEnv returns the names of the environment variables that may hold
// secrets, sorted, so that the server can keep them out of its own
// environment and out of its plugins': the profiles' key variables, the
// bearer token's, the webhooks' secret's, the vault's keys', PGPASSWORD, AGENTCORE_STORE when it holds a password, and
// the OTLP exporters' header variables.
func (c *Config) SecretEnv() []string {
	seen := map[string]bool{pgPasswordEnv: true}
	for _, n := range append([]string{c.authTokenEnv, c.defaultModel.APIKeyEnv, c.Webhooks.secretEnv, VaultKeyEnv}, otlpHeaderEnv...) {
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
