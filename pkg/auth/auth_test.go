package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const tenantsFile = `
tenants:
  alice:
    admin: true
    tokens: ["alice-token-0123456789"]
    limits: {agents: 2, concurrent_runs: 1, budget: {model_requests: 50, wall_time: 10m, cost: 2.5}}
    profiles: [main]
    client_certs:
      subjects: ["CN=alice,O=Acme"]
  bob:
    tokens: ["%s"]
    profiles: []
    client_certs:
      sans: ["bob.acme.internal", "spiffe://acme/bob"]
`

func writeTenants(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func cert(cn string, dns ...string) *x509.Certificate {
	c := &x509.Certificate{Subject: pkix.Name{CommonName: cn, Organization: []string{"Acme"}}, DNSNames: dns}
	return c
}

func TestCheck(t *testing.T) {
	file := writeTenants(t, strings.Replace(tenantsFile, "%s", HashToken("bob-token-0123456789"), 1))
	a, err := New(Options{TokensFile: file, Token: "single-token", Profiles: []string{"main", "cheap"}})
	if err != nil {
		t.Fatal(err)
	}
	spiffe := cert("someone")
	spiffe.URIs = []*url.URL{{Scheme: "spiffe", Host: "acme", Path: "/bob"}}
	tests := []struct {
		name   string
		token  string
		cert   *x509.Certificate
		tenant string // "!" for unauthenticated
	}{
		{"plain token", "alice-token-0123456789", nil, "alice"},
		{"hashed token", "bob-token-0123456789", nil, "bob"},
		{"single token is the default admin", "single-token", nil, DefaultTenant},
		{"wrong token", "nope-nope-nope-nope", nil, "!"},
		{"the hash itself is no token", HashToken("bob-token-0123456789"), nil, "!"},
		{"no credential", "", nil, "!"},
		{"subject", "", cert("alice"), "alice"},
		{"dns SAN", "", cert("x", "bob.acme.internal"), "bob"},
		{"uri SAN", "", spiffe, "bob"},
		{"unmapped certificate", "", cert("mallory"), "!"},
		{"a wrong token beats a good certificate", "nope-nope-nope-nope", cert("alice"), "!"},
		{"a token beats the certificate", "bob-token-0123456789", cert("alice"), "bob"},
		{"certificate naming two tenants", "", cert("alice", "bob.acme.internal"), "!"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tn, err := a.Check(tc.token, tc.cert)
			if tc.tenant == "!" {
				if !errors.Is(err, ErrUnauthenticated) {
					t.Fatalf("got %v, %v; want unauthenticated", tn, err)
				}
				if tc.token != "" && strings.Contains(err.Error(), tc.token) {
					t.Errorf("the error repeats the token: %v", err)
				}
				return
			}
			if err != nil || tn.ID != tc.tenant {
				t.Fatalf("got %v, %v; want %q", tn, err, tc.tenant)
			}
		})
	}
	alice, _ := a.Lookup("alice")
	if !alice.Admin || alice.MaxAgents != 2 || alice.MaxConcurrentRuns != 1 || !alice.AllowsProfile("main") || alice.AllowsProfile("cheap") {
		t.Errorf("alice %+v", alice)
	}
	if b := alice.Budget; b.GetModelRequests() != 50 || b.GetWallTime().AsDuration() != 10*time.Minute || b.GetCost() != 2.5 || b.InputTokens != nil {
		t.Errorf("alice's budget %v", b)
	}
	bob, _ := a.Lookup("bob")
	if bob.Admin || bob.AllowsProfile("main") {
		t.Errorf("bob %+v: profiles [] allows none", bob)
	}
	def, _ := a.Lookup(DefaultTenant)
	if !def.Admin || !def.AllowsProfile("cheap") {
		t.Errorf("default tenant %+v", def)
	}
}

