package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// httpServer is an agent-server with its HTTP listener, and who calls it.
type httpServer struct {
	*e2e.Server
	url    string       // http://127.0.0.1:PORT
	client *http.Client // nil: http.DefaultClient
	token  string       // the bearer token of requests without headers of their own
}

// as is the same server called with another client and token.
func (h *httpServer) as(c *http.Client, token string) *httpServer {
	return &httpServer{Server: h.Server, url: h.url, client: c, token: token}
}

// startHTTPServer starts an agent-server of the test's own with -http-listen
// on a free port, called with the bearer token e2e.HTTPToken (see
// e2e.Suite.StartHTTPServer).
func startHTTPServer(t testing.TB, extra ...string) *httpServer {
	t.Helper()
	p, url := suite.StartHTTPServer(t, extra...)
	return &httpServer{Server: p, url: url, token: e2e.HTTPToken}
}

// request is one HTTP call of a test.
type request struct {
	method, path string
	body         string
	header       http.Header // nil: the bearer token only
}

// do sends r and returns the response, its body read (for an event stream:
// use stream instead).
func (h *httpServer) do(t testing.TB, r request) (*http.Response, []byte) {
	t.Helper()
	resp := h.open(t, r)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	return resp, b
}

// open sends r and returns the response with its body unread.
func (h *httpServer) open(t testing.TB, r request) *http.Response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(e2e.Context(t, time.Minute), r.method, h.url+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.header == nil && h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	c := h.client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	return resp
}

// ok sends r, expects 200 and decodes the JSON answer into out (when not nil).
func (h *httpServer) ok(t testing.TB, r request, out any) {
	t.Helper()
	resp, b := h.do(t, r)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s %s", r.method, r.path, resp.Status, b)
	}
	if out == nil {
		return
	}
	var err error
	if pm, ok := out.(proto.Message); ok {
		err = protojson.Unmarshal(b, pm)
	} else {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		t.Fatalf("%s %s: %v in %s", r.method, r.path, err, b)
	}
}

// errorBody is an HTTP error's google.rpc.Status with its details read.
type errorBody struct {
	status     int
	code       int32
	message    string
	reason     string
	metadata   map[string]string // the ErrorInfo's
	violations map[string]string
}

func parseError(t testing.TB, resp *http.Response, b []byte) errorBody {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error content type %q, want application/json", ct)
	}
	st := &spb.Status{}
	if err := protojson.Unmarshal(b, st); err != nil {
		t.Fatalf("error body is not a google.rpc.Status: %v\n%s", err, b)
	}
	e := errorBody{status: resp.StatusCode, code: st.GetCode(), message: st.GetMessage(), violations: map[string]string{}}
	for _, d := range st.GetDetails() {
		m, err := d.UnmarshalNew()
		if err != nil {
			t.Fatalf("detail %s: %v", d.GetTypeUrl(), err)
		}
		switch m := m.(type) {
		case *errdetails.ErrorInfo:
			e.reason, e.metadata = m.GetReason(), m.GetMetadata()
		case *errdetails.BadRequest:
			for _, v := range m.GetFieldViolations() {
				e.violations[v.GetField()] = v.GetDescription()
			}
		}
	}
	return e
}

// sse is one server-sent event.
type sse struct {
	id, event, data string
}

// events reads server-sent events from r as they come, until it ends or
// the test does (close r to end the reading sooner).
func events(t testing.TB, r io.Reader) <-chan sse {
	ch := make(chan sse)
	stop := make(chan struct{})
	done := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		<-done
	})
	go func() {
		defer close(done)
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var e sse
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data != nil {
					e.data = strings.Join(data, "\n")
					select {
					case ch <- e:
					case <-stop:
						return
					}
				}
				e, data = sse{}, nil
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "id: "):
				e.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				e.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return ch
}

// next returns the next event, failing the test after d.
func next(t testing.TB, ch <-chan sse, d time.Duration) (sse, bool) {
	t.Helper()
	select {
	case e, ok := <-ch:
		return e, ok
	case <-time.After(d):
		t.Fatalf("no event in %s", d)
	}
	return sse{}, false
}

// runEvent decodes a run event.
func runEvent(t testing.TB, e sse) *agentv1.Event {
	t.Helper()
	ev := &agentv1.Event{}
	if err := protojson.Unmarshal([]byte(e.data), ev); err != nil {
		t.Fatalf("event data is not an Event: %v\n%s", err, e.data)
	}
	return ev
}

