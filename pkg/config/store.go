package config

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

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
	switch c.OnInterrupt {
	case "fail", "resume":
	case "":
		c.OnInterrupt = "fail"
	default:
		bad("-on-interrupt %q: want fail or resume", c.OnInterrupt)
	}
	if c.ResumeAttempts < 0 {
		bad("-resume-attempts %d: must be 0 or more", c.ResumeAttempts)
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