func TestOpenWithoutCredentials(t *testing.T) {
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Required() {
		t.Error("Required without token or file")
	}
	tn, err := a.Check("anything", nil)
	if err != nil || tn.ID != DefaultTenant || !tn.Admin {
		t.Errorf("open server: %v %v", tn, err)
	}
}

func TestReload(t *testing.T) {
	file := writeTenants(t, "tenants:\n  alice:\n    tokens: [alice-token-0123456789]\n")
	a, err := New(Options{TokensFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Check("", nil); err == nil {
		t.Error("a tokens file without the single token: no credential must fail")
	}
	if err := os.WriteFile(file, []byte("tenants:\n  carol:\n    tokens: [carol-token-0123456789]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Reload(); err != nil || n != 1 {
		t.Fatalf("Reload = %d, %v", n, err)
	}
	if _, err := a.Check("alice-token-0123456789", nil); err == nil {
		t.Error("alice's token works after the reload removed her")
	}
	if tn, err := a.Check("carol-token-0123456789", nil); err != nil || tn.ID != "carol" {
		t.Errorf("carol after the reload: %v %v", tn, err)
	}
	// A broken file keeps the previous tenants.
	if err := os.WriteFile(file, []byte("tenants:\n  carol:\n    tokenz: [x]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Reload(); err == nil || !strings.Contains(err.Error(), "tokenz") {
		t.Errorf("Reload of a broken file = %v, want an error naming the key", err)
	}
	if tn, err := a.Check("carol-token-0123456789", nil); err != nil || tn.ID != "carol" {
		t.Errorf("carol after a failed reload: %v %v", tn, err)
	}
}

func TestParseTenantsErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"unknown key", "tenants:\n  a:\n    tokens: [aaaaaaaaaaaaaaaaaaaa]\n    color: red\n", "color"},
		{"short plain token", "tenants:\n  a:\n    tokens: [short]\n", "at least 16"},
		{"bad hash", "tenants:\n  a:\n    tokens: [\"sha256:abc\"]\n", "64 hex"},
		{"no credential", "tenants:\n  a:\n    admin: true\n", "never be used"},
		{"unknown profile", "tenants:\n  a:\n    tokens: [aaaaaaaaaaaaaaaaaaaa]\n    profiles: [nope]\n", "no profile \"nope\""},
		{"negative limit", "tenants:\n  a:\n    tokens: [aaaaaaaaaaaaaaaaaaaa]\n    limits: {agents: -1}\n", "negative"},
		{"bad budget", "tenants:\n  a:\n    tokens: [aaaaaaaaaaaaaaaaaaaa]\n    limits: {budget: {wall_time: 0s}}\n", "limits.budget"},
		{"bad id", "tenants:\n  \"a b\":\n    tokens: [aaaaaaaaaaaaaaaaaaaa]\n", "tenant id"},
		{"json too", `{"tenants": {"a": {"tokens": ["aaaaaaaaaaaaaaaaaaaa"], "admin": [1]}}}`, "bool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTenants([]byte(tc.body), []string{"main"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "aaaaaaaaaaaaaaaaaaaa") {
				t.Errorf("the error repeats a token: %v", err)
			}
		})
	}
	// The same token for two tenants fails the load.
	file := writeTenants(t, "tenants:\n  a:\n    tokens: [aaaaaaaaaaaaaaaaaaaa]\n  b:\n    tokens: [aaaaaaaaaaaaaaaaaaaa]\n")
	if _, err := New(Options{TokensFile: file}); err == nil || !strings.Contains(err.Error(), "names one tenant") {
		t.Errorf("shared token: %v", err)
	}
}

func TestBearerToken(t *testing.T) {
	for in, want := range map[string]string{"Bearer abc": "abc", "bearer  abc ": "abc", "Basic abc": "", "abc": "", "Bearer ": ""} {
		if got := BearerToken([]string{in}); got != want {
			t.Errorf("BearerToken(%q) = %q, want %q", in, got, want)
		}
	}
}
