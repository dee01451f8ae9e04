package config

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSecretEnvBeyondKeys: the store's password and the OTLP exporters'
// headers are secrets the server keeps out of its environment, hands to
// their users, and redacts.
func TestSecretEnvBeyondKeys(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		wantEnv     []string // among SecretEnv
		notEnv      []string // not among SecretEnv
		wantSecrets []string
		headers     map[string]string
		password    string
	}{
		{"PGPASSWORD", []string{"-store", "postgres://u@db/ac"}, map[string]string{"PGPASSWORD": "pg-secret-1"},
			[]string{"PGPASSWORD"}, []string{"AGENTCORE_STORE"}, []string{"pg-secret-1"}, nil, "pg-secret-1"},
		{"store URL in the environment", nil, map[string]string{"AGENTCORE_STORE": "postgres://u:pg-secret-2@db/ac"},
			[]string{"AGENTCORE_STORE", "PGPASSWORD"}, nil, []string{"pg-secret-2"}, nil, ""},
		{"store URL without a password", nil, map[string]string{"AGENTCORE_STORE": "postgres://u@db/ac"},
			nil, []string{"AGENTCORE_STORE"}, nil, nil, ""},
		{"password parameter", []string{"-store", "postgres://u@db/ac?password=pg-secret-3&sslmode=disable"}, nil,
			nil, nil, []string{"pg-secret-3"}, nil, ""},
		{"OTLP headers", nil, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api-key=otlp-secret-4, Authorization=Bearer%20otlp-secret-5,bad key=x,novalue"},
			[]string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}, nil,
			[]string{"otlp-secret-4", "Bearer otlp-secret-5", "otlp-secret-5", "Bearer%20otlp-secret-5"},
			map[string]string{"api-key": "otlp-secret-4", "Authorization": "Bearer otlp-secret-5"}, ""},
		{"the traces' own headers win", nil, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=common-value", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=traces-value",
			"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "c=metrics-value"},
			nil, nil, []string{"common-value", "traces-value", "metrics-value"}, map[string]string{"b": "traces-value"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(append([]string{"-data-dir", t.TempDir()}, tc.args...), env(tc.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			names := c.SecretEnv()
			for _, n := range tc.wantEnv {
				if !slices.Contains(names, n) {
					t.Errorf("SecretEnv %v lacks %s", names, n)
				}
			}
			for _, n := range tc.notEnv {
				if slices.Contains(names, n) {
					t.Errorf("SecretEnv %v holds %s", names, n)
				}
			}
			secrets := c.Secrets()
			for _, s := range tc.wantSecrets {
				if !slices.Contains(secrets, s) {
					t.Errorf("Secrets %q lack %q", secrets, s)
				}
			}
			if !maps.Equal(c.TraceHeaders, tc.headers) {
				t.Errorf("TraceHeaders %v, want %v", c.TraceHeaders, tc.headers)
			}
			if c.StorePassword != tc.password {
				t.Errorf("StorePassword %q, want %q", c.StorePassword, tc.password)
			}
			for _, s := range tc.wantSecrets {
				if strings.Contains(c.String()+c.StoreName(), s) {
					t.Errorf("String or StoreName shows %q: %s %s", s, c, c.StoreName())
				}
			}
		})
	}
}

