package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestHTTPGateway(t *testing.T) {
	t.Parallel()
	h := startHTTPServer(t, "-max-message-bytes", "1048576", "-http-cors-origin", "https://app.example")
	t.Run("unary routes", func(t *testing.T) { testHTTPUnaryRoutes(t, h) })
	t.Run("errors", func(t *testing.T) { testHTTPErrors(t, h) })
	t.Run("auth and cors", func(t *testing.T) { testHTTPAuthAndCORS(t, h) })
	t.Run("send streams events", func(t *testing.T) { testHTTPSendStream(t, h) })
	t.Run("send errors", func(t *testing.T) { testHTTPSendErrors(t, h) })
	t.Run("client going away stops the run", func(t *testing.T) { testHTTPDisconnect(t, h) })
	t.Run("stop a live run", func(t *testing.T) { testHTTPStop(t, h) })
	t.Run("execute tool", func(t *testing.T) { testHTTPExecuteTool(t, h) })
	t.Run("compact", func(t *testing.T) { testHTTPCompact(t, h) })
	t.Run("runs", func(t *testing.T) { testHTTPRuns(t, h) })
	t.Run("reconnect with Last-Event-ID", func(t *testing.T) { testHTTPReconnect(t, h) })
	t.Run("permissions answered over HTTP", func(t *testing.T) { testHTTPPermissions(t, h) })
	t.Run("openapi and console", func(t *testing.T) { testHTTPDocuments(t, h) })
	t.Run("docs curl examples", func(t *testing.T) { testHTTPDocs(t, h) })
}

// docsCurl matches the curl commands of docs/http.md: method, path, body, a
// header, and the status a comment after them expects.
var docsCurl = regexp.MustCompile(`(?m)^curl -[sN](?: -X (\w+))? '?localhost:8080([^'\s]+)'?(?: -d '([^']*)')?(?: -H '([^']*)')?(?:[ \t]+# (\d{3}))?`)

// testHTTPDocs runs the curl commands of docs/http.md, in order, against the
// server (with its token): each must answer as shown.
// RUN_ID and CALL_ID stand for the run of the last send and its permission
// request; a send that asks for a permission and goes on without its client
// is left at the request.
func testHTTPDocs(t *testing.T, h *httpServer) {
	b, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "docs", "http.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	const system = "Use the tools to do the task."
	suite.Router.Set(t, system, func(_ int, req *fakemodel.Request) fakemodel.Turn {
		if results := e2e.LastToolResults(req); len(results) > 0 { // each send: a call, then an answer
			return fakemodel.Turn{Text: "I said: " + strings.Join(results, "")}
		}
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
	})
	defer h.do(t, request{method: "DELETE", path: "/v1/agents/demo"})
	calls := docsCurl.FindAllStringSubmatch(text, -1)
	if len(calls) < 10 {
		t.Fatalf("found %d curl commands in docs/http.md", len(calls))
	}
	runID, callID := "", ""
	for _, c := range calls {
		path := strings.NewReplacer("RUN_ID", runID, "CALL_ID", callID).Replace(c[2])
		method, body, header, want := c[1], c[3], c[4], http.StatusOK
		if method == "" {
			method = "GET"
		}
		if c[5] != "" {
			want, _ = strconv.Atoi(c[5])
		}
		r := request{method: method, path: path, body: body}
		if name, value, ok := strings.Cut(header, ": "); ok {
			r.header = http.Header{"Authorization": {"Bearer " + e2e.HTTPToken}, name: {value}}
		}
		if !strings.HasSuffix(path, ":send") {
			resp, got := h.do(t, r)
			if resp.StatusCode != want || strings.Contains(string(got), "event: error") {
				t.Errorf("docs/http.md: %s\n%s %s", c[0], resp.Status, got)
			}
			continue
		}
		resp := h.open(t, r)
		if resp.StatusCode != want {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("docs/http.md: %s\n%s %s", c[0], resp.Status, b)
		}
		for e := range events(t, resp.Body) {
			if e.event == "error" {
				t.Errorf("docs/http.md: %s\nerror event %s", c[0], e.data)
				break
			}
			ev := runEvent(t, e)
			runID = ev.GetRunId()
			if p := ev.GetPermissionRequest(); p != nil && strings.Contains(body, "ON_DISCONNECT_CONTINUE") {
				callID = p.GetToolCallId()
				break // the run waits for its answer, the next command
			}
		}
		resp.Body.Close()
	}
}