// createAgent creates an agent over HTTP whose model requests go to s.
func (h *httpServer) createAgent(t testing.TB, s e2e.Script, extra string) string {
	t.Helper()
	system, _ := json.Marshal(suite.Router.Add(t, s))
	var resp agentv1.CreateAgentResponse
	h.ok(t, request{method: "POST", path: "/v1/agents", body: `{"agent": {"config": {"system": ` + string(system) + `}` + extra + `}}`}, &resp)
	id := resp.GetAgent().GetId()
	t.Cleanup(func() {
		select {
		case <-h.Exited(): // the test stopped the server
		default:
			h.do(t, request{method: "DELETE", path: "/v1/agents/" + id})
		}
	})
	return id
}

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
	t.Run("README curl examples", func(t *testing.T) { testHTTPReadme(t, h) })
}

// readmeCurl matches the README's curl commands: method, path, body, a
// header, and the status a comment after them expects.
var readmeCurl = regexp.MustCompile(`(?m)^curl -[sN](?: -X (\w+))? '?localhost:8080([^'\s]+)'?(?: -d '([^']*)')?(?: -H '([^']*)')?(?:[ \t]+# (\d{3}))?`)

// testHTTPReadme runs the curl commands of the README's HTTP section, in
// order, against the server (with its token): each must answer as shown.
// RUN_ID and CALL_ID stand for the run of the last send and its permission
// request; a send that asks for a permission and goes on without its client
// is left at the request.
func testHTTPReadme(t *testing.T, h *httpServer) {
	b, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## HTTP API and web console")
	if start < 0 {
		t.Fatal("no HTTP section in the README")
	}
	text = text[start:]
	if end := strings.Index(text[3:], "\n## "); end > 0 {
		text = text[:end+3]
	}
	const system = "Use the tools to do the task."
	suite.Router.Set(t, system, func(_ int, req *fakemodel.Request) fakemodel.Turn {
		if results := e2e.LastToolResults(req); len(results) > 0 { // each send: a call, then an answer
			return fakemodel.Turn{Text: "I said: " + strings.Join(results, "")}
		}
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
	})
	defer h.do(t, request{method: "DELETE", path: "/v1/agents/demo"})
	calls := readmeCurl.FindAllStringSubmatch(text, -1)
	if len(calls) < 10 {
		t.Fatalf("found %d curl commands in the README's HTTP section", len(calls))
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
				t.Errorf("README: %s\n%s %s", c[0], resp.Status, got)
			}
			continue
		}
		resp := h.open(t, r)
		if resp.StatusCode != want {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("README: %s\n%s %s", c[0], resp.Status, b)
		}
		for e := range events(t, resp.Body) {
			if e.event == "error" {
				t.Errorf("README: %s\nerror event %s", c[0], e.data)
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

// blockingModel answers each task with text chunks once release is closed.
func blockingModel(release <-chan struct{}) e2e.Script {
	return func(step int, req *fakemodel.Request) fakemodel.Turn {
		<-release
		return fakemodel.Turn{TextChunks: []string{"one ", "two ", "three"}, Usage: &fakemodel.Usage{Input: 5, Output: 3}}
	}
}

func testHTTPSendStream(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	id := h.createAgent(t, blockingModel(release), "")
	resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "count"}]}`})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("send: %s %v %s", resp.Status, resp.Header, b)
	}
	ch := events(t, resp.Body)
	// The first events arrive while the model has not answered: a stream,
	// not a buffered reply.
	var got []*agentv1.Event
	for len(got) < 2 {
		e, ok := next(t, ch, 10*time.Second)
		if !ok {
			t.Fatal("the stream ended early")
		}
		got = append(got, runEvent(t, e))
		if e.id != strconv.Itoa(len(got)) {
			t.Errorf("event %d has id %q", len(got), e.id)
		}
	}
	if got[0].GetRunStarted().GetAgentId() != id || got[1].GetModelRequest() == nil {
		t.Fatalf("first events: %v", got)
	}
	close(release)
	for {
		e, ok := next(t, ch, 10*time.Second)
		if !ok {
			break
		}
		if e.event != "" {
			t.Fatalf("event %q: %s", e.event, e.data)
		}
		ev := runEvent(t, e)
		got = append(got, ev)
		if e.id != strconv.Itoa(len(got)) || ev.GetSeq() != int64(len(got)) || ev.GetRunId() != got[0].GetRunId() {
			t.Errorf("event %d: id %q seq %d run %s", len(got), e.id, ev.GetSeq(), ev.GetRunId())
		}
	}
	var text strings.Builder
	for _, ev := range got {
		text.WriteString(ev.GetModelDelta().GetText())
	}
	last := got[len(got)-1].GetResult()
	if last == nil || last.GetText() != "one two three" || text.String() != "one two three" || last.GetReason() != agentv1.EndReason_END_REASON_NO_TOOL {
		t.Errorf("result %v, deltas %q", last, text.String())
	}
}

func testHTTPSendErrors(t *testing.T, h *httpServer) {
	// Before the first event: a plain HTTP error.
	resp, b := h.do(t, request{method: "POST", path: "/v1/agents/nobody:send", body: `{"input": [{"text": "hi"}]}`})
	if e := parseError(t, resp, b); e.status != 404 || e.reason != "AGENT_NOT_FOUND" {
		t.Errorf("unknown agent: %+v", e)
	}
	id := h.createAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Status: 401, ErrorBody: `{"error": {"message": "bad key", "type": "invalid_request_error"}}`}
	}, "")
	resp, b = h.do(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{}`})
	if e := parseError(t, resp, b); e.status != 400 || e.violations["start.input"] == "" {
		t.Errorf("no input: %+v", e)
	}
	resp, b = h.do(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"txt": "hi"}]}`})
	if e := parseError(t, resp, b); e.status != 400 || !strings.Contains(e.message, "txt") {
		t.Errorf("unknown field: %+v", e)
	}
	// After it: the stream's last event is the error.
	resp = h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "hi"}]}`})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("send: %s", resp.Status)
	}
	var last sse
	for e := range events(t, resp.Body) {
		last = e
	}
	if last.event != "error" {
		t.Fatalf("last event %+v, want an error event", last)
	}
	st := &spb.Status{}
	if err := protojson.Unmarshal([]byte(last.data), st); err != nil {
		t.Fatal(err)
	}
	info := &errdetails.ErrorInfo{}
	if len(st.GetDetails()) == 0 || st.GetDetails()[0].UnmarshalTo(info) != nil || info.GetReason() != "AUTH" || st.GetCode() != 9 {
		t.Errorf("error event: %v", st)
	}
	if strings.Contains(last.data, e2e.TestKey) {
		t.Errorf("the error event holds the API key")
	}
}

