package config

import (
	"strings"
	"time"
)

// DefaultWebhookSecretEnv is the environment variable holding the webhooks'
// signing secret unless -webhook-secret-env names another.
const DefaultWebhookSecretEnv = "AGENTCORE_WEBHOOK_SECRET"

// Webhooks configure the webhooks a run may call when it ends (a send's or
// an agent's config.webhook): where they may go, how they are signed and
// retried.
type Webhooks struct {
	// AllowedHosts are where webhooks may go (pkg/webhook's Allow says the
	// forms); none: a config naming a webhook is refused.
	AllowedHosts []string
	// Secret signs every webhook ("whsec_" and base64, Standard Webhooks'
	// form), from SecretFile or the variable SecretEnv names.
	Secret string `json:"-"`
	// MaxAttempts and MaxElapsed bound the attempts of one webhook: their
	// number, and the time from the first to the start of the last.
	MaxAttempts int
	MaxElapsed  time.Duration
	// Backoff is the wait before the second attempt; it doubles at each
	// failure up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Timeout bounds one attempt.
	Timeout time.Duration

	// secretEnv and secretFile say where Secret comes from.
	secretEnv, secretFile string
}

// webhookSettings are the settings of the webhooks.
func webhookSettings() []Setting {
	return []Setting{
		{Flag: "webhook-allowed-hosts", Env: "AGENTCORE_WEBHOOK_ALLOWED_HOSTS", File: "webhooks.allowed_hosts",
			Usage: "where run webhooks (config.webhook) may go, ','-separated: a host (https, any port), host:port, *.domain, or a URL prefix (https://h/path, http://h:port: plain http only so); none: webhooks are refused",
			ptr:   func(c *Config) any { return (*commaList)(&c.Webhooks.AllowedHosts) }},
		{Flag: "webhook-secret-env", Env: "AGENTCORE_WEBHOOK_SECRET_ENV", File: "webhooks.secret_env", Default: DefaultWebhookSecretEnv,
			Usage: "name of the environment variable holding the webhooks' signing secret (whsec_ and base64 of 24 to 64 random bytes; never a flag or in the file)",
			ptr:   func(c *Config) any { return &c.Webhooks.secretEnv }},
		{Flag: "webhook-secret-file", Env: "AGENTCORE_WEBHOOK_SECRET_FILE", File: "webhooks.secret_file",
			Usage: "file holding the webhooks' signing secret (wins over -webhook-secret-env)",
			ptr:   func(c *Config) any { return &c.Webhooks.secretFile }},
		{Flag: "webhook-max-attempts", Env: "AGENTCORE_WEBHOOK_MAX_ATTEMPTS", File: "webhooks.max_attempts", Default: "8",
			Usage: "most attempts of one webhook; a receiver answering other than 2xx (or not at all) is tried again until then",
			ptr:   func(c *Config) any { return &c.Webhooks.MaxAttempts }},
		{Flag: "webhook-max-elapsed", Env: "AGENTCORE_WEBHOOK_MAX_ELAPSED", File: "webhooks.max_elapsed", Default: "30m",
			Usage: "how long one webhook is retried, from its first attempt",
			ptr:   func(c *Config) any { return &c.Webhooks.MaxElapsed }},
		{Flag: "webhook-backoff", Env: "AGENTCORE_WEBHOOK_BACKOFF", File: "webhooks.backoff", Default: "1s",
			Usage: "wait before a webhook's second attempt; it doubles at each failure, up to -webhook-max-backoff (a receiver's Retry-After counts too)",
			ptr:   func(c *Config) any { return &c.Webhooks.Backoff }},
		{Flag: "webhook-max-backoff", Env: "AGENTCORE_WEBHOOK_MAX_BACKOFF", File: "webhooks.max_backoff", Default: "5m",
			Usage: "longest wait between two attempts of a webhook",
			ptr:   func(c *Config) any { return &c.Webhooks.MaxBackoff }},
		{Flag: "webhook-timeout", Env: "AGENTCORE_WEBHOOK_TIMEOUT", File: "webhooks.timeout", Default: "10s",
			Usage: "how long one webhook attempt may take before it counts as failed",
			ptr:   func(c *Config) any { return &c.Webhooks.Timeout }},
	}
}

// readWebhookSecret reads the webhooks' secret from its file or its
// variable and checks the webhook settings.
func (c *Config) readWebhookSecret(getenv func(string) string, bad func(string, ...any)) {
	w := &c.Webhooks
	switch {
	case w.secretFile != "":
		s, err := readSecretFile(w.secretFile)
		if err != nil {
			bad("webhook secret file: %w", err)
		}
		w.Secret = s
	case w.secretEnv != "":
		w.Secret = strings.TrimSpace(getenv(w.secretEnv))
	}
	if len(w.AllowedHosts) > 0 && w.Secret == "" {
		bad("-webhook-allowed-hosts needs a signing secret: set %s (or -webhook-secret-file) to whsec_ and the base64 of 24 to 64 random bytes, e.g. echo \"whsec_$(head -c 32 /dev/urandom | base64)\"", w.secretEnv)
	}
	if w.MaxAttempts < 1 {
		bad("-webhook-max-attempts %d: must be 1 or more", w.MaxAttempts)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"webhook-max-elapsed", w.MaxElapsed}, {"webhook-backoff", w.Backoff}, {"webhook-max-backoff", w.MaxBackoff}, {"webhook-timeout", w.Timeout}} {
		if d.v <= 0 {
			bad("-%s %s: must be more than 0", d.name, d.v)
		}
	}
}