func testHTTPUnaryRoutes(t *testing.T, h *httpServer) {
	system, _ := json.Marshal(suite.Router.Add(t, e2e.TwoTools))
	var created agentv1.CreateAgentResponse
	h.ok(t, request{method: "POST", path: "/v1/agents", body: `{"agentId": "http-a", "agent": {"config": {"system": ` + string(system) +
		`, "maxSteps": 5}, "tools": {"names": ["say_hello", "add"]}}, "history": [{"role": "ROLE_USER", "parts": [{"text": "earlier"}]}]}`}, &created)
	if a := created.GetAgent(); a.GetId() != "http-a" || a.GetConfig().GetMaxSteps() != 5 || a.GetHistoryLength() != 1 {
		t.Fatalf("created %v", a)
	}
	defer h.do(t, request{method: "DELETE", path: "/v1/agents/http-a"})

	var got agentv1.GetAgentResponse
	h.ok(t, request{method: "GET", path: "/v1/agents/http-a"}, &got)
	if got.GetAgent().GetState() != agentv1.AgentState_AGENT_STATE_IDLE || got.GetAgent().GetHasApiKey() {
		t.Errorf("get: %v", got.GetAgent())
	}
	var list agentv1.ListAgentsResponse
	h.ok(t, request{method: "GET", path: "/v1/agents?pageSize=1000"}, &list)
	found := false
	for _, a := range list.GetAgents() {
		found = found || a.GetId() == "http-a"
	}
	if !found {
		t.Errorf("list lacks http-a: %v", list.GetAgents())
	}

	// PATCH: only the masked field changes.
	var updated agentv1.UpdateAgentResponse
	h.ok(t, request{method: "PATCH", path: "/v1/agents/http-a?updateMask=config.max_steps",
		body: `{"config": {"maxSteps": 9, "maxToolOutput": 77}}`}, &updated)
	if c := updated.GetAgent().GetConfig(); c.GetMaxSteps() != 9 || c.MaxToolOutput != nil {
		t.Errorf("patch with a mask: %v", c)
	}

	var set agentv1.SetHistoryResponse
	h.ok(t, request{method: "PUT", path: "/v1/agents/http-a/history", body: `{"messages": [
		{"role": "ROLE_USER", "parts": [{"text": "hello"}]}, {"role": "ROLE_ASSISTANT", "parts": [{"text": "hi there"}]}]}`}, &set)
	if set.GetHistoryLength() != 2 {
		t.Errorf("set history: %v", &set)
	}
	var hist agentv1.GetHistoryResponse
	h.ok(t, request{method: "GET", path: "/v1/agents/http-a/history?includeTurns=true&includeRendered=true"}, &hist)
	if len(hist.GetMessages()) != 2 || len(hist.GetTurns()) == 0 || !strings.Contains(hist.GetRendered(), "hi there") {
		t.Errorf("history: %v", &hist)
	}
	var preview agentv1.PreviewContextResponse
	h.ok(t, request{method: "POST", path: "/v1/agents/http-a:previewContext", body: `{"input": [{"text": "next"}]}`}, &preview)
	if len(preview.GetMessages()) != 3 || preview.GetTokens() <= 0 {
		t.Errorf("preview: %v", &preview)
	}
	var stop agentv1.StopResponse
	h.ok(t, request{method: "POST", path: "/v1/agents/http-a:stop"}, &stop)
	if stop.GetStopped() {
		t.Errorf("stop of an idle agent says it stopped a run")
	}
	var tools agentv1.ListToolsResponse
	h.ok(t, request{method: "GET", path: "/v1/tools"}, &tools)
	if len(tools.GetTools()) < 5 {
		t.Errorf("tools: %d", len(tools.GetTools()))
	}
	var reload agentv1.ReloadToolsResponse
	h.ok(t, request{method: "POST", path: "/v1/tools:reload"}, &reload)
	if int(reload.GetTools()) != len(tools.GetTools()) {
		t.Errorf("reload found %d tools, list had %d", reload.GetTools(), len(tools.GetTools()))
	}
	var health struct{ Status string }
	h.ok(t, request{method: "GET", path: "/healthz", header: http.Header{}}, &health)
	if health.Status != "SERVING" {
		t.Errorf("healthz: %+v", health)
	}
	var deleted agentv1.DeleteAgentResponse
	h.ok(t, request{method: "DELETE", path: "/v1/agents/http-a"}, &deleted)
	resp, b := h.do(t, request{method: "GET", path: "/v1/agents/http-a"})
	if e := parseError(t, resp, b); e.status != http.StatusNotFound || e.reason != "AGENT_NOT_FOUND" {
		t.Errorf("get after delete: %+v", e)
	}
}

