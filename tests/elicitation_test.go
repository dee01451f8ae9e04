package tests

import (
	"context"
	"fmt"
	"net/http"
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

// mcpToolServer starts an agent-server of the test's own whose tools are
// the MCP test server's (go-sdk, over stdio), with the HTTP listener.
func mcpToolServer(t *testing.T, extra ...string) *httpServer {
	t.Helper()
	dir := t.TempDir()
	def := fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "args": ["full"]}}`, suite.MCPServer)
	if err := os.WriteFile(filepath.Join(dir, "test.mcp.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := suite.StartServer(dir, append([]string{"-http-listen", "127.0.0.1:0"}, extra...), "AGENTCORE_AUTH_TOKEN="+e2e.HTTPToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
		if strings.Contains(p.Logs(), e2e.TestKey) || strings.Contains(p.Logs(), e2e.HTTPToken) {
			t.Errorf("a secret appeared in the server's logs")
		}
	})
	return &httpServer{Server: p, url: "http://" + e2e.HTTPAddr(t, p), token: e2e.HTTPToken}
}

// mcpToolClient is mcpToolServer with a Go client of it, closed at the end.
func mcpToolClient(t *testing.T) (*httpServer, *client.Client) {
	t.Helper()
	h := mcpToolServer(t)
	c, err := client.Dial(h.Addr, client.WithToken(e2e.HTTPToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return h, c
}

// callOnce makes the model call tool with args, then answer with the
// tool's result.
func callOnce(tool, args string) e2e.Script {
	return func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: tool, Arguments: args}}, Usage: &fakemodel.Usage{Input: 100, Output: 10}}
		}
		return fakemodel.Turn{Text: strings.Join(e2e.LastToolResults(req), ""), Usage: &fakemodel.Usage{Input: 200, Output: 20}}
	}
}

// TestElicitationOverHTTP runs an MCP server's tool (the go-sdk's) that asks
// the user during the call (elicitation/create, as a multi round-trip
// request) through the real agent-server: the request is an event on the
// run's HTTP stream and in GetRun, answered over HTTP; fields left out get
// the schema's defaults; a wrong answer, a second answer and a permission
// answer to its id are refused; a declined one reaches the tool; one no one
// answers is cancelled after the permission timeout.
func TestElicitationOverHTTP(t *testing.T) {
	t.Parallel()
	h := mcpToolServer(t, "-permission-timeout", "2s")

	// run sends a task to a new agent and hands each elicitation request to answer; it
	// returns the tool's result and the elicitation results seen.
	run := func(t *testing.T, answer func(runID string, e *agentv1.ElicitationRequestEvent)) (string, []*agentv1.ElicitationResultEvent) {
		id := h.createAgent(t, callOnce("ask_user", `{}`), "")
		resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "ask"}]}`})
		defer resp.Body.Close()
		ch := events(t, resp.Body)
		var results []*agentv1.ElicitationResultEvent
		var tool string
		for {
			e, ok := next(t, ch, 20*time.Second)
			if !ok {
				t.Fatal("the stream ended without a result")
			}
			if e.event == "error" {
				t.Fatalf("error event: %s", e.data)
			}
			if strings.Contains(e.data, e2e.TestKey) || strings.Contains(e.data, e2e.HTTPToken) {
				t.Errorf("a secret in an event: %s", e.data)
			}
			ev := runEvent(t, e)
			if r := ev.GetElicitationRequest(); r != nil {
				answer(ev.GetRunId(), r)
			}
			if r := ev.GetElicitationResult(); r != nil {
				results = append(results, r)
			}
			if r := ev.GetToolResult(); r != nil {
				tool = r.GetOutput().GetText()
			}
			if ev.GetResult() != nil {
				return tool, results
			}
		}
	}

	t.Run("accepted with defaults", func(t *testing.T) {
		tool, results := run(t, func(runID string, e *agentv1.ElicitationRequestEvent) {
			if e.GetMessage() != "Who are you?" || e.GetToolName() != "ask_user" || e.GetToolCallId() != "c1" ||
				e.GetRequestedSchema().GetFields()["properties"].GetStructValue().GetFields()["greeting"] == nil {
				t.Errorf("request %v", e)
			}
			path := "/v1/runs/" + runID + "/elicitations/" + e.GetElicitationId()
			var got agentv1.GetRunResponse
			h.ok(t, request{method: "GET", path: "/v1/runs/" + runID}, &got)
			if p := got.GetRun().GetPendingElicitations(); len(p) != 1 || p[0].GetElicitationId() != e.GetElicitationId() || len(got.GetRun().GetPendingPermissions()) != 0 {
				t.Errorf("GetRun: pending elicitations %v, permissions %v", p, got.GetRun().GetPendingPermissions())
			}
			for _, c := range []struct {
				r      request
				status int
				reason string
			}{
				{request{method: "POST", path: path, body: `{"action": "ELICITATION_ACTION_ACCEPT", "content": {"name": 5}}`}, 400, "INVALID_ARGUMENT"},
				{request{method: "POST", path: path, body: `{"action": "ELICITATION_ACTION_DECLINE", "content": {"name": "x"}}`}, 400, "INVALID_ARGUMENT"},
				{request{method: "POST", path: path, body: `{}`}, 400, "INVALID_ARGUMENT"},
				{request{method: "POST", path: "/v1/runs/" + runID + "/permissions/" + e.GetElicitationId(), body: `{"allow": true}`}, 404, "PERMISSION_NOT_FOUND"},
				{request{method: "POST", path: "/v1/runs/" + runID + "/elicitations/c1~elicit-nope", body: `{"action": "ELICITATION_ACTION_CANCEL"}`}, 404, "ELICITATION_NOT_FOUND"},
			} {
				r, b := h.do(t, c.r)
				if e := parseError(t, r, b); e.status != c.status || e.reason != c.reason {
					t.Errorf("%s %s: %+v, want %d %s", c.r.method, c.r.body, e, c.status, c.reason)
				}
			}
			var out agentv1.RespondElicitationResponse
			h.ok(t, request{method: "POST", path: path, body: `{"action": "ELICITATION_ACTION_ACCEPT", "content": {"name": "Ada"}}`}, &out)
			if f := out.GetContent().GetFields(); f["name"].GetStringValue() != "Ada" || f["greeting"].GetStringValue() != "hello" {
				t.Errorf("the content the tool got: %v", out.GetContent())
			}
			r, b := h.do(t, request{method: "POST", path: path, body: `{"action": "ELICITATION_ACTION_CANCEL"}`})
			if e := parseError(t, r, b); e.status != http.StatusBadRequest || e.code != 9 || e.reason != "ELICITATION_ANSWERED" {
				t.Errorf("a second answer: %+v, want 400 FAILED_PRECONDITION ELICITATION_ANSWERED", e)
			}
		})
		if tool != "hello, Ada" {
			t.Errorf("the tool's result: %q", tool)
		}
		if len(results) != 1 || results[0].GetAction() != agentv1.ElicitationAction_ELICITATION_ACTION_ACCEPT || results[0].GetTimedOut() {
			t.Errorf("elicitation results: %v", results)
		}
	})

	t.Run("declined", func(t *testing.T) {
		tool, _ := run(t, func(runID string, e *agentv1.ElicitationRequestEvent) {
			h.ok(t, request{method: "POST", path: "/v1/runs/" + runID + "/elicitations/" + e.GetElicitationId(), body: `{"action": "ELICITATION_ACTION_DECLINE"}`}, nil)
		})
		if tool != "decline" {
			t.Errorf("the tool's result: %q", tool)
		}
	})

	t.Run("not answered", func(t *testing.T) {
		start := time.Now()
		tool, results := run(t, func(string, *agentv1.ElicitationRequestEvent) {})
		if tool != "cancel" || len(results) != 1 || !results[0].GetTimedOut() || results[0].GetAction() != agentv1.ElicitationAction_ELICITATION_ACTION_CANCEL {
			t.Errorf("the tool's result %q, elicitation results %v", tool, results)
		}
		if d := time.Since(start); d < 2*time.Second {
			t.Errorf("cancelled after %s, before the permission timeout", d)
		}
	})
}

