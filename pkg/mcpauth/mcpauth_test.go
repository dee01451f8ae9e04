package mcpauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/agentcore/agentcore/internal/oauthtest"
	"github.com/agentcore/agentcore/pkg/store/memory"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/vault"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

const redirect = "http://127.0.0.1:1/v1/oauth/callback"

// setup writes a definition of the test server in a tool directory.
func setup(t *testing.T, oauth string) (*oauthtest.Server, *Authorizer, string) {
	t.Helper()
	as := oauthtest.Start(t, oauthtest.Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "files.mcp.json")
	def := `{"transport": {"type": "http", "url": "` + as.MCPURL + `"}, "oauth": ` + oauth + `}`
	if err := os.WriteFile(path, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	return as, New(func() []string { return []string{dir} }, nil), path
}

// consent is the person: it opens the URL and reads the redirect.
func consent(t *testing.T, authURL string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirect) {
		t.Fatalf("the authorization server sent the person to %q (%v)", resp.Header.Get("Location"), err)
	}
	return loc.Query()
}

func TestConnectFlow(t *testing.T) {
	ctx := context.Background()
	as, a, _ := setup(t, `{}`)
	servers, _ := a.Servers(ctx)
	if len(servers) != 1 || servers[0].Name != "files" || !servers[0].Consent {
		t.Fatalf("Servers = %+v", servers)
	}
	authURL, rec, err := a.Begin(ctx, "files", nil, redirect, "state-1")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	if !strings.HasPrefix(authURL, as.Issuer+"/authorize") || q.Get("state") != "state-1" || q.Get("code_challenge_method") != "S256" ||
		q.Get("resource") != as.MCPURL || q.Get("scope") != "mcp:tools" || q.Get("redirect_uri") != redirect {
		t.Errorf("authorization URL %s", authURL)
	}
	if rec.Pending == nil || rec.Pending.Verifier == "" || rec.Client.ID == "" || rec.Token != nil || as.Counts().Registered != 1 {
		t.Fatalf("Begin's record: %v, %+v", rec, as.Counts())
	}
	back := consent(t, authURL)
	if back.Get("state") != "state-1" {
		t.Fatalf("redirect %v", back)
	}
	if _, err := a.Complete(ctx, "files", rec, back.Get("code"), "https://evil.example"); err == nil || !strings.Contains(err.Error(), "RFC 9207") {
		t.Errorf("Complete with another issuer: %v", err)
	}
	done, err := a.Complete(ctx, "files", rec, back.Get("code"), back.Get("iss"))
	if err != nil {
		t.Fatal(err)
	}
	if done.Token == nil || done.Token.AccessToken == "" || done.Token.RefreshToken == "" || done.Pending != nil {
		t.Fatalf("Complete's record: %v", done)
	}
	// A second connect reuses the registration.
	if _, again, err := a.Begin(ctx, "files", done, redirect, "state-2"); err != nil || again.Client.ID != done.Client.ID || as.Counts().Registered != 1 {
		t.Errorf("a second Begin: %v, client %q (was %q), %+v", err, again.Client.ID, done.Client.ID, as.Counts())
	}
}

func TestBeginErrors(t *testing.T) {
	ctx := context.Background()
	_, a, _ := setup(t, `{"dynamicRegistration": false, "clientId": "app", "clientSecret": {"env": "MCPAUTH_TEST_UNSET"}}`)
	if _, _, err := a.Begin(ctx, "nope", nil, redirect, "s"); err == nil || !strings.Contains(err.Error(), `no MCP server "nope" requires OAuth`) {
		t.Errorf("unknown server: %v", err)
	}
	if _, _, err := a.Begin(ctx, "files", nil, redirect, "s"); err == nil || !strings.Contains(err.Error(), "MCPAUTH_TEST_UNSET is not set") {
		t.Errorf("a missing secret: %v", err)
	}
}

