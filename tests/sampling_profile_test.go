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

// TestSamplingTelemetry: a tool's sampling request is a model request to
// the Observer: it moves the model and token metrics and has a chat span
// marked agentcore.sampling, naming the tool call that asked, in the run's
// trace.
func TestSamplingTelemetry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	def := fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "args": ["full"]}}`, suite.MCPServer)
	if err := os.WriteFile(filepath.Join(dir, "test.mcp.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startTelemetryServerIn(t, dir)
	ctx := e2e.Context(t, time.Minute)
	suite.Router.Set(t, "Be brief.", func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Text: "sampled", Usage: &fakemodel.Usage{Input: 7, Output: 3}}
	})
	before := scrapeMetrics(t, ts.metrics)
	a := ts.agent(t, callOnce("ask_model", `{"text":"hi"}`), nil)
	res, err := a.Send(ctx, "sample", client.Callbacks{OnPermission: func(context.Context, *agentv1.PermissionRequestEvent) client.Decision {
		return client.Allow()
	}})
	if err != nil || !strings.HasSuffix(res.Text, "said: sampled") {
		t.Fatalf("send: %+v, %v", res, err)
	}
	// Two rounds (100+200 in, 10+20 out) and the sampling (7, 3).
	moved(t, before, scrapeMetrics(t, ts.metrics), map[string]float64{
		`agentcore_model_requests_total{outcome="ok",protocol="chat"}`: 3,
		`agentcore_tokens_total{type="input"}`:                         307,
		`agentcore_tokens_total{type="output"}`:                        33,
	})
	runs := ts.recv.named("invoke_agent "+a.ID, 1)
	if len(runs) != 1 {
		t.Fatalf("%d invoke_agent spans", len(runs))
	}
	sampling := ts.recv.await(1, func(s recvSpan) bool {
		if string(s.GetTraceId()) != string(runs[0].GetTraceId()) {
			return false
		}
		for _, kv := range s.GetAttributes() {
			if kv.GetKey() == "agentcore.sampling" {
				return true
			}
		}
		return false
	})
	if len(sampling) != 1 || sampling[0].GetName() != "chat fake-model" {
		t.Fatalf("sampling spans in the run's trace: %v", spanNames(sampling))
	}
	spanAttrs(t, sampling[0], map[string]string{"agentcore.sampling": "true", "gen_ai.tool.call.id": "c1",
		"gen_ai.usage.input_tokens": "7", "gen_ai.usage.output_tokens": "3", "gen_ai.operation.name": "chat"})
	parent := ts.recv.where(func(s recvSpan) bool { return string(s.GetSpanId()) == string(sampling[0].GetParentSpanId()) })
	if len(parent) != 1 || parent[0].GetName() != "execute_tool ask_model" {
		t.Errorf("the sampling span's parent: %v, want the call's execute_tool", spanNames(parent))
	}
	// The round's requests are not marked.
	for _, s := range ts.recv.runChildren(t, a.ID) {
		if s.GetName() == "chat fake-model" && s.GetSpanId() != nil && string(s.GetSpanId()) != string(sampling[0].GetSpanId()) {
			spanAttrs(t, s, map[string]string{"agentcore.sampling": ""})
		}
	}
}
