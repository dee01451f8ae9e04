package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestServerKeyStaysWithItsEndpoint tries every way a client could have the
// server's own API key sent to a URL of its choosing.
func TestServerKeyStaysWithItsEndpoint(t *testing.T) {
	t.Parallel()
	attacker := fakemodel.StartTB(t)
	attacker.Handle(func(*fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "from the other endpoint"} })
	api := suite.client.API()
	ctx := e2e.Context(t, 30*time.Second)
	// It names the default profile, holding the server's key. (An agent that
	// names none follows it only while it names no base_url either: below.)
	legit := newAgent(t, e2e.TwoTools, &agentv1.AgentConfig{Profile: proto.String("default")})
	input := []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "hi"}}}
	elsewhere := proto.String(attacker.URL)

	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"CreateAgent with base_url", func() error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
				Profile: proto.String("default"), BaseUrl: elsewhere}}})
			return err
		}, "agent.config.base_url"},
		{"UpdateAgent with mask config.base_url", func() error {
			_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{
				Agent:      &agentv1.Agent{Id: legit.ID, Config: &agentv1.AgentConfig{BaseUrl: elsewhere}},
				UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"config.base_url"}},
			})
			return err
		}, "agent.config.base_url"},
		{"Send with a config override", func() error {
			return sendRaw(ctx, &agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{
				AgentId: legit.ID, Input: input, Config: &agentv1.AgentConfig{BaseUrl: elsewhere}}}})
		}, "start.config.base_url"},
		{"Send with compact.base_url", func() error {
			return sendRaw(ctx, &agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{
				AgentId: legit.ID, Input: input, Config: &agentv1.AgentConfig{Compact: &agentv1.CompactConfig{BaseUrl: elsewhere}}}}})
		}, "start.config.compact.base_url"},
		{"CreateAgent with compact.base_url", func() error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
				Compact: &agentv1.CompactConfig{BaseUrl: elsewhere}}}})
			return err
		}, "agent.config.compact.base_url"},
		{"CreateAgent with a credential header", func() error {
			_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
				Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Api-Key": "mine"}}}}})
			return err
		}, "agent.config.provider.headers"},
	}
	for _, tc := range tests {
		err := tc.call()
		if status.Code(err) != codes.InvalidArgument || !slices.Contains(badRequestFields(err), tc.field) {
			t.Errorf("%s: %v (fields %v), want INVALID_ARGUMENT naming %s", tc.name, err, badRequestFields(err), tc.field)
		}
		if err != nil && strings.Contains(err.Error(), e2e.TestKey) {
			t.Errorf("%s: the error holds the key", tc.name)
		}
	}
	if n := len(attacker.Requests()); n != 0 {
		t.Fatalf("the other endpoint got %d requests", n)
	}

	// A client's own key goes with its own base_url.
	own, err := suite.client.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{
		BaseUrl: elsewhere, ApiKey: proto.String("sk-client-own-0123456789"), Model: proto.String("m")}})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Delete(context.Background())
	res, err := own.Send(ctx, "hi", client.Callbacks{})
	if err != nil || res.Text != "from the other endpoint" {
		t.Fatalf("send with the client's own key: %+v %v", res, err)
	}
	reqs := attacker.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-client-own-0123456789" {
		t.Fatalf("the other endpoint got %d requests, authorization %q", len(reqs), reqs[0].Header.Get("Authorization"))
	}

	// An agent following the server's default profile that is given a
	// base_url of its own stops following it: the server's key stays home.
	follower := newAgent(t, e2e.TwoTools, nil)
	if _, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{
		Agent:      &agentv1.Agent{Id: follower.ID, Config: &agentv1.AgentConfig{BaseUrl: elsewhere, Model: proto.String("m")}},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"config.base_url", "config.model"}},
	}); err != nil {
		t.Fatal(err)
	}
	if st, err := follower.Get(ctx); err != nil || st.GetEffectiveModel().GetProfile() != "" || st.GetEffectiveModel().GetBaseUrlHost() != mustHost(t, attacker.URL) {
		t.Fatalf("the follower's effective model after its base_url was set: %v %v", st.GetEffectiveModel(), err)
	}
	if res, err := follower.Send(ctx, "hi", client.Callbacks{}); err != nil || res.Text != "from the other endpoint" {
		t.Fatalf("send of the follower with its own base_url: %+v %v", res, err)
	}
	if reqs := attacker.Requests(); len(reqs) != 2 || strings.Contains(fmt.Sprint(reqs[1].Header), e2e.TestKey) {
		t.Fatalf("the other endpoint got %d requests, the last with the server's key: %v", len(reqs), len(reqs) == 2 && strings.Contains(fmt.Sprint(reqs[1].Header), e2e.TestKey))
	}
}