func TestClientCredentialsBegin(t *testing.T) {
	ctx := context.Background()
	as := oauthtest.Start(t, oauthtest.Options{})
	id, secret := as.RegisterClient("client_secret_post")
	t.Setenv("MCPAUTH_TEST_SECRET", secret)
	dir := t.TempDir()
	def := `{"transport": {"type": "http", "url": "` + as.MCPURL + `"}, "oauth": {"grant": "client_credentials", "clientId": "` + id + `", "clientSecret": {"env": "MCPAUTH_TEST_SECRET"}}}`
	if err := os.WriteFile(filepath.Join(dir, "svc.mcp.json"), []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	a := New(func() []string { return []string{dir} }, nil)
	authURL, rec, err := a.Begin(ctx, "svc", nil, redirect, "s")
	if err != nil || authURL != "" || rec.Token == nil || rec.Token.AccessToken == "" || as.Counts().ByClientCredentials != 1 {
		t.Fatalf("Begin = %q, %v, %v; %+v", authURL, rec, err, as.Counts())
	}
}

func TestHandler(t *testing.T) {
	ctx := context.Background()
	_, _, path := setup(t, `{}`)
	keys, err := vault.RandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	v := vault.New(memory.New(), keys)
	source := "mcp:" + path
	load := &pluginv1.CredentialRequest{Op: pluginv1.CredentialOp_CREDENTIAL_OP_LOAD}
	code := func(err error) pluginv1.HostErrorCode {
		var he *tool.HostError
		if errors.As(err, &he) {
			return he.Code
		}
		return 0
	}

	h := Handler(v, "acme", "ada")
	if _, err := h(ctx, source, load); code(err) != pluginv1.HostErrorCode_HOST_ERROR_CODE_NOT_CONNECTED || !strings.Contains(err.Error(), "POST /v1/connections/files:connect") {
		t.Errorf("LOAD without a connection: %v", err)
	}
	_, err = h(ctx, source, &pluginv1.CredentialRequest{Op: pluginv1.CredentialOp_CREDENTIAL_OP_AUTHORIZE, AuthorizationUrl: "https://as/authorize"})
	if code(err) != pluginv1.HostErrorCode_HOST_ERROR_CODE_NOT_CONNECTED {
		t.Errorf("AUTHORIZE: %v", err)
	}
	if _, err := h(ctx, "/bin/plugin", load); code(err) != pluginv1.HostErrorCode_HOST_ERROR_CODE_DENIED {
		t.Errorf("a plugin that is no MCP server: %v", err)
	}

	// The tenant's connection serves its users; a refreshed token goes back there.
	if _, err := v.Put(ctx, vault.Key{Tenant: "acme", Subject: "ada", Server: "files"}, &vault.Record{Pending: &vault.Pending{Nonce: "n"}}, vault.AnyVersion); err != nil {
		t.Fatal(err)
	}
	if _, err := h(ctx, source, load); code(err) != pluginv1.HostErrorCode_HOST_ERROR_CODE_NOT_CONNECTED {
		t.Errorf("LOAD of a record without a token (a connect under way): %v", err)
	}
	if _, err := v.Put(ctx, vault.Key{Tenant: "acme", Server: "files"}, &vault.Record{Token: &oauth2.Token{AccessToken: "at-0", RefreshToken: "rt-0"},
		Client: vault.Client{ID: "c1", TokenURL: "https://as/token"}}, vault.AnyVersion); err != nil {
		t.Fatal(err)
	}
	if res, err := h(ctx, source, load); err != nil || res.GetCredential().GetAccessToken() != "at-0" || res.GetCredential().GetTokenEndpoint() != "https://as/token" {
		t.Fatalf("LOAD of the tenant's connection: %v, %v", res, err)
	}
	save := &pluginv1.CredentialRequest{Op: pluginv1.CredentialOp_CREDENTIAL_OP_SAVE, Credential: &pluginv1.Credential{
		AccessToken: "at-1", RefreshToken: "rt-1", ClientId: "c1", TokenEndpoint: "https://as/token"}}
	if _, err := h(ctx, source, save); err != nil {
		t.Fatal(err)
	}
	res, err := h(ctx, source, load)
	if err != nil || res.GetCredential().GetAccessToken() != "at-1" || res.GetCredential().GetClientId() != "c1" {
		t.Fatalf("LOAD after SAVE: %v, %v", res, err)
	}
	if rec, _, _ := v.Get(ctx, vault.Key{Tenant: "acme", Subject: "ada", Server: "files"}); rec.Token != nil {
		t.Errorf("the user's record got the token (%v): a save goes where the record was found", rec)
	}
	// Another tenant sees none of it.
	if _, err := Handler(v, "other", "ada")(ctx, source, load); code(err) != pluginv1.HostErrorCode_HOST_ERROR_CODE_NOT_CONNECTED {
		t.Errorf("another tenant's LOAD: %v", err)
	}
	rec, _, _ := v.Get(ctx, vault.Key{Tenant: "acme", Server: "files"})
	if rec.Token == nil || rec.Token.AccessToken != "at-1" || time.Until(rec.Token.Expiry) > 0 {
		t.Errorf("stored %v", rec)
	}
}