func testHTTPErrors(t *testing.T, h *httpServer) {
	for _, id := range []string{"http-exists", "http-norun"} {
		h.ok(t, request{method: "POST", path: "/v1/agents", body: `{"agentId": "` + id + `"}`}, nil)
		defer h.do(t, request{method: "DELETE", path: "/v1/agents/" + id})
	}
	tests := []struct {
		name       string
		req        request
		status     int
		reason     string
		violations []string // field paths
	}{
		{"unknown agent", request{method: "GET", path: "/v1/agents/nobody"}, 404, "AGENT_NOT_FOUND", nil},
		{"agent exists", request{method: "POST", path: "/v1/agents", body: `{"agentId": "http-exists"}`}, 409, "AGENT_EXISTS", nil},
		{"bad config fields", request{method: "POST", path: "/v1/agents",
			body: `{"agent": {"config": {"compactThreshold": 7, "maxSteps": -1}}}`}, 400, "INVALID_ARGUMENT",
			[]string{"agent.config.compact_threshold", "agent.config.max_steps"}},
		{"bad history message", request{method: "PUT", path: "/v1/agents/http-exists/history",
			body: `{"messages": [{"role": "ROLE_USER", "parts": [{}]}]}`}, 400, "INVALID_ARGUMENT", []string{"messages[0].parts[0]"}},
		{"bad update mask", request{method: "PATCH", path: "/v1/agents/http-exists?updateMask=config.nothing", body: `{}`},
			400, "INVALID_ARGUMENT", []string{"update_mask.paths[0]"}},
		{"unknown JSON field", request{method: "POST", path: "/v1/agents", body: `{"agentIdd": "x"}`}, 400, "INVALID_ARGUMENT", nil},
		{"not JSON", request{method: "POST", path: "/v1/agents", body: `{"agentId": `}, 400, "INVALID_ARGUMENT", nil},
		{"bad query parameter", request{method: "GET", path: "/v1/agents?pageSize=many"}, 400, "INVALID_ARGUMENT", nil},
		{"unknown tool", request{method: "POST", path: "/v1/tools/nothing:execute", body: `{}`}, 404, "TOOL_NOT_FOUND", nil},
		{"execute: negative limit", request{method: "POST", path: "/v1/tools/count:execute", body: `{"input": {"n": 1}, "limit": -1}`},
			400, "INVALID_ARGUMENT", []string{"limit"}},
		{"execute: input not an object", request{method: "POST", path: "/v1/tools/count:execute", body: `{"input": 3}`}, 400, "INVALID_ARGUMENT", nil},
		{"preview: unknown agent", request{method: "POST", path: "/v1/agents/nobody:previewContext", body: `{"input": [{"text": "hi"}]}`},
			404, "AGENT_NOT_FOUND", nil},
		{"preview: bad input part", request{method: "POST", path: "/v1/agents/http-exists:previewContext", body: `{"input": [{}]}`},
			400, "INVALID_ARGUMENT", []string{"input[0]"}},
		{"compact: unknown agent", request{method: "POST", path: "/v1/agents/nobody:compact"}, 404, "AGENT_NOT_FOUND", nil},
		{"compact: nothing to compact", request{method: "POST", path: "/v1/agents/http-exists:compact"}, 400, "NOTHING_TO_COMPACT", nil},
		{"attach: unknown agent", request{method: "GET", path: "/v1/agents/nobody:attach"}, 404, "AGENT_NOT_FOUND", nil},
		{"attach: agent without runs", request{method: "GET", path: "/v1/agents/http-norun:attach"}, 404, "RUN_NOT_FOUND", nil},
		{"attach: negative seq", request{method: "GET", path: "/v1/agents/http-norun:attach?afterSeq=-1"}, 400, "INVALID_ARGUMENT", []string{"after_seq"}},
		{"unknown route", request{method: "GET", path: "/v1/nothing"}, 404, "ROUTE_NOT_FOUND", nil},
		{"wrong method", request{method: "PUT", path: "/v1/tools"}, 405, "METHOD_NOT_ALLOWED", nil},
		{"body too large", request{method: "POST", path: "/v1/agents", body: `{"agentId": "` + strings.Repeat("x", 1<<20) + `"}`},
			413, "BODY_TOO_LARGE", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := h.do(t, tt.req)
			e := parseError(t, resp, b)
			if e.status != tt.status || e.reason != tt.reason {
				t.Fatalf("got %d %s, want %d %s: %s", e.status, e.reason, tt.status, tt.reason, b)
			}
			for _, f := range tt.violations {
				if _, ok := e.violations[f]; !ok {
					t.Errorf("no field violation %q in %v", f, e.violations)
				}
			}
		})
	}
}