func testHTTPDisconnect(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	defer close(release)
	id := h.createAgent(t, blockingModel(release), "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/agents/"+id+":send", strings.NewReader(`{"input": [{"text": "wait"}]}`))
	req.Header.Set("Authorization", "Bearer "+e2e.HTTPToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := events(t, resp.Body)
	if _, ok := next(t, ch, 10*time.Second); !ok {
		t.Fatal("no first event")
	}
	var got agentv1.GetAgentResponse
	h.ok(t, request{method: "GET", path: "/v1/agents/" + id}, &got)
	if got.GetAgent().GetState() != agentv1.AgentState_AGENT_STATE_RUNNING {
		t.Fatalf("agent %v while its send streams", got.GetAgent().GetState())
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.ok(t, request{method: "GET", path: "/v1/agents/" + id}, &got)
		if got.GetAgent().GetState() == agentv1.AgentState_AGENT_STATE_IDLE {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run still runs 10s after its client went away")
		}
		time.Sleep(20 * time.Millisecond)
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

// TestHTTPShutdown sends SIGTERM while two event streams run over HTTP: the
// listener stops accepting, the run that ends within the grace period
// streams to its result, the one that does not ends with an error event
// (UNAVAILABLE, SHUTTING_DOWN), and the server exits 0.
func TestHTTPShutdown(t *testing.T) {
	t.Parallel()
	h := startHTTPServer(t, "-shutdown-grace", "2s")
	quickGo, held := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(held) })
	quick := h.createAgent(t, blockingModel(quickGo), "")
	blocked := h.createAgent(t, blockingModel(held), "")
	open := func(id string) <-chan sse {
		resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "go"}]}`})
		t.Cleanup(func() { resp.Body.Close() })
		ch := events(t, resp.Body)
		if _, ok := next(t, ch, 10*time.Second); !ok {
			t.Fatalf("%s: no first event", id)
		}
		return ch
	}
	quickEvents, blockedEvents := open(quick), open(blocked)
	if err := h.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	refused := false
	for deadline := time.Now().Add(2 * time.Second); !refused && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(h.url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		refused = err != nil
	}
	if !refused {
		t.Error("the HTTP listener still accepts after SIGTERM")
	}
	close(quickGo)
	last := func(ch <-chan sse) sse {
		var e sse
		for {
			got, ok := next(t, ch, 15*time.Second)
			if !ok {
				return e
			}
			e = got
		}
	}
	if e := last(quickEvents); runEvent(t, e).GetResult().GetText() != "one two three" {
		t.Errorf("the run that fits in the grace period ended with %+v", e)
	}
	e := last(blockedEvents)
	if e.event != "error" || !strings.Contains(e.data, `"reason":"SHUTTING_DOWN"`) || !strings.Contains(e.data, `"code":14`) {
		t.Errorf("the run cut by the shutdown ended with %+v", e)
	}
	select {
	case <-h.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("agent-server still running 20s after SIGTERM")
	}
	if h.Err() != nil {
		t.Errorf("agent-server exit: %v, want 0", h.Err())
	}
}

// readRun reads a send's or an attach's events to the end: the run events
// (ids checked against their seq) and the error event, if any.
func readRun(t *testing.T, body io.Reader) ([]*agentv1.Event, *sse) {
	t.Helper()
	var got []*agentv1.Event
	for e := range events(t, body) {
		if e.event == "error" {
			return got, &e
		}
		ev := runEvent(t, e)
		if e.id != strconv.FormatInt(ev.GetSeq(), 10) {
			t.Errorf("event id %q, seq %d", e.id, ev.GetSeq())
		}
		got = append(got, ev)
	}
	return got, nil
}

func testHTTPRuns(t *testing.T, h *httpServer) {
	id := h.createAgent(t, e2e.TwoTools, "")
	resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "go"}]}`})
	evs, fail := readRun(t, resp.Body)
	resp.Body.Close()
	if fail != nil || len(evs) == 0 || evs[len(evs)-1].GetResult() == nil {
		t.Fatalf("send: %d events, error %v", len(evs), fail)
	}
	runID := evs[0].GetRunId()
	var run agentv1.GetRunResponse
	h.ok(t, request{method: "GET", path: "/v1/runs/" + runID}, &run)
	if r := run.GetRun(); r.GetAgentId() != id || r.GetState() != agentv1.RunState_RUN_STATE_SUCCEEDED ||
		r.GetLastSeq() != int64(len(evs)) || r.GetResult().GetText() != evs[len(evs)-1].GetResult().GetText() {
		t.Errorf("run %v", r)
	}
	for _, path := range []string{"/v1/agents/" + id + "/runs", "/v1/runs?pageSize=1000", "/v1/runs?state=RUN_STATE_SUCCEEDED&pageSize=1000"} {
		var list agentv1.ListRunsResponse
		h.ok(t, request{method: "GET", path: path}, &list)
		found := false
		for _, r := range list.GetRuns() {
			found = found || r.GetId() == runID
		}
		if !found {
			t.Errorf("GET %s lacks run %s", path, runID)
		}
	}
	// A finished run replays whole; with nothing left after the seq given, 204.
	resp = h.open(t, request{method: "GET", path: "/v1/agents/" + id + ":attach"})
	replay, fail := readRun(t, resp.Body)
	resp.Body.Close()
	if fail != nil || len(replay) != len(evs) || !proto.Equal(replay[len(replay)-1], evs[len(evs)-1]) {
		t.Errorf("attach to the agent's latest run: %d events (want %d), error %v", len(replay), len(evs), fail)
	}
	resp, b := h.do(t, request{method: "GET", path: "/v1/runs/" + runID + ":attach", header: http.Header{
		"Authorization": {"Bearer " + e2e.HTTPToken}, "Last-Event-ID": {strconv.Itoa(len(evs))}}})
	if resp.StatusCode != http.StatusNoContent || len(b) != 0 {
		t.Errorf("attach after the last event: %s %q, want 204", resp.Status, b)
	}
	for _, tt := range []struct {
		req    request
		status int
		reason string
	}{
		{request{method: "GET", path: "/v1/runs/run_nothing"}, 404, "RUN_NOT_FOUND"},
		{request{method: "GET", path: "/v1/runs/run_nothing:attach"}, 404, "RUN_NOT_FOUND"},
		{request{method: "GET", path: "/v1/runs/" + runID + ":attach?afterSeq=-1"}, 400, "INVALID_ARGUMENT"},
		{request{method: "GET", path: "/v1/runs/" + runID + ":attach", header: http.Header{
			"Authorization": {"Bearer " + e2e.HTTPToken}, "Last-Event-ID": {"seven"}}}, 400, "INVALID_ARGUMENT"},
		{request{method: "POST", path: "/v1/runs/" + runID + "/permissions/call_none", body: `{"allow": true}`}, 404, "PERMISSION_NOT_FOUND"},
		{request{method: "POST", path: "/v1/runs/run_nothing/permissions/call_none", body: `{"allow": true}`}, 404, "RUN_NOT_FOUND"},
	} {
		resp, b := h.do(t, tt.req)
		e := parseError(t, resp, b)
		if e.status != tt.status || e.reason != tt.reason {
			t.Errorf("%s %s: %d %s, want %d %s: %s", tt.req.method, tt.req.path, e.status, e.reason, tt.status, tt.reason, b)
		}
	}
}

