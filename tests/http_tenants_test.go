package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/pkg/auth"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestHTTPTenants runs a server with a tokens file over mutual TLS on both
// listeners and checks that the HTTP gateway authenticates and isolates
// tenants exactly as the gRPC API does: by token and by client certificate,
// each tenant seeing only its own agents, whichever front end made them,
// the admin check, and audit lines naming the HTTP client.
func TestHTTPTenants(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	anon := pki.issue(t, 30, pkix.Name{CommonName: "http-anon"}, nil, x509.ExtKeyUsageClientAuth)
	daveCert := pki.issue(t, 31, pkix.Name{CommonName: "dave"}, []string{"dave.agentcore.test"}, x509.ExtKeyUsageClientAuth)
	tokens := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(tokens, []byte("tenants:\n"+
		"  alice:\n    tokens: ["+aliceToken+"]\n"+
		"  bob:\n    admin: true\n    tokens: [\""+auth.HashToken(bobToken)+"\"]\n"+
		"  dave:\n    client_certs: {sans: [dave.agentcore.test]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := suite.ServerCmd(suite.Plugins, []string{"-auth-tokens-file", tokens, "-tls-cert", pki.certFile, "-tls-key", pki.keyFile,
		"-tls-client-ca", pki.caFile, "-http-listen", "127.0.0.1:0"})
	p, err := e2e.Launch(cmd, grpc.WithTransportCredentials(pki.creds(anon)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p.Cmd.ProcessState == nil {
			p.Kill()
		}
	}()
	base := &httpServer{Server: p, url: "https://" + e2e.HTTPAddr(t, p)}
	as := func(cert *tls.Certificate, token string) *httpServer {
		tc := &tls.Config{RootCAs: pki.pool, MinVersion: tls.VersionTLS12}
		if cert != nil {
			tc.Certificates = []tls.Certificate{*cert}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 30 * time.Second}
		t.Cleanup(c.CloseIdleConnections)
		return base.as(c, token)
	}
	alice, bob, dave, nobody := as(&anon, aliceToken), as(&anon, bobToken), as(&daveCert, ""), as(&anon, "")

	for _, c := range []struct {
		h  *httpServer
		id string
	}{{alice, "shared"}, {bob, "shared"}, {bob, "bob-only"}, {dave, "d1"}} {
		c.h.ok(t, request{method: "POST", path: "/v1/agents", body: `{"agentId": "` + c.id + `", "agent": {"config": {"system": "` + c.id + `"}}}`}, nil)
	}
	ids := func(h *httpServer) []string {
		var list agentv1.ListAgentsResponse
		h.ok(t, request{method: "GET", path: "/v1/agents"}, &list)
		var out []string
		for _, a := range list.GetAgents() {
			out = append(out, a.GetId())
		}
		return out
	}
	for _, c := range []struct {
		name string
		h    *httpServer
		want []string
	}{{"alice", alice, []string{"shared"}}, {"bob", bob, []string{"bob-only", "shared"}}, {"dave (by certificate)", dave, []string{"d1"}}} {
		if got := ids(c.h); !slices.Equal(got, c.want) {
			t.Errorf("%s lists %v, want %v", c.name, got, c.want)
		}
	}
	var got agentv1.GetAgentResponse
	bob.ok(t, request{method: "GET", path: "/v1/agents/shared"}, &got)
	if got.GetAgent().GetConfig().GetSystem() != "shared" {
		t.Errorf("bob's shared: %v", got.GetAgent())
	}
	for _, r := range []request{
		{method: "GET", path: "/v1/agents/bob-only"},
		{method: "GET", path: "/v1/agents/bob-only/history"},
		{method: "PATCH", path: "/v1/agents/d1", body: `{"config": {"system": "mine"}}`},
		{method: "POST", path: "/v1/agents/bob-only:stop"},
		{method: "POST", path: "/v1/agents/bob-only:send", body: `{"input": [{"text": "hi"}]}`},
		{method: "DELETE", path: "/v1/agents/bob-only"},
	} {
		resp, b := alice.do(t, r)
		if e := parseError(t, resp, b); e.status != http.StatusNotFound || e.reason != "AGENT_NOT_FOUND" {
			t.Errorf("alice %s %s on another tenant's agent: %+v", r.method, r.path, e)
		}
	}
	// Runs are the tenant's too: bob's run is not there for alice.
	resp := bob.open(t, request{method: "POST", path: "/v1/agents/bob-only:send", body: `{"input": [{"text": "hi"}]}`})
	bobEvents, _ := readRun(t, resp.Body)
	resp.Body.Close()
	if len(bobEvents) == 0 {
		t.Fatal("bob's send streamed no event")
	}
	bobRun := bobEvents[0].GetRunId()
	for _, r := range []request{
		{method: "GET", path: "/v1/runs/" + bobRun},
		{method: "GET", path: "/v1/runs/" + bobRun + ":attach"},
		{method: "POST", path: "/v1/runs/" + bobRun + "/permissions/call_x", body: `{"allow": true}`},
	} {
		resp, b := alice.do(t, r)
		if e := parseError(t, resp, b); e.status != http.StatusNotFound || e.reason != "RUN_NOT_FOUND" {
			t.Errorf("alice %s %s on bob's run: %+v", r.method, r.path, e)
		}
	}
	// Nor are bob's agent's runs, history and context, whatever the route.
	var bobBefore, bobHist agentv1.GetHistoryResponse
	bob.ok(t, request{method: "GET", path: "/v1/agents/bob-only/history"}, &bobBefore)
	for _, r := range []request{
		{method: "GET", path: "/v1/agents/bob-only/runs"},
		{method: "GET", path: "/v1/agents/bob-only:attach"},
		{method: "GET", path: "/v1/agents/bob-only:attach?afterSeq=1"},
		{method: "POST", path: "/v1/agents/bob-only:compact"},
		{method: "POST", path: "/v1/agents/bob-only:previewContext", body: `{"input": [{"text": "hi"}]}`},
		{method: "PUT", path: "/v1/agents/bob-only/history", body: `{"messages": [{"role": "ROLE_USER", "parts": [{"text": "alice was here"}]}]}`},
		{method: "POST", path: "/v1/agents/bob-only:stop", body: `{"runId": "` + bobRun + `"}`},
	} {
		resp, b := alice.do(t, r)
		if e := parseError(t, resp, b); e.status != http.StatusNotFound || e.reason != "AGENT_NOT_FOUND" {
			t.Errorf("alice %s %s on another tenant's agent: %+v", r.method, r.path, e)
		}
	}
	bob.ok(t, request{method: "GET", path: "/v1/agents/bob-only/history"}, &bobHist)
	if len(bobBefore.GetMessages()) == 0 || !proto.Equal(&bobBefore, &bobHist) {
		t.Errorf("bob's history after alice's attempts: %v, before %v", bobHist.GetMessages(), bobBefore.GetMessages())
	}
	var bobAgentRuns agentv1.ListRunsResponse
	bob.ok(t, request{method: "GET", path: "/v1/agents/bob-only/runs"}, &bobAgentRuns)
	if len(bobAgentRuns.GetRuns()) != 1 || bobAgentRuns.GetRuns()[0].GetId() != bobRun {
		t.Errorf("bob's agent's runs %v", bobAgentRuns.GetRuns())
	}
	// Tools are the server's, not a tenant's: every tenant may run them.
	for name, h := range map[string]*httpServer{"alice": alice, "dave": dave} {
		resp := h.open(t, request{method: "POST", path: "/v1/tools/count:execute", body: `{"input": {"n": 1}}`})
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"text":"counted to 1"`) {
			t.Errorf("%s executes count: %s %s", name, resp.Status, b)
		}
	}
	var aliceRuns agentv1.ListRunsResponse
	alice.ok(t, request{method: "GET", path: "/v1/runs"}, &aliceRuns)
	if len(aliceRuns.GetRuns()) != 0 {
		t.Errorf("alice lists runs %v", aliceRuns.GetRuns())
	}
	var bobRuns agentv1.ListRunsResponse
	bob.ok(t, request{method: "GET", path: "/v1/runs"}, &bobRuns)
	if len(bobRuns.GetRuns()) != 1 || bobRuns.GetRuns()[0].GetId() != bobRun {
		t.Errorf("bob lists runs %v", bobRuns.GetRuns())
	}

	resp, b := alice.do(t, request{method: "POST", path: "/v1/tools:reload"})
	if e := parseError(t, resp, b); e.status != http.StatusForbidden {
		t.Errorf("alice (not admin) reloads tools: %+v", e)
	}
	bob.ok(t, request{method: "POST", path: "/v1/tools:reload"}, nil)
	resp, b = nobody.do(t, request{method: "GET", path: "/v1/agents"})
	if e := parseError(t, resp, b); e.status != http.StatusUnauthorized || e.reason != "UNAUTHENTICATED" {
		t.Errorf("a certificate of no tenant, no token: %+v", e)
	}
	// Mutual TLS holds on the HTTP listener too.
	noCert := as(nil, aliceToken)
	req, _ := http.NewRequest("GET", base.url+"/v1/agents", nil)
	if resp, err := noCert.client.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("a request without a client certificate got %s", resp.Status)
	}

	// The same tenant over gRPC sees what it made over HTTP, and only that.
	grpcAlice, err := client.Dial(p.Addr, client.WithDialOptions(grpc.WithTransportCredentials(pki.creds(anon))), client.WithToken(aliceToken))
	if err != nil {
		t.Fatal(err)
	}
	defer grpcAlice.Close()
	list, err := grpcAlice.ListAgents(e2e.Context(t, 10*time.Second))
	if err != nil || len(list) != 1 || list[0].GetId() != "shared" || list[0].GetConfig().GetSystem() != "shared" {
		t.Errorf("alice over gRPC lists %v (%v)", list, err)
	}

	stopped(t, p)
	// Audit lines of HTTP calls name the tenant and the HTTP client's address.
	found := false
	for _, l := range strings.Split(p.Logs(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil || rec["@module"] != "agent-server.audit" {
			continue
		}
		if rec["call"] == "CreateAgent" && rec["tenant"] == "dave" && rec["agent"] == "d1" && rec["outcome"] == "OK" {
			found = true
			if rec["peer"] != "127.0.0.1" {
				t.Errorf("the audit line of an HTTP call names peer %v, want the HTTP client's 127.0.0.1: %s", rec["peer"], l)
			}
		}
		for _, secret := range []string{aliceToken, bobToken} {
			if strings.Contains(l, secret) {
				t.Errorf("an audit line holds a token: %s", l)
			}
		}
	}
	if !found {
		t.Errorf("no audit line for dave's CreateAgent over HTTP")
	}
}

// TestHTTPLimits hits each limit on agents and running sends over HTTP: a
// tenant's (limits.agents, limits.concurrent_runs) and the server's
// (-max-sessions, -max-runs). Each is 429 with the reason and scope the
// same call gets over gRPC (RESOURCE_EXHAUSTED), before any event.
func TestHTTPLimits(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(tokens, []byte("tenants:\n"+
		"  alice:\n    tokens: ["+aliceToken+"]\n    limits: {agents: 2, concurrent_runs: 1}\n"+
		"  bob:\n    tokens: ["+bobToken+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(suite.Plugins, []string{"-auth-tokens-file", tokens, "-http-listen", "127.0.0.1:0",
		"-max-sessions", "5", "-max-runs", "2"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	base := &httpServer{Server: p, url: "http://" + e2e.HTTPAddr(t, p)}
	alice, bob := base.as(nil, aliceToken), base.as(nil, bobToken)
	grpcAs := func(token string) agentv1.AgentServiceClient {
		c, err := client.Dial(p.Addr, client.WithToken(token))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.API()
	}
	grpcAlice, grpcBob := grpcAs(aliceToken), grpcAs(bobToken)
	ctx := e2e.Context(t, time.Minute)
	release := make(chan struct{})
	t.Cleanup(sync.OnceFunc(func() { close(release) }))
	held := blockingModel(release)

	// same checks that an HTTP error is 429 with the reason and scope of the gRPC one.
	same := func(what string, resp *http.Response, b []byte, grpcErr error, reason, scope string) {
		t.Helper()
		e := parseError(t, resp, b)
		info := errorInfo(grpcErr)
		if status.Code(grpcErr) != codes.ResourceExhausted || info.GetReason() != reason || info.GetMetadata()["scope"] != scope {
			t.Errorf("%s over gRPC: %v (%v), want RESOURCE_EXHAUSTED %s scope %s", what, grpcErr, info, reason, scope)
		}
		if e.status != http.StatusTooManyRequests || e.code != int32(codes.ResourceExhausted) || e.reason != reason || e.metadata["scope"] != scope {
			t.Errorf("%s over HTTP: %+v, want 429 %s scope %s", what, e, reason, scope)
		}
	}
	createGRPC := func(api agentv1.AgentServiceClient, id string) error {
		_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{AgentId: id})
		return err
	}

	// Agents: alice's two, then her limit; bob's up to the server's five.
	a1, a2 := alice.createAgent(t, held, ""), alice.createAgent(t, held, "")
	resp, b := alice.do(t, request{method: "POST", path: "/v1/agents", body: `{"agentId": "a3"}`})
	same("alice's third agent", resp, b, createGRPC(grpcAlice, "a3"), "SESSION_LIMIT", "tenant")
	b1, b2 := bob.createAgent(t, held, ""), bob.createAgent(t, held, "")
	if err := createGRPC(grpcBob, "b3"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { grpcBob.DeleteAgent(context.Background(), &agentv1.DeleteAgentRequest{AgentId: "b3"}) })
	resp, b = bob.do(t, request{method: "POST", path: "/v1/agents", body: `{"agentId": "b4"}`})
	same("the server's sixth agent", resp, b, createGRPC(grpcBob, "b4"), "SESSION_LIMIT", "server")

	// Running sends: alice's one, then her limit; bob's makes the server's two.
	running := func(h *httpServer, id string) {
		t.Helper()
		resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "hold"}]}`})
		t.Cleanup(func() { resp.Body.Close() })
		if e, ok := next(t, events(t, resp.Body), 10*time.Second); !ok || e.event != "" {
			t.Fatalf("send on %s: %s %+v", id, resp.Status, e)
		}
	}
	sendGRPC := func(api agentv1.AgentServiceClient, id string) error {
		s, err := api.Send(ctx)
		if err != nil {
			return err
		}
		if err := s.Send(&agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{AgentId: id,
			Input: []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "one more"}}}}}}); err != nil {
			return err
		}
		_, err = s.Recv()
		return err
	}
	send := func(h *httpServer, id string) (*http.Response, []byte) {
		return h.do(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "one more"}]}`})
	}
	running(alice, a1)
	resp, b = send(alice, a2)
	same("alice's second running send", resp, b, sendGRPC(grpcAlice, a2), "RUN_LIMIT", "tenant")
	running(bob, b1)
	resp, b = send(bob, b2)
	same("the server's third running send", resp, b, sendGRPC(grpcBob, b2), "RUN_LIMIT", "server")
}
