package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestAgentFollowsTheDefaultModel is a newcomer's first hour on one SQLite
// file: an agent created on a server without a model fails NO_MODEL and
// says it has none; once the server restarts with AGENTCORE_MODEL_* set,
// the same agent works and GetAgent names the model it follows; once the
// operator moves to a config file whose default profile is named main,
// that agent and one created with the name "default" (as servers before
// this rule pinned it) both use main, and the HTTP API says so.
func TestAgentFollowsTheDefaultModel(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	ctx := e2e.Context(t, 2*time.Minute)
	system := suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "hello from the model"} })
	noModel := []string{"AGENTCORE_MODEL_BASE_URL=", "AGENTCORE_MODEL=", "AGENTCORE_MODEL_API_KEY="}

	// 1. No model: the agent is created, reaches no model and says so.
	p1, err := suite.StartServer(suite.Plugins, []string{"-data-dir", data}, noModel...)
	if err != nil {
		t.Fatal(err)
	}
	c1 := dialTo(t, p1)
	demo, err := c1.CreateAgent(ctx, client.AgentOptions{ID: "demo", Config: &agentv1.AgentConfig{System: proto.String(system)}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := demo.Get(ctx); err != nil || st.GetEffectiveModel() != nil {
		t.Fatalf("GetAgent on a server without a model: %v, %v (want no effective model)", st.GetEffectiveModel(), err)
	}
	var ce *client.Error
	if _, err := demo.Send(ctx, "hi", client.Callbacks{}); !asClientError(err, &ce) || ce.Reason != client.ReasonNoModel {
		t.Fatalf("a send without a model: %v, want FAILED_PRECONDITION NO_MODEL", err)
	}
	stopServer(t, p1)

	// 2. The model variables set: the same stored agent follows the default profile.
	p2, err := suite.StartServer(suite.Plugins, []string{"-data-dir", data})
	if err != nil {
		t.Fatal(err)
	}
	c2 := dialTo(t, p2)
	demo = c2.Agent("demo")
	if res, err := demo.Send(ctx, "hi", client.Callbacks{}); err != nil || res.Text != "hello from the model" {
		t.Fatalf("the agent created before the model was configured: %v, %v", res, err)
	}
	host := mustHost(t, suite.Model.URL)
	st, err := demo.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &agentv1.EffectiveModel{Profile: "default", FollowsDefault: true, Model: "fake-model", Protocol: agentv1.Protocol_PROTOCOL_CHAT, BaseUrlHost: host}
	if !proto.Equal(st.GetEffectiveModel(), want) || st.GetConfig().GetProfile() != "" {
		t.Fatalf("GetAgent: effective model %v, config.profile %q; want %v and no profile pinned", st.GetEffectiveModel(), st.GetConfig().GetProfile(), want)
	}
	// As servers before this rule stored every agent: the default pinned.
	if _, err := c2.CreateAgent(ctx, client.AgentOptions{ID: "pinned", Config: &agentv1.AgentConfig{System: proto.String(system), Profile: proto.String("default")}}); err != nil {
		t.Fatal(err)
	}
	stopServer(t, p2)

	// 3. A config file whose default profile is main, and no profile named default.
	cfg := filepath.Join(t.TempDir(), "agentcore.yaml")
	if err := os.WriteFile(cfg, []byte("default_profile: main\nprofiles:\n  main:\n    base_url: "+suite.Model.URL+
		"\n    model: main-model\n    api_key_env: MAIN_MODEL_KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p3, err := suite.StartServer(suite.Plugins, []string{"-data-dir", data, "-config", cfg, "-http-listen", "127.0.0.1:0"},
		append(noModel, "MAIN_MODEL_KEY="+e2e.TestKey)...)
	if err != nil {
		t.Fatal(err)
	}
	c3 := dialTo(t, p3)
	want = &agentv1.EffectiveModel{Profile: "main", FollowsDefault: true, Model: "main-model", Protocol: agentv1.Protocol_PROTOCOL_CHAT, BaseUrlHost: host}
	for _, id := range []string{"demo", "pinned"} {
		a := c3.Agent(id)
		if res, err := a.Send(ctx, "hi", client.Callbacks{}); err != nil || res.Text != "hello from the model" {
			t.Errorf("%s on the server whose default profile is main: %v, %v", id, res, err)
		}
		if st, err := a.Get(ctx); err != nil || !proto.Equal(st.GetEffectiveModel(), want) {
			t.Errorf("%s: effective model %v, %v; want %v", id, st.GetEffectiveModel(), err, want)
		}
	}
	// The HTTP API (and so the console) gets the same field.
	resp, err := http.Get("http://" + e2e.HTTPAddr(t, p3) + "/v1/agents/demo")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got struct {
		Agent struct {
			EffectiveModel map[string]any `json:"effectiveModel"`
		} `json:"agent"`
	}
	em := &got.Agent.EffectiveModel
	if err := json.Unmarshal(body, &got); err != nil || (*em)["model"] != "main-model" || (*em)["profile"] != "main" ||
		(*em)["baseUrlHost"] != host || strings.Contains(string(body), e2e.TestKey) {
		t.Errorf("GET /v1/agents/demo: %s", body)
	}
	stopServer(t, p3)
}

// dialTo connects a client to a server of the test's own.
func dialTo(t *testing.T, p *e2e.Server) *client.Client {
	t.Helper()
	c, err := client.Dial(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stopServer stops a server of the test's own, which must stop cleanly and
// never have logged the model's key.
func stopServer(t *testing.T, p *e2e.Server) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Fatalf("agent-server did not stop cleanly: %v\n%s", err, p.Logs())
	}
	if strings.Contains(p.Logs(), e2e.TestKey) {
		t.Fatal("the API key appeared in the server's logs")
	}
}

// mustHost is the host:port of a URL.
func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
