package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/oauthtest"
)

// TestConsoleConnections drives the console's Connections view in headless
// chromium (tests/console/connections.mjs) against agent-server holding an
// MCP server that requires OAuth: a local authorization server and the MCP
// server it protects (internal/oauthtest), the client registered
// dynamically. A user connects through the authorization window and the
// callback route, the tenant does, the user disconnects and falls back on
// the tenant's. No token or client secret the authorization server issued
// shows in any page or in agent-server's log.
func TestConsoleConnections(t *testing.T) {
	t.Parallel()
	dir := consoleModules(t)
	as := oauthtest.Start(t, oauthtest.Options{})
	tools := t.TempDir()
	def := fmt.Sprintf(`{"transport": {"type": "http", "url": %q}, "oauth": {"grant": "authorization_code"}}`, as.MCPURL)
	if err := os.WriteFile(filepath.Join(tools, "linear.mcp.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keyFile := filepath.Join(t.TempDir(), "vault.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(tools, []string{"-http-listen", "127.0.0.1:0", "-vault-key-file", keyFile}, "AGENTCORE_AUTH_TOKEN="+e2e.HTTPToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	shots, err := os.MkdirTemp("", "agentcore-connections-shots-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "connections.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CONSOLE_URL=http://"+e2e.HTTPAddr(t, p), "CONSOLE_TOKEN="+e2e.HTTPToken,
		"CONSOLE_SERVER=linear", "CONSOLE_SHOTS="+shots, "CHROMIUM="+chromiumPath())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the browser test ran over 4 minutes:\n%s", out.String())
	}
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out.String()), "ok") {
		t.Fatalf("node connections.mjs: %v\n%s\nagent-server's log:\n%s", err, out.String(), p.Logs())
	}
	if n := as.Counts(); n.Consents != 2 || n.ByCode != 2 {
		t.Errorf("the authorization server's counts: %+v; want 2 consents, each exchanged", n)
	}
	texts := map[string]string{"agent-server's log": p.Logs()}
	for _, name := range []string{"connections-user", "connections-user-callback", "connections-tenant", "connections-tenant-callback", "connections-after"} {
		b, err := os.ReadFile(filepath.Join(shots, name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		texts["the page "+name] = string(b)
	}
	secrets := as.Secrets()
	if len(secrets) < 4 {
		t.Fatalf("the authorization server issued %d tokens and secrets", len(secrets))
	}
	for what, text := range texts {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows %.8s…, a token or secret the authorization server issued", what, s)
			}
		}
	}
}