// testHTTPReconnect: a send that goes on without its client (onDisconnect
// CONTINUE) is followed again with Last-Event-ID, and the events after the
// reconnection are exactly the ones the first stream missed.
func testHTTPReconnect(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	defer releaseOnce()
	id := h.createAgent(t, blockingModel(release), "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/agents/"+id+":send",
		strings.NewReader(`{"input": [{"text": "count"}], "onDisconnect": "ON_DISCONNECT_CONTINUE"}`))
	req.Header.Set("Authorization", "Bearer "+e2e.HTTPToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := events(t, resp.Body)
	var before []*agentv1.Event
	var lastID string
	for len(before) < 2 {
		e, ok := next(t, ch, 10*time.Second)
		if !ok {
			t.Fatal("the send ended early")
		}
		before = append(before, runEvent(t, e))
		lastID = e.id
	}
	runID := before[0].GetRunId()
	cancel() // the client goes away mid-run
	resp.Body.Close()

	// Reconnect while the run still waits for its model, as an EventSource
	// does: the same URL, Last-Event-ID the last id received.
	resp = h.open(t, request{method: "GET", path: "/v1/runs/" + runID + ":attach?afterSeq=0", header: http.Header{
		"Authorization": {"Bearer " + e2e.HTTPToken}, "Last-Event-ID": {lastID}}})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("attach: %s %v", resp.Status, resp.Header)
	}
	releaseOnce()
	after, fail := readRun(t, resp.Body)
	if fail != nil {
		t.Fatalf("attach ended with %s", fail.data)
	}
	if len(after) == 0 || after[0].GetSeq() != before[len(before)-1].GetSeq()+1 {
		t.Fatalf("after reconnecting, the first event is %v, want seq %d", after, before[len(before)-1].GetSeq()+1)
	}
	// Exactly the missed events: together the two streams are the whole run, once each.
	resp2 := h.open(t, request{method: "GET", path: "/v1/runs/" + runID + ":attach"})
	whole, fail := readRun(t, resp2.Body)
	resp2.Body.Close()
	joined := append(append([]*agentv1.Event{}, before...), after...)
	if fail != nil || len(whole) != len(joined) {
		t.Fatalf("the run has %d events, the two streams %d (error %v)", len(whole), len(joined), fail)
	}
	for i := range whole {
		if !proto.Equal(whole[i], joined[i]) {
			t.Errorf("event %d: replay %v, streams %v", i+1, whole[i], joined[i])
		}
	}
	if last := joined[len(joined)-1].GetResult(); last.GetText() != "one two three" {
		t.Errorf("result %v", last)
	}
}

