package config

import (
	"net/url"
	"strings"
	"time"
)

// VaultKeyEnv is the environment variable holding the token vault's keys
// when no -vault-key-file is given.
const VaultKeyEnv = "AGENTCORE_VAULT_KEY"

// Vault configures the token vault (pkg/vault), which keeps the OAuth
// tokens of the MCP servers that need them, and the connect flow that
// fills it.
type Vault struct {
	// KeyFile names the file of the vault's keys (pkg/vault's ParseKeys
	// says its form).
	KeyFile string
	// Keys is the text of the keys from VaultKeyEnv, when no KeyFile.
	Keys string `json:"-"`
	// PublicURL is where people's browsers reach the HTTP listener: the
	// OAuth callback is PublicURL + /v1/oauth/callback. Empty: from the
	// HTTP listener's address (http, or https with TLS).
	PublicURL string
	// ConnectTimeout bounds the time between Connect and its callback.
	ConnectTimeout time.Duration
}

// vaultSettings are the settings of the token vault.
func vaultSettings() []Setting {
	return []Setting{
		{Flag: "vault-key-file", Env: "AGENTCORE_VAULT_KEY_FILE", File: "vault.key_file",
			Usage: "file (mode 600) of the keys sealing the token vault (OAuth tokens of MCP servers): base64 of 32 random bytes a line, the first seals, all open (rotation); else the keys are read from " + VaultKeyEnv + "; with neither, a persistent store has no vault (a memory store gets a key per process)",
			ptr:   func(c *Config) any { return &c.Vault.KeyFile }},
		{Flag: "public-url", Env: "AGENTCORE_PUBLIC_URL", File: "public_url",
			Usage: "the URL people's browsers reach the HTTP listener at (https://agents.example.com): OAuth authorization servers send them back to its /v1/oauth/callback; empty: from -http-listen",
			ptr:   func(c *Config) any { return &c.Vault.PublicURL }},
		{Flag: "connect-timeout", Env: "AGENTCORE_CONNECT_TIMEOUT", File: "connect_timeout", Default: "10m",
			Usage: "how long the authorization URL of a Connect (OAuth consent for an MCP server) stays usable",
			ptr:   func(c *Config) any { return &c.Vault.ConnectTimeout }},
	}
}

// readVault reads the vault's keys from their variable (unless a key file
// is given) and checks the vault settings.
func (c *Config) readVault(getenv func(string) string, bad func(string, ...any)) {
	v := &c.Vault
	v.Keys = ""
	if env := strings.TrimSpace(getenv(VaultKeyEnv)); env != "" {
		if v.KeyFile != "" {
			bad("the vault's keys are given twice: -vault-key-file and %s; give one", VaultKeyEnv)
		}
		v.Keys = env
	}
	if p := v.PublicURL; p != "" {
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			bad("-public-url %q: want an absolute http(s) URL without query, e.g. https://agents.example.com", p)
		}
	}
	if v.ConnectTimeout < time.Minute || v.ConnectTimeout > 24*time.Hour {
		bad("-connect-timeout %s: want 1m to 24h", v.ConnectTimeout)
	}
}

// secrets are the vault's keys given in its variable, each a secret.
func (v *Vault) secrets() []string {
	var out []string
	for f := range strings.FieldsFuncSeq(v.Keys, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' || r == '\t' || r == '\r' }) {
		out = append(out, f)
	}
	return out
}