func testHTTPAuthAndCORS(t *testing.T, h *httpServer) {
	for _, tt := range []struct {
		name   string
		header http.Header
	}{
		{"no token", http.Header{}},
		{"wrong token", http.Header{"Authorization": {"Bearer nope"}}},
		{"not bearer", http.Header{"Authorization": {"Basic " + e2e.HTTPToken}}},
	} {
		resp, b := h.do(t, request{method: "GET", path: "/v1/agents", header: tt.header})
		e := parseError(t, resp, b)
		if e.status != http.StatusUnauthorized || e.reason != "UNAUTHENTICATED" || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %+v %v", tt.name, e, resp.Header)
		}
		if strings.Contains(string(b), e2e.HTTPToken) {
			t.Errorf("%s: the answer holds the token", tt.name)
		}
	}
	// The event streams are guarded the same way.
	resp, b := h.do(t, request{method: "POST", path: "/v1/tools/count:execute", body: `{"input": {"n": 1}}`, header: http.Header{}})
	if e := parseError(t, resp, b); e.status != http.StatusUnauthorized {
		t.Errorf("execute without a token: %+v", e)
	}

	allowed := http.Header{"Authorization": {"Bearer " + e2e.HTTPToken}, "Origin": {"https://app.example"}}
	resp, _ = h.do(t, request{method: "GET", path: "/v1/tools", header: allowed})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("allowed origin: %s %v", resp.Status, resp.Header)
	}
	resp, _ = h.do(t, request{method: "OPTIONS", path: "/v1/agents/x:send", header: http.Header{
		"Origin": {"https://app.example"}, "Access-Control-Request-Method": {"POST"}, "Access-Control-Request-Headers": {"authorization,content-type"}}})
	if resp.StatusCode != http.StatusNoContent || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %s %v", resp.Status, resp.Header)
	}
	// Another origin is refused before the call runs.
	other := http.Header{"Authorization": {"Bearer " + e2e.HTTPToken}, "Origin": {"https://evil.example"}}
	resp, b = h.do(t, request{method: "POST", path: "/v1/agents", body: `{"agentId": "from-evil"}`, header: other})
	if e := parseError(t, resp, b); e.status != http.StatusForbidden || e.reason != "ORIGIN_NOT_ALLOWED" ||
		resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin: %+v %v", e, resp.Header)
	}
	resp, b = h.do(t, request{method: "GET", path: "/v1/agents/from-evil"})
	if e := parseError(t, resp, b); e.reason != "AGENT_NOT_FOUND" {
		t.Errorf("the refused request ran: %+v", e)
	}
	// The console's own origin needs no CORS.
	same := http.Header{"Authorization": {"Bearer " + e2e.HTTPToken}, "Origin": {h.url}}
	if resp, b := h.do(t, request{method: "GET", path: "/v1/tools", header: same}); resp.StatusCode != 200 {
		t.Errorf("same origin: %s %s", resp.Status, b)
	}
}