// testHTTPPermissions answers a send's permission requests with
// RespondPermission over another HTTP connection: one allowed, one denied
// with a reason the model then reads.
func testHTTPPermissions(t *testing.T, h *httpServer) {
	id := h.createAgent(t, e2e.TwoTools, "")
	resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send",
		body: `{"input": [{"text": "greet and add"}], "permissionMode": "PERMISSION_MODE_ASK_ALL"}`})
	defer resp.Body.Close()
	ch := events(t, resp.Body)
	var results []*agentv1.ToolResultEvent
	var final *agentv1.RunResultEvent
	asked := 0
	for final == nil {
		e, ok := next(t, ch, 20*time.Second)
		if !ok {
			t.Fatal("the stream ended without a result")
		}
		if e.event == "error" {
			t.Fatalf("error event: %s", e.data)
		}
		ev := runEvent(t, e)
		if p := ev.GetPermissionRequest(); p != nil {
			asked++
			body := `{"allow": true}`
			if p.GetToolName() == "add" {
				body = `{"allow": false, "reason": "no sums today"}`
			}
			var out agentv1.RespondPermissionResponse
			h.ok(t, request{method: "POST", path: "/v1/runs/" + ev.GetRunId() + "/permissions/" + p.GetToolCallId(), body: body}, &out)
			// A second answer to the same call is refused.
			r, b := h.do(t, request{method: "POST", path: "/v1/runs/" + ev.GetRunId() + "/permissions/" + p.GetToolCallId(), body: body})
			if e := parseError(t, r, b); e.status != http.StatusBadRequest || e.code != 9 || e.reason != "PERMISSION_ANSWERED" {
				t.Errorf("a second answer: %+v, want 400 FAILED_PRECONDITION PERMISSION_ANSWERED", e)
			}
		}
		if r := ev.GetToolResult(); r != nil {
			results = append(results, r)
		}
		final = ev.GetResult()
	}
	if asked != 2 || len(results) != 2 {
		t.Fatalf("asked %d times, %d results", asked, len(results))
	}
	for _, r := range results {
		text := r.GetOutput().GetText()
		switch r.GetToolName() {
		case "say_hello":
			if r.GetError() || !strings.Contains(text, "Hello, Ming") {
				t.Errorf("allowed call: %v", r)
			}
		case "add":
			if !r.GetError() || !strings.Contains(text, "no sums today") {
				t.Errorf("denied call: %v", r)
			}
		}
	}
}

