package tests

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/store/sqlite"
	"github.com/agentcore/agentcore/pkg/vault"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestConnectionRoutes calls the OAuth connections' routes of the real
// binary: without a server that requires OAuth there is nothing to list
// or connect; without a vault key a store that keeps things has no vault,
// and says which flag gives it one; the callback route answers without a
// token (the authorization server sends a browser there) and refuses a
// return that no Connect made; and a send's X-Agentcore-User is its run's.
func TestConnectionRoutes(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "vault.key")
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(raw)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	off := startHTTPServer(t, "-store", "sqlite:"+filepath.Join(t.TempDir(), "off.db"))
	on := startHTTPServer(t, "-store", "sqlite:"+filepath.Join(t.TempDir(), "on.db"), "-vault-key-file", keyFile)

	for name, h := range map[string]*httpServer{"without a key": off, "with a key": on} {
		var list agentv1.ListConnectionsResponse
		h.ok(t, request{method: "GET", path: "/v1/connections"}, &list)
		if len(list.GetConnections()) != 0 {
			t.Errorf("%s: connections %v, and no server requires OAuth", name, list.GetConnections())
		}
		resp, b := h.do(t, request{method: "POST", path: "/v1/connections/github:connect", body: "{}"})
		if e := parseError(t, resp, b); e.status != http.StatusNotFound || e.reason != "MCP_SERVER_NOT_FOUND" {
			t.Errorf("%s: Connect of an unknown server: %+v", name, e)
		}
	}
	resp, b := off.do(t, request{method: "DELETE", path: "/v1/connections/github"})
	if e := parseError(t, resp, b); e.status != http.StatusBadRequest || e.reason != "VAULT_UNAVAILABLE" || !strings.Contains(e.message, "-vault-key-file") {
		t.Errorf("Disconnect without a vault: %+v", e)
	}
	if !strings.Contains(off.Logs(), "token vault off") || !strings.Contains(on.Logs(), `"sealing_key"`) {
		t.Errorf("the start logs do not say whether the vault is on:\n%s\n%s", off.Logs(), on.Logs())
	}
	resp, b = on.do(t, request{method: "DELETE", path: "/v1/connections/github", header: http.Header{
		"Authorization": {"Bearer " + on.token}, "X-Agentcore-User": {"alice@example.com"}}})
	if e := parseError(t, resp, b); e.status != http.StatusNotFound || e.reason != "CONNECTION_NOT_FOUND" || !strings.Contains(e.message, "alice@example.com") {
		t.Errorf("Disconnect of no connection: %+v", e)
	}
	resp, b = on.do(t, request{method: "GET", path: "/v1/connections", header: http.Header{
		"Authorization": {"Bearer " + on.token}, "X-Agentcore-User": {"alice smith"}}})
	if e := parseError(t, resp, b); e.status != http.StatusBadRequest || e.violations["x-agentcore-user"] == "" {
		t.Errorf("a malformed user: %+v", e)
	}

	// A send's user is its run's.
	system := suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "done"} })
	on.ok(t, request{method: "POST", path: "/v1/agents", body: `{"agentId": "u1", "agent": {"config": {"system": "` + system + `"}}}`}, nil)
	resp, b = on.do(t, request{method: "POST", path: "/v1/agents/u1:send", body: `{"input": [{"text": "hi"}]}`, header: http.Header{
		"Authorization": {"Bearer " + on.token}, "X-Agentcore-User": {"auth0|5f7c8ec7"}}})
	runID := regexp.MustCompile(`"runId":"([^"]+)"`).FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || runID == nil {
		t.Fatalf("send: %s %s", resp.Status, b)
	}
	var run agentv1.GetRunResponse
	on.ok(t, request{method: "GET", path: "/v1/runs/" + string(runID[1])}, &run)
	if run.GetRun().GetUser() != "auth0|5f7c8ec7" {
		t.Errorf("the run of a send for auth0|5f7c8ec7: user %q", run.GetRun().GetUser())
	}

	// The callback needs no token, and refuses what no Connect made.
	for _, tc := range []struct {
		method, query string
		status        int
		text          string
	}{
		{"GET", "", http.StatusBadRequest, "carries no state"},
		{"GET", "?code=abc&state=forged.state", http.StatusBadRequest, "not made by this agent-server"},
		{"POST", "?code=abc", http.StatusMethodNotAllowed, "only takes"},
	} {
		resp, b := on.do(t, request{method: tc.method, path: "/v1/oauth/callback" + tc.query, header: http.Header{}})
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.text) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s callback%s: %s %s %s", tc.method, tc.query, resp.Status, resp.Header, b)
		}
	}
}

// TestVaultKeyRotation rotates the vault's key of a real agent-server: a
// record sealed with the old key; the server started with the new key
// first and the old one after it seals the record again at start and says
// the old key may go; the record then opens with the new key alone.
func TestVaultKeyRotation(t *testing.T) {
	t.Parallel()
	newKey := func() string {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	oldKey, nextKey := newKey(), newKey()
	db := filepath.Join(t.TempDir(), "agentcore.db")
	k := vault.Key{Tenant: "", Subject: "alice", Server: "linear"}
	withStore := func(keys string, fn func(*vault.Vault)) {
		t.Helper()
		ks, err := vault.ParseKeys(keys)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sqlite.Open(e2e.Context(t, 30*time.Second), db)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		fn(vault.New(st, ks))
	}
	withStore(oldKey, func(v *vault.Vault) {
		if _, err := v.Put(e2e.Context(t, 10*time.Second), k, &vault.Record{Token: &oauth2.Token{AccessToken: "at-rotation-canary"}}, 0); err != nil {
			t.Fatal(err)
		}
	})
	keyFile := filepath.Join(t.TempDir(), "vault.key")
	if err := os.WriteFile(keyFile, []byte("# rotated\n"+nextKey+"\n"+oldKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(suite.Plugins, []string{"-store", "sqlite:" + db, "-vault-key-file", keyFile})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = p.Stop()
		}
	})
	for _, want := range []string{`"resealed":1`, "may be dropped"} {
		if !strings.Contains(p.Logs(), want) {
			t.Errorf("the start log has no %s:\n%s", want, p.Logs())
		}
	}
	stopped = true
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	withStore(nextKey, func(v *vault.Vault) {
		r, _, err := v.Get(e2e.Context(t, 10*time.Second), k)
		if err != nil || r.Token.AccessToken != "at-rotation-canary" {
			t.Fatalf("the record with the new key alone: %v, %v", r, err)
		}
	})
	if strings.Contains(p.Logs(), "at-rotation-canary") {
		t.Error("the token is in the server's log")
	}
}