// TestSecretArgs: a password in a flag's value leaves the command line and
// comes back whole; every other argument stays as it was.
func TestSecretArgs(t *testing.T) {
	const pw = "pg-arg-secret"
	tests := []struct {
		name      string
		args      []string
		wantClean []string
	}{
		{"separate value", []string{"-listen", "127.0.0.1:0", "-store", "postgres://u:" + pw + "@db:5432/ac?sslmode=disable"},
			[]string{"-listen", "127.0.0.1:0", "-store", "postgres://u@db:5432/ac?sslmode=disable"}},
		{"inline, two dashes", []string{"--store=postgres://u:" + pw + "@db/ac", "-insecure"},
			[]string{"--store=postgres://u@db/ac", "-insecure"}},
		{"password parameter", []string{"-store", "postgres://u@db/ac?password=" + pw + "&sslmode=disable"},
			[]string{"-store", "postgres://u@db/ac?sslmode=disable"}},
		{"after a bool flag", []string{"-insecure", "-store", "postgres://u:" + pw + "@db/ac"},
			[]string{"-insecure", "-store", "postgres://u@db/ac"}},
		{"the value of another flag is no flag", []string{"-replica-id", "-store", "-listen", "127.0.0.1:1"}, nil},
		{"no password", []string{"-store", "postgres://u@db/ac", "-log-level", "debug"}, nil},
		{"after the flags", []string{"-listen", "x:1", "--", "-store", "postgres://u:" + pw + "@db/ac"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clean, hidden := SecretArgs(tc.args)
			want := tc.wantClean
			if want == nil {
				want = tc.args
				if hidden != nil {
					t.Errorf("hid %v from %q", hidden, tc.args)
				}
			}
			if !slices.Equal(clean, want) {
				t.Errorf("clean %q, want %q", clean, want)
			}
			if strings.Contains(strings.Join(clean, " "), pw) && tc.wantClean != nil {
				t.Errorf("the password stayed: %q", clean)
			}
			hidden = maps.Clone(hidden)
			if hidden == nil {
				hidden = map[string]string{}
			}
			hidden["AGENTCORE_AUTH_TOKEN"] = "other" // the environment's secrets travel with them
			if back := RestoreArgs(clean, hidden); !slices.Equal(back, tc.args) {
				t.Errorf("restored %q, want %q", back, tc.args)
			}
		})
	}
	// The setting the new image rebuilds is the one given.
	args := []string{"-data-dir", t.TempDir(), "-store", "postgres://u:" + pw + "@db/ac"}
	clean, hidden := SecretArgs(args)
	c, err := Load(RestoreArgs(clean, hidden), env(nil), io.Discard)
	if err != nil || c.Store != "postgres://u:"+pw+"@db/ac" {
		t.Fatalf("store %q %v", c.Store, err)
	}
}

// TestWebhookSecret: the webhooks' secret comes from its file, else its
// variable; it is a secret to redact, and its variable is kept out of the
// plugins' environment.
func TestWebhookSecret(t *testing.T) {
	const fromEnv, fromFile = "whsec_ZW52LXNlY3JldC1lbnYtc2VjcmV0LWVudi0x", "whsec_ZmlsZS1zZWNyZXQtZmlsZS1zZWNyZXQtZmlsZQ=="
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(fromFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"variable", []string{"-webhook-allowed-hosts", "hooks.example.com,*.corp.example"}, map[string]string{"AGENTCORE_WEBHOOK_SECRET": fromEnv}, fromEnv},
		{"another variable", []string{"-webhook-secret-env", "HOOK_KEY"}, map[string]string{"HOOK_KEY": fromEnv}, fromEnv},
		{"file wins", []string{"-webhook-secret-file", file}, map[string]string{"AGENTCORE_WEBHOOK_SECRET": fromEnv}, fromFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if c.Webhooks.Secret != tc.want {
				t.Fatalf("secret %q, want %q", c.Webhooks.Secret, tc.want)
			}
			if !slices.Contains(c.Secrets(), tc.want) || !slices.Contains(c.Secrets(), strings.TrimPrefix(tc.want, "whsec_")) {
				t.Errorf("Secrets() lacks the webhook secret (with and without its prefix)")
			}
			for name := range tc.env {
				if !slices.Contains(c.SecretEnv(), name) {
					t.Errorf("SecretEnv() %v lacks %s", c.SecretEnv(), name)
				}
			}
		})
	}
	c, err := Load([]string{"-webhook-allowed-hosts", "hooks.example.com, *.corp.example"}, func(k string) string {
		return map[string]string{"AGENTCORE_WEBHOOK_SECRET": fromEnv}[k]
	}, io.Discard)
	if err != nil || fmt.Sprint(c.Webhooks.AllowedHosts) != "[hooks.example.com *.corp.example]" {
		t.Fatalf("allowed hosts %v, %v", c.Webhooks.AllowedHosts, err)
	}
}