// testHTTPStop stops live runs over HTTP while their sends stream: by the
// agent alone, and by the agent and the run's id (another run's id stops
// nothing). Stop answers stopped=true once the run has ended; the stream
// ends with an error event (CANCELLED, reason ABORTED, cause stopped: the
// model call was cut) and the run is stopped with that error.
func testHTTPStop(t *testing.T, h *httpServer) {
	release := make(chan struct{})
	defer close(release)
	id := h.createAgent(t, blockingModel(release), "")
	for _, tt := range []struct {
		name string
		body func(runID string) string
	}{
		{"by agent", func(string) string { return "" }},
		{"by run", func(runID string) string { return `{"runId": "` + runID + `"}` }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.open(t, request{method: "POST", path: "/v1/agents/" + id + ":send", body: `{"input": [{"text": "wait"}]}`})
			defer resp.Body.Close()
			ch := events(t, resp.Body)
			var runID string
			for asked := false; !asked; {
				e, ok := next(t, ch, 10*time.Second)
				if !ok || e.event != "" {
					t.Fatalf("the stream ended before the model was asked: %+v", e)
				}
				ev := runEvent(t, e)
				runID, asked = ev.GetRunId(), ev.GetModelRequest() != nil
			}
			var stop agentv1.StopResponse
			h.ok(t, request{method: "POST", path: "/v1/agents/" + id + ":stop", body: `{"runId": "run_another"}`}, &stop)
			if stop.GetStopped() {
				t.Error("stop with another run's id says it stopped a run")
			}
			h.ok(t, request{method: "POST", path: "/v1/agents/" + id + ":stop", body: tt.body(runID)}, &stop)
			if !stop.GetStopped() {
				t.Error("stop of a running run says it stopped none")
			}
			var last sse
			for {
				e, ok := next(t, ch, 10*time.Second)
				if !ok {
					break
				}
				last = e
			}
			st := &spb.Status{}
			info := &errdetails.ErrorInfo{}
			if last.event != "error" || protojson.Unmarshal([]byte(last.data), st) != nil || len(st.GetDetails()) == 0 ||
				st.GetDetails()[0].UnmarshalTo(info) != nil || st.GetCode() != 1 || info.GetReason() != "ABORTED" || info.GetMetadata()["cause"] != "stopped" {
				t.Errorf("the stopped stream ended with %+v, want an error event CANCELLED ABORTED, cause stopped", last)
			}
			var run agentv1.GetRunResponse
			h.ok(t, request{method: "GET", path: "/v1/runs/" + runID}, &run)
			if r := run.GetRun(); r.GetState() != agentv1.RunState_RUN_STATE_STOPPED || r.GetError().GetReason() != "ABORTED" ||
				r.GetError().GetMetadata()["cause"] != "stopped" {
				t.Errorf("run %v, want stopped", r)
			}
		})
	}
}