// TestSamplingCountedInUsage runs an MCP server's tool that samples the
// client's model (sampling/createMessage): agent-server answers with the
// agent's model, after asking when the permission mode asks for the tool,
// and the sampled tokens count in the run's usage. The Go client answers
// the permission requests and, through OnElicitation, an elicitation.
func TestSamplingCountedInUsage(t *testing.T) {
	t.Parallel()
	_, c := mcpToolClient(t)
	ctx := e2e.Context(t, time.Minute)
	var sampled atomic.Int32
	suite.Router.Set(t, "Be brief.", func(_ int, req *fakemodel.Request) fakemodel.Turn {
		sampled.Add(1)
		return fakemodel.Turn{Text: "sampled: " + e2e.LastUserText(req), Usage: &fakemodel.Usage{Input: 7, Output: 3}}
	})
	newAgent := func(s e2e.Script) *client.Agent {
		a, err := c.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, s))}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := newAgent(callOnce("ask_model", `{"text":"hi"}`))
	var asked []string
	res, err := a.Send(ctx, "sample", client.Callbacks{OnPermission: func(_ context.Context, p *agentv1.PermissionRequestEvent) client.Decision {
		asked = append(asked, p.GetToolCallId())
		return client.Allow()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(res.Text, "said: sampled: hi") || sampled.Load() != 1 {
		t.Fatalf("result %q, %d sampling requests", res.Text, sampled.Load())
	}
	if len(asked) != 2 || asked[0] != "c1" || !strings.HasPrefix(asked[1], "c1~sample-") {
		t.Errorf("permission requests: %v, want the call's, then its sampling's", asked)
	}
	// Two rounds of the agent's model (100+200 in, 10+20 out) and the sampling (7, 3).
	if u := res.Usage; u.GetInputTokens() != 307 || u.GetOutputTokens() != 33 {
		t.Errorf("usage %v, want 307 in and 33 out", u)
	}

	// Denied: the server's sampling fails, and the tool says so.
	res, err = newAgent(callOnce("ask_model", `{"text":"hi"}`)).Send(ctx, "sample", client.Callbacks{OnPermission: func(_ context.Context, p *agentv1.PermissionRequestEvent) client.Decision {
		if strings.Contains(p.GetToolCallId(), "~sample-") {
			return client.Deny("not today")
		}
		return client.Allow()
	}})
	if err != nil || !strings.Contains(res.Text, "not today") || sampled.Load() != 1 {
		t.Fatalf("denied sampling: %+v %v (%d sampling requests)", res, err, sampled.Load())
	}

	// The Go client's OnElicitation answers an elicitation.
	res, err = newAgent(callOnce("ask_user", `{}`)).Send(ctx, "ask", client.Callbacks{OnElicitation: func(_ context.Context, e *agentv1.ElicitationRequestEvent) client.Elicited {
		return client.Accept(map[string]any{"name": "Grace", "greeting": "hi"})
	}})
	if err != nil || res.Text != "hi, Grace" {
		t.Fatalf("elicitation answered by OnElicitation: %+v %v", res, err)
	}
}

// pyElicit is a program of the Python client: it sends a task to agent
// argv[3] and answers its elicitation from on_elicitation with
// respond_elicitation, leaving the greeting to the schema's default.
const pyElicit = `import sys
from agentcore.client import Agent, Callbacks, Client
addr, token, agent_id = sys.argv[1:4]
with Client(addr, token=token) as c:
    got = {}
    def on_elicitation(e):
        got.update(c.respond_elicitation(e.run_id, e.elicitation_request.elicitation_id, "accept", {"name": "Lin"}))
    res = Agent(c, agent_id).send("ask", Callbacks(on_elicitation=on_elicitation,
        on_elicitation_result=lambda r: print("result", r.action)))
    print("got", sorted(got.items()))
    print("text", res.text)
`

// TestPythonElicitation answers an MCP server's elicitation from the
// Python client (Callbacks.on_elicitation, Client.respond_elicitation).
func TestPythonElicitation(t *testing.T) {
	t.Parallel()
	py := pythonClientRuntime(t)
	h := mcpToolServer(t)
	id := h.createAgent(t, callOnce("ask_user", `{}`), "")
	file := filepath.Join(t.TempDir(), "elicit.py")
	if err := os.WriteFile(file, []byte(pyElicit), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runPython(t, py, t.TempDir(), nil, file, h.Addr, e2e.HTTPToken, id)
	for _, want := range []string{"result 1", "got [('greeting', 'hello'), ('name', 'Lin')]", "text hello, Lin"} {
		if !strings.Contains(out, want) {
			t.Errorf("the program's output lacks %q:\n%s", want, out)
		}
	}
}
