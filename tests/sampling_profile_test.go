package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// samplerKey is the sampling profile's key: it must reach the sampler's
// endpoint only, and never a log.
const samplerKey = "sk-e2e-sampler-3f9a61"

// TestSamplingProfile: an MCP server whose definition names a sampling
// profile has its sampling requests answered by that profile's model (its
// endpoint, key and model), not the agent's; the tokens count in the run's
// usage; a definition naming a profile the server lacks fails the scan,
// saying so.
func TestSamplingProfile(t *testing.T) {
	t.Parallel()
	sampler := fakemodel.StartTB(t)
	sampler.Strict()
	var sampled atomic.Int32
	var badKey atomic.Bool
	sampler.Handle(func(req *fakemodel.Request) fakemodel.Turn {
		sampled.Add(1)
		if req.Header.Get("Authorization") != "Bearer "+samplerKey {
			badKey.Store(true)
		}
		return fakemodel.Turn{Text: "cheaply: " + e2e.LastUserText(req), Usage: &fakemodel.Usage{Input: 11, Output: 5}}
	})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent-server.yaml")
	if err := os.WriteFile(cfg, []byte(`profiles:
  cheap:
    base_url: `+sampler.URL+`
    model: cheap-model
    protocol: chat
    api_key_env: E2E_SAMPLER_KEY
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(dir, "tools")
	def := fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "args": ["full"]}, "sampling": {"profile": "cheap"}}`, suite.MCPServer)
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "test.mcp.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(tools, []string{"-config", cfg, "-store", "memory"}, "E2E_SAMPLER_KEY="+samplerKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
		if strings.Contains(p.Logs(), samplerKey) || strings.Contains(p.Logs(), e2e.TestKey) {
			t.Errorf("a profile's key is in the server's logs")
		}
	})
	c, err := client.Dial(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := e2e.Context(t, time.Minute)
	// The agent's own model must not be asked to sample.
	suite.Router.Set(t, "Be brief.", func(int, *fakemodel.Request) fakemodel.Turn {
		t.Error("the agent's model got the sampling request")
		return fakemodel.Turn{Text: "wrong model"}
	})
	a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, callOnce("ask_model", `{"text":"hi"}`)))}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Send(ctx, "sample", client.Callbacks{OnPermission: func(context.Context, *agentv1.PermissionRequestEvent) client.Decision {
		return client.Allow()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "cheap-model said: cheaply: hi" || sampled.Load() != 1 || badKey.Load() {
		t.Fatalf("result %q, %d sampling requests (a wrong key: %v)", res.Text, sampled.Load(), badKey.Load())
	}
	// Two rounds of the agent's model (100+200 in, 10+20 out) and the sampling (11, 5).
	if u := res.Usage; u.GetInputTokens() != 311 || u.GetOutputTokens() != 35 {
		t.Errorf("usage %v, want 311 in and 35 out", u)
	}

	// A definition naming a profile the server does not have fails the scan.
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "x.mcp.json"), []byte(strings.Replace(def, `"cheap"`, `"fast"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := suite.StartServer(bad, []string{"-config", cfg, "-store", "memory"}, "E2E_SAMPLER_KEY="+samplerKey)
	if err == nil {
		t.Cleanup(func() { _ = q.Stop() })
	}
	logs := ""
	if q != nil {
		logs = q.Logs()
	} else if err != nil {
		logs = err.Error()
	}
	if want := `sampling.profile: no profile \"fast\" on this server (it has cheap, default)`; !strings.Contains(logs, want) && !strings.Contains(logs, strings.ReplaceAll(want, `\"`, `"`)) {
		t.Errorf("scan of a definition naming no profile of the server: %v\n%s\nwant %q", err, logs, want)
	}
}