// stopped stops the server now (for checks of its whole log); the deferred stop is then a no-op.
func stopped(t *testing.T, p *e2e.Server) {
	t.Helper()
	if err := p.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// TestNonLoopbackNeedsTLSOrToken starts agent-server on every interface:
// without TLS and without a token it refuses; -insecure starts it.
func TestNonLoopbackNeedsTLSOrToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := suite.ServerCmd(dir, []string{"-listen", "0.0.0.0:0"})
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !asExit(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "-tls-cert") || !strings.Contains(string(out), "-auth-tokens-file") {
		t.Fatalf("exit %v, output:\n%s\nwant exit 1 naming -tls-cert and -auth-tokens-file", err, out)
	}
	p, err := e2e.Launch(suite.ServerCmd(dir, []string{"-listen", "0.0.0.0:0", "-insecure"}))
	if err != nil {
		t.Fatal(err)
	}
	stopped(t, p)
	if !strings.Contains(p.Logs(), "without TLS and without a token (-insecure)") || !strings.Contains(p.Logs(), `"reflection":"auth"`) {
		t.Errorf("no warning, or reflection not auth by default off loopback:\n%s", p.Logs())
	}
}

func asExit(err error, e **exec.ExitError) bool {
	x, ok := err.(*exec.ExitError)
	*e = x
	return ok
}

// leakCommand prints the suite server's model key (e2e.TestKey) without holding
// it: the model's arguments stay clean, the tool's output does not.
const leakCommand = `a=sk-e2e-very; b=secret-key; echo "found $a-$b-0123456789"`

// TestToolOutputKeepsServerSecrets: a tool prints a secret the server holds
// (its model key): its output events, the history and the next model
// request hold [redacted] in its place.
func TestToolOutputKeepsServerSecrets(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string // what the model got back
	var bodies []string
	a := newAgent(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			args, _ := json.Marshal(map[string]string{"command": leakCommand})
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_leak", Name: "shell", Arguments: string(args)}}}
		}
		mu.Lock()
		seen = append(seen, e2e.LastToolResults(req)...)
		bodies = append(bodies, string(req.Body))
		mu.Unlock()
		return fakemodel.Turn{Text: "noted"}
	}, nil)
	ctx := e2e.Context(t, 30*time.Second)
	var events []string
	if _, err := a.Send(ctx, "print it", client.Callbacks{OnEvent: func(e *agentv1.Event) {
		if e.GetToolOutput() != nil || e.GetToolResult() != nil {
			events = append(events, protojson.Format(e))
		}
	}}); err != nil {
		t.Fatal(err)
	}
	history, err := a.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range history {
		for _, p := range m.GetParts() {
			if r := p.GetToolResult(); r != nil {
				results = append(results, protojson.Format(r))
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for what, text := range map[string]string{"the model's next request": strings.Join(seen, " "),
		"the tool's events": strings.Join(events, "\n"), "GetHistory's tool result": strings.Join(results, "\n")} {
		if !strings.Contains(text, "found [redacted]") {
			t.Errorf("%s: no [redacted] in %s", what, text)
		}
	}
	if body := strings.Join(bodies, "\n"); strings.Contains(body, e2e.TestKey) || !strings.Contains(body, "found [redacted]") {
		t.Errorf("the model request's body: %.2000s", body)
	}
}

// TestMCPListenerKeepsServerSecrets calls the same tool over the MCP
// listener (the Go MCP SDK's client): its live output and its result hold
// [redacted] in place of the server's key, and the call is audited as
// ExecuteTool is.
func TestMCPListenerKeepsServerSecrets(t *testing.T) {
	t.Parallel()
	const token = "mcp-trust-token-0123456789"
	srv, err := suite.StartServer(suite.Plugins, []string{"-mcp-listen", "127.0.0.1:0"}, "AGENTCORE_AUTH_TOKEN="+token)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if srv.Cmd.ProcessState == nil {
			srv.Kill()
		}
	}()
	ctx := e2e.Context(t, 30*time.Second)
	var mu sync.Mutex
	var progress []string
	mcpAddr, _ := srv.WaitLog(t, "mcp listening")["addr"].(string)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "trust-test"}, &mcpsdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	}).Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: "http://" + mcpAddr + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport(token)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	params := &mcpsdk.CallToolParams{Name: "shell", Arguments: map[string]string{"command": leakCommand}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), e2e.TestKey) || !strings.Contains(string(b), "found [redacted]") {
		t.Errorf("the MCP result: %s", b)
	}
	// Notifications may be handled after the result.
	live := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(progress, "")
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(live(), "found") && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(live(), e2e.TestKey) || !strings.Contains(live(), "found [redacted]") {
		t.Errorf("the MCP progress notifications: %q", live())
	}
	cs.Close()
	stopped(t, srv)
	audited := false
	for _, rec := range srv.LogLines("audit") {
		if rec["call"] == "ExecuteTool" && rec["via"] == "mcp" && rec["tenant"] == "default" && rec["tool"] == "shell" &&
			rec["outcome"] == "OK" && rec["duration"] != nil && rec["@level"] == "info" {
			audited = true
		}
	}
	if !audited || strings.Contains(srv.Logs(), token) {
		t.Errorf("no audit line for the MCP call (or the token logged):\n%s", srv.Logs())
	}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