func testHTTPExecuteTool(t *testing.T, h *httpServer) {
	resp := h.open(t, request{method: "POST", path: "/v1/tools/count:execute", body: `{"input": {"n": 3}}`})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("execute: %s", resp.Status)
	}
	var outputs []string
	var result *agentv1.DirectToolResult
	for e := range events(t, resp.Body) {
		m := &agentv1.ExecuteToolResponse{}
		if err := protojson.Unmarshal([]byte(e.data), m); err != nil || e.event != "" || e.id != "" {
			t.Fatalf("event %+v: %v", e, err)
		}
		if o := m.GetOutput(); o != nil {
			outputs = append(outputs, o.GetData())
		}
		if m.GetResult() != nil {
			result = m.GetResult()
		}
	}
	if len(outputs) != 3 || result == nil || result.GetError() || result.GetOutput().GetText() != "counted to 3" {
		t.Errorf("outputs %q, result %v", outputs, result)
	}
	// An input the schema refuses is the tool's error result, as over gRPC:
	// 200, no output, one result saying what is wrong.
	resp, b := h.do(t, request{method: "POST", path: "/v1/tools/count:execute", body: `{"input": {"n": "three"}}`})
	var bad []*agentv1.ExecuteToolResponse
	for e := range events(t, bytes.NewReader(b)) {
		m := &agentv1.ExecuteToolResponse{}
		if err := protojson.Unmarshal([]byte(e.data), m); err != nil || e.event != "" {
			t.Fatalf("event %+v: %v", e, err)
		}
		bad = append(bad, m)
	}
	if resp.StatusCode != 200 || len(bad) != 1 || !bad[0].GetResult().GetError() ||
		!strings.HasPrefix(bad[0].GetResult().GetOutput().GetText(), `invalid input for tool "count"`) {
		t.Errorf("bad input: %s %s, want 200 and one error result", resp.Status, b)
	}
}

func testHTTPCompact(t *testing.T, h *httpServer) {
	id := h.createAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: []string{"the ", "summary"}}
	}, "")
	h.ok(t, request{method: "PUT", path: "/v1/agents/" + id + "/history", body: `{"messages": [
		{"role": "ROLE_USER", "parts": [{"text": "a long talk"}]}, {"role": "ROLE_ASSISTANT", "parts": [{"text": "indeed"}]}]}`}, nil)
	resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":compact"})
	defer resp.Body.Close()
	var kinds []string
	for e := range events(t, resp.Body) {
		ev := runEvent(t, e)
		kinds = append(kinds, kindName(ev))
		if e.id != strconv.FormatInt(ev.GetSeq(), 10) {
			t.Errorf("id %q, seq %d", e.id, ev.GetSeq())
		}
		if f := ev.GetCompactFinished(); f != nil && f.GetSummary() != "the summary" {
			t.Errorf("summary %q", f.GetSummary())
		}
	}
	if len(kinds) < 2 || kinds[0] != "compact_started" || kinds[len(kinds)-1] != "compact_finished" {
		t.Errorf("compaction events %v", kinds)
	}
}

func testHTTPDocuments(t *testing.T, h *httpServer) {
	resp, b := h.do(t, request{method: "GET", path: "/openapi.json", header: http.Header{}})
	committed, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "pkg", "gateway", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !bytes.Equal(b, committed) {
		t.Errorf("/openapi.json: %s, %d bytes, not the committed document", resp.Status, len(b))
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Produces []string
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, route := range []struct{ path, method, produces string }{
		{"/v1/agents", "post", ""},
		{"/v1/agents/{agentId}:send", "post", "text/event-stream"},
		{"/v1/tools/{name}:execute", "post", "text/event-stream"},
		{"/v1/agents/{agentId}/history", "get", ""},
	} {
		op, ok := doc.Paths[route.path][route.method]
		if !ok || (route.produces != "" && fmt.Sprint(op.Produces) != "["+route.produces+"]") {
			t.Errorf("%s %s: %+v (present %t)", route.method, route.path, op, ok)
		}
	}
	resp, b = h.do(t, request{method: "GET", path: "/", header: http.Header{}})
	if resp.StatusCode != 200 || !strings.Contains(string(b), "<script type=\"module\"") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("console: %s %v\n%s", resp.Status, resp.Header, b)
	}
}
