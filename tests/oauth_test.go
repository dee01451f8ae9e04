package tests

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/internal/oauthtest"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestMCPOAuthEndToEnd uses a tool of an OAuth-protected MCP server (a
// local authorization server, oauthtest) through the real agent-server:
// discovery leaves the unconnected server's tools out; a Connect's URL,
// opened by a browser that consents, comes back to the callback route,
// which keeps the token in the vault and discovers the server's tools; a run calls the tool
// twice with the access token expiring between the calls, and the second
// call's token is the refreshed one; once disconnected, a run's call ends
// with an error result naming the server to connect. No token or secret
// the authorization server issued shows in an event, the server's log, or
// the environment of a plugin process.
func TestMCPOAuthEndToEnd(t *testing.T) {
	t.Parallel()
	as := oauthtest.Start(t, oauthtest.Options{TokenLifetime: 2 * time.Second})
	dir := t.TempDir()
	def := fmt.Sprintf(`{"transport": {"type": "http", "url": %q}, "oauth": {}}`, as.MCPURL)
	if err := os.WriteFile(filepath.Join(dir, "files.mcp.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "vault.key")
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(dir, []string{"-http-listen", "127.0.0.1:0", "-vault-key-file", keyFile}, "AGENTCORE_AUTH_TOKEN="+e2e.HTTPToken)
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string // checked against the logs when the server has stopped
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
		for _, s := range append(secrets, as.Secrets()...) {
			if strings.Contains(p.Logs(), s) {
				t.Errorf("a token or client secret of the authorization server is in agent-server's log")
			}
		}
	})
	h := &httpServer{Server: p, url: "http://" + e2e.HTTPAddr(t, p), token: e2e.HTTPToken}
	if !strings.Contains(p.Logs(), "leaving out the tools of a server that is not connected") || !strings.Contains(p.Logs(), "files:connect") {
		t.Errorf("the start log does not say the server's tools wait for a connection:\n%s", p.Logs())
	}

	// Connect: the person opens the URL, consents, and the browser comes back.
	var list agentv1.ListConnectionsResponse
	h.ok(t, request{method: "GET", path: "/v1/connections"}, &list)
	if len(list.GetConnections()) != 1 || list.GetConnections()[0].GetServer() != "files" {
		t.Fatalf("connections: %v", list.GetConnections())
	}
	var conn agentv1.ConnectResponse
	h.ok(t, request{method: "POST", path: "/v1/connections/files:connect", body: "{}"}, &conn)
	if !strings.HasPrefix(conn.GetAuthorizationUrl(), as.Issuer+"/authorize?") {
		t.Fatalf("Connect's URL: %q", conn.GetAuthorizationUrl())
	}
	resp, err := http.Get(conn.GetAuthorizationUrl())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(resp.Request.URL.Path, "/v1/oauth/callback") {
		t.Fatalf("the browser ended at %s: %s", resp.Request.URL, resp.Status)
	}

	// A run whose token expires between its two calls.
	script := func(step int, req *fakemodel.Request) fakemodel.Turn {
		switch step {
		case 0, 1:
			if step == 1 {
				time.Sleep(2500 * time.Millisecond) // the access token expires
			}
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c" + strconv.Itoa(step), Name: "whoami", Arguments: `{}`}}}
		default:
			return fakemodel.Turn{Text: "done"}
		}
	}
	run := func(script e2e.Script) ([]string, []string) {
		id := h.createAgent(t, script, "")
		resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "who am I?"}]}`})
		defer resp.Body.Close()
		ch := events(t, resp.Body)
		var results, data []string
		for {
			e, ok := next(t, ch, 30*time.Second)
			if !ok {
				t.Fatal("the stream ended without a result")
			}
			data = append(data, e.data)
			ev := runEvent(t, e)
			if r := ev.GetToolResult(); r != nil {
				results = append(results, fmt.Sprintf("error=%t %s%s", r.GetError(), r.GetOutput().GetText(), r.GetOutput().GetJson()))
			}
			if ev.GetResult() != nil || e.event == "error" {
				return results, data
			}
		}
	}
	results, data := run(script)
	if len(results) != 2 || strings.Contains(results[0], "error=true") || strings.Contains(results[1], "error=true") ||
		!strings.Contains(results[0], "person-") {
		t.Fatalf("the tool's results: %q", results)
	}
	if c := as.Counts(); c.ByCode != 1 || c.ByRefresh < 1 || c.Calls != 2 {
		t.Errorf("the authorization server's counts: %+v (want one code exchange, a refresh, two calls)", c)
	}
	secrets = as.Secrets()
	checkNoSecret(t, "an event", strings.Join(data, "\n"), secrets)
	checkNoSecret(t, "a plugin's environment", pluginEnvironments(t, p.Cmd.Process.Pid), secrets)

	// Disconnected, the call says which server to connect, and how.
	h.ok(t, request{method: "DELETE", path: "/v1/connections/files"}, nil)
	results, data = run(callOnce("whoami", `{}`))
	if len(results) != 1 || !strings.Contains(results[0], "error=true") || !strings.Contains(results[0], `MCP server "files" is not connected`) ||
		!strings.Contains(results[0], "POST /v1/connections/files:connect") {
		t.Errorf("the call of a disconnected server: %q", results)
	}
	checkNoSecret(t, "an event", strings.Join(data, "\n"), secrets)
}

func checkNoSecret(t *testing.T, where, text string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("a token or client secret of the authorization server is in %s", where)
		}
	}
}

// pluginEnvironments is the environment of every process below pid.
func pluginEnvironments(t *testing.T, pid int) string {
	t.Helper()
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The parent is the second field after the command's closing parenthesis.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			parent, _ := strconv.Atoi(fields[1])
			children[parent] = append(children[parent], child)
		}
	}
	var env strings.Builder
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c), "environ"))
			env.Write(b)
			walk(c)
		}
	}
	walk(pid)
	if env.Len() == 0 {
		t.Error("no plugin process to look at")
	}
	return env.String()
}
