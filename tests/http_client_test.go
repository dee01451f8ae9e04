package tests

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
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
