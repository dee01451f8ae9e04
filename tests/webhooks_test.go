package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// hookSecret signs the webhooks of TestWebhooks' server: a canary too, as
// the other secrets the server holds (the model key, the bearer token, a
// client's header value), none of which may show in a webhook's body.
const (
	hookSecret       = "whsec_d2ViaG9vay1jYW5hcnktc2VjcmV0LTljM2Y1YTFl"
	hookHeaderCanary = "hdr-canary-value-81c6d2f0a9"
)

// hookReceiver is a webhook endpoint on 127.0.0.1. Each path behaves as
// its name says: /ok answers 200; /flaky 500 twice, then 200; /slow holds
// every request until release is closed.
type hookReceiver struct {
	url     string
	srv     *http.Server
	release chan struct{}

	mu  sync.Mutex
	got map[string][]hookRequest // by path
	// holding counts the requests /slow holds now.
	holding int
}

// hookRequest is one request as the receiver got it.
type hookRequest struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

func startHookReceiver(t *testing.T) *hookReceiver {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &hookReceiver{url: "http://" + lis.Addr().String(), release: make(chan struct{}), got: map[string][]hookRequest{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(lis) }()
	t.Cleanup(func() {
		r.releaseSlow()
		_ = r.srv.Close()
	})
	return r
}

func (r *hookReceiver) releaseSlow() {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	h := map[string]string{}
	for k := range req.Header {
		h[strings.ToLower(k)] = req.Header.Get(k)
	}
	r.mu.Lock()
	r.got[req.URL.Path] = append(r.got[req.URL.Path], hookRequest{Headers: h, Body: string(body)})
	n := len(r.got[req.URL.Path])
	r.mu.Unlock()
	switch req.URL.Path {
	case "/flaky":
		if n <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
	case "/slow":
		r.mu.Lock()
		r.holding++
		r.mu.Unlock()
		select {
		case <-r.release:
		case <-req.Context().Done():
		}
		r.mu.Lock()
		r.holding--
		r.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

// requests returns what path got so far.
func (r *hookReceiver) requests(path string) []hookRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got[path])
}

// wait waits until path got a request whose body holds every one of subs,
// and returns the requests with such a body.
func (r *hookReceiver) wait(t *testing.T, path string, subs ...string) []hookRequest {
	t.Helper()
	match, ok := r.waitFor(path, subs...)
	if !ok {
		t.Fatalf("no webhook at %s with %q; it got %+v", path, subs, r.requests(path))
	}
	return match
}

// waitFor is wait without a test, for other goroutines: false when no such
// request came within 20 s.
func (r *hookReceiver) waitFor(path string, subs ...string) ([]hookRequest, bool) {
	for end := time.Now().Add(20 * time.Second); ; {
		var match []hookRequest
		for _, q := range r.requests(path) {
			if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(q.Body, s) }) {
				match = append(match, q)
			}
		}
		if len(match) > 0 {
			return match, true
		}
		if time.Now().After(end) {
			return nil, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verdict is one verifier's answer on a message.
type verdict struct {
	OK      bool           `json:"ok"`
	Error   string         `json:"error"`
	Payload map[string]any `json:"payload"`
}

// verifyHooks has the messages verified by the two implementations of the
// recipe that are not agentcore's: the Standard Webhooks reference library
// (tests/webhooks/verify.mjs) and a hand-written one with Python's standard
// library (tests/webhooks/verify.py, docs/webhooks.md's). now (Unix
// seconds, 0 for the clock's) is the receiver's time. Each verifier's
// verdicts are returned by its name.
func verifyHooks(t *testing.T, secret string, now int64, msgs []hookRequest) map[string][]verdict {
	t.Helper()
	dir := filepath.Join(e2e.RepoRoot(), "tests", "webhooks")
	in, err := json.Marshal(map[string]any{"secret": secret, "now": now, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	cmds := map[string][]string{}
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not installed: the webhooks are verified with the Standard Webhooks library for Node.js")
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks", "package.json")); err != nil {
		unavailable(t, "tests/webhooks has no node_modules: run make test-deps (or npm ci there)")
	} else {
		cmds["standardwebhooks"] = []string{"node", "verify.mjs"}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		unavailable(t, "python3 is not installed")
	} else {
		cmds["python"] = []string{py, "verify.py"}
	}
	out := map[string][]verdict{}
	for name, argv := range cmds {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s verifier: %v\n%s", name, err, stderr.String())
		}
		var vs []verdict
		if err := json.Unmarshal(b, &vs); err != nil || len(vs) != len(msgs) {
			t.Fatalf("%s verifier said %s (%v)", name, b, err)
		}
		out[name] = vs
	}
	return out
}

// TestWebhooks runs agent-server with webhooks allowed to one receiver on
// 127.0.0.1 and checks what the receiver gets: run.ended, signed so that
// independent verifiers accept it (and refuse it altered or replayed late),
// with nothing secret in it; retries until a 2xx; a receiver that never
// answers does not hold up runs; permission requests; and URLs outside the
// allowed hosts refused where a client gives them.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	recv := startHookReceiver(t)
	srv, err := suite.StartServer(suite.Plugins, []string{
		"-webhook-allowed-hosts", recv.url, "-webhook-backoff", "100ms", "-webhook-max-attempts", "4",
		// Longer than any send here may take: a run waiting for its webhook's answer would show.
		"-webhook-timeout", "60s", "-metrics-listen", "127.0.0.1:0",
	}, "AGENTCORE_WEBHOOK_SECRET="+hookSecret, "AGENTCORE_MODEL_API_KEY="+canaryKey, "AGENTCORE_AUTH_TOKEN="+canaryToken)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := srv.WaitLog(t, "metrics listening")["addr"].(string)
	c, err := client.Dial(srv.Addr, client.WithToken(canaryToken))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		recv.releaseSlow()
		stopped(t, srv)
		logs := srv.Logs()
		for _, canary := range []string{hookSecret, strings.TrimPrefix(hookSecret, "whsec_"), canaryKey, canaryToken, hookHeaderCanary} {
			if strings.Contains(logs, canary) {
				t.Errorf("the server's log holds %s", canary)
			}
		}
	}()
	// newHookAgent makes an agent whose config names the webhook at path
	// (with on_permission when asked) and a header value, a secret.
	newHookAgent := func(t *testing.T, s e2e.Script, path string, onPermission bool) *client.Agent {
		cfg := &agentv1.AgentConfig{System: proto.String(suite.Router.Add(t, s)),
			Provider: &agentv1.ProviderOptions{Headers: map[string]string{"X-Trace-Tag": hookHeaderCanary}}}
		if path != "" {
			cfg.Webhook = &agentv1.Webhook{Url: proto.String(recv.url + path)}
			if onPermission {
				cfg.Webhook.OnPermission = proto.Bool(true)
			}
		}
		a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Delete(context.Background()) })
		return a
	}

	t.Run("signed run.ended verified independently", func(t *testing.T) {
		a := newHookAgent(t, e2e.TwoTools, "/ok", false)
		res, err := a.Send(e2e.Context(t, 30*time.Second), "hello", client.Callbacks{})
		if err != nil {
			t.Fatal(err)
		}
		msgs := recv.wait(t, "/ok", res.RunID)
		if len(msgs) != 1 {
			t.Fatalf("%d deliveries of the run's end, want 1", len(msgs))
		}
		m := msgs[0]
		for _, canary := range []string{hookSecret, strings.TrimPrefix(hookSecret, "whsec_"), canaryKey, canaryToken, hookHeaderCanary, "Done:"} {
			if strings.Contains(m.Body, canary) || strings.Contains(fmt.Sprint(m.Headers), canary) {
				t.Errorf("the webhook holds %q (a secret, or the result's text): %s %v", canary, m.Body, m.Headers)
			}
		}
		if m.Headers["content-type"] != "application/json" || !strings.HasPrefix(m.Headers["webhook-signature"], "v1,") {
			t.Errorf("headers: %v", m.Headers)
		}
		// Altered, or replayed later than the tolerance, it is refused.
		altered := m
		altered.Body = strings.Replace(m.Body, `"succeeded"`, `"failed"`, 1)
		late := time.Now().Add(6 * time.Minute).Unix()
		for name, vs := range verifyHooks(t, hookSecret, 0, []hookRequest{m, altered}) {
			if !vs[0].OK || vs[1].OK {
				t.Fatalf("%s: genuine %+v, altered %+v", name, vs[0], vs[1])
			}
			p := vs[0].Payload
			d, _ := p["data"].(map[string]any)
			if p["type"] != "run.ended" || d["run_id"] != res.RunID || d["agent_id"] != a.ID || d["state"] != "succeeded" ||
				d["end_reason"] != "no_tool" || d["steps"] != 2.0 || d["tool_calls"] != 2.0 || d["start_time"] == nil || d["end_time"] == nil {
				t.Errorf("%s: payload %v", name, p)
			}
			if u, _ := d["usage"].(map[string]any); u["input_tokens"] != float64(res.Usage.GetInputTokens()) || u["output_tokens"] != 22.0 {
				t.Errorf("%s: usage %v, want the run's %v", name, d["usage"], res.Usage)
			}
		}
		for name, vs := range verifyHooks(t, hookSecret, late, []hookRequest{m}) {
			if vs[0].OK {
				t.Errorf("%s took the message 6 minutes late: a replay would pass", name)
			}
		}
		for name, vs := range verifyHooks(t, "whsec_"+strings.Repeat("QUJD", 8), 0, []hookRequest{m}) {
			if vs[0].OK {
				t.Errorf("%s took the message under another secret", name)
			}
		}
	})

	t.Run("a failed run: its error's code and reason, not its message", func(t *testing.T) {
		const detail = "upstream-detail-3e7b1c9d"
		a := newHookAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
			return fakemodel.Turn{Status: 400, ErrorBody: `{"error": {"message": "bad request: ` + detail + `"}}`}
		}, "/ok", false)
		_, err := a.Send(e2e.Context(t, 30*time.Second), "hello", client.Callbacks{})
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != codes.FailedPrecondition || !strings.Contains(err.Error(), detail) {
			t.Fatalf("send: %v, want FAILED_PRECONDITION with the model's message", err)
		}
		msgs := recv.wait(t, "/ok", `"failed"`, a.ID)
		for name, vs := range verifyHooks(t, hookSecret, 0, msgs[:1]) {
			d, _ := vs[0].Payload["data"].(map[string]any)
			e, _ := d["error"].(map[string]any)
			if !vs[0].OK || d["state"] != "failed" || e["code"] != "FAILED_PRECONDITION" || e["reason"] != "REQUEST" || d["end_reason"] != nil {
				t.Errorf("%s: %+v", name, vs[0])
			}
		}
		if strings.Contains(msgs[0].Body, detail) {
			t.Errorf("the webhook holds the error's message: %s", msgs[0].Body)
		}
	})

	t.Run("retried on 500 until 2xx", func(t *testing.T) {
		a := newHookAgent(t, e2e.TwoTools, "/flaky", false)
		res, err := a.Send(e2e.Context(t, 30*time.Second), "hello", client.Callbacks{})
		if err != nil {
			t.Fatal(err)
		}
		var got []hookRequest
		for end := time.Now().Add(20 * time.Second); len(got) < 3; got = recv.requests("/flaky") {
			if time.Now().After(end) {
				t.Fatalf("%d attempts, want 3", len(got))
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // a fourth attempt would come within 3 backoffs
		if got = recv.requests("/flaky"); len(got) != 3 {
			t.Fatalf("%d attempts, want 3 (two 500s, then 200)", len(got))
		}
		id := got[0].Headers["webhook-id"]
		for _, q := range got {
			if q.Headers["webhook-id"] != id || !strings.Contains(q.Body, res.RunID) {
				t.Errorf("attempts differ: %v %s", q.Headers, q.Body)
			}
		}
		for name, vs := range verifyHooks(t, hookSecret, 0, got) {
			for i, v := range vs {
				if !v.OK {
					t.Errorf("%s refused attempt %d: %s", name, i+1, v.Error)
				}
			}
		}
		m, err := e2e.Scrape(metrics)
		if err != nil {
			t.Fatal(err)
		}
		if n := m[`agentcore_webhook_attempts_total{outcome="5xx",type="run.ended"}`]; n < 2 {
			t.Errorf("5xx attempts counted: %v, want 2 at least", n)
		}
		if n := m[`agentcore_webhook_deliveries_total{outcome="delivered",type="run.ended"}`]; n < 2 {
			t.Errorf("deliveries counted: %v, want 2 at least", n)
		}
		if n := len(srv.LogLines("webhook attempt failed; retrying")); n < 2 {
			t.Errorf("%d retry log lines, want 2 at least", n)
		}
	})

	t.Run("a slow receiver holds up no run", func(t *testing.T) {
		a := newHookAgent(t, e2e.TwoTools, "/slow", false)
		for i := range 3 { // one after the other: each ends while the receiver holds the previous ends
			res, err := a.Send(e2e.Context(t, 20*time.Second), "hello", client.Callbacks{})
			if err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
			recv.wait(t, "/slow", res.RunID)
		}
		recv.mu.Lock()
		holding := recv.holding
		recv.mu.Unlock()
		if holding != 3 {
			t.Fatalf("the receiver holds %d requests, want the 3 runs' ends (each send ended while its webhook was unanswered)", holding)
		}
	})

	t.Run("permission requests", func(t *testing.T) {
		a := newHookAgent(t, e2e.TwoTools, "/ok", true)
		var (
			mu    sync.Mutex
			asked []string
		)
		res, err := a.Send(e2e.Context(t, 30*time.Second), "hello", client.Callbacks{
			OnPermission: func(ctx context.Context, req *agentv1.PermissionRequestEvent) client.Decision {
				// The receiver is told before the client answers.
				if _, ok := recv.waitFor("/ok", `"run.permission_requested"`, req.GetToolCallId()); !ok {
					return client.Deny("no webhook")
				}
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, req.GetToolName())
				return client.Allow()
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		recv.wait(t, "/ok", `"run.ended"`, res.RunID)
		slices.Sort(asked)
		if fmt.Sprint(asked) != "[add say_hello]" {
			t.Fatalf("asked %v", asked)
		}
		perms := recv.wait(t, "/ok", `"run.permission_requested"`, res.RunID)
		for name, vs := range verifyHooks(t, hookSecret, 0, perms) {
			for _, v := range vs {
				d, _ := v.Payload["data"].(map[string]any)
				if !v.OK || d["agent_id"] != a.ID || d["tool_name"] == nil || d["arguments"] != nil {
					t.Errorf("%s: %+v", name, v)
				}
			}
		}
	})

	t.Run("hosts outside the list refused", func(t *testing.T) {
		ctx := e2e.Context(t, 30*time.Second)
		a := newHookAgent(t, e2e.TwoTools, "", false)
		api := c.API()
		for _, tc := range []struct {
			name, url, field string
			call             func(u string) error
		}{
			{"CreateAgent, another host", "https://hooks.evil.example/x", "agent.config.webhook.url", func(u string) error {
				_, err := api.CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
					Webhook: &agentv1.Webhook{Url: proto.String(u)}}}})
				return err
			}},
			{"UpdateAgent, another port", "http://127.0.0.1:1/x", "agent.config.webhook.url", func(u string) error {
				_, err := api.UpdateAgent(ctx, &agentv1.UpdateAgentRequest{
					Agent:      &agentv1.Agent{Id: a.ID, Config: &agentv1.AgentConfig{Webhook: &agentv1.Webhook{Url: proto.String(u)}}},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"config.webhook"}},
				})
				return err
			}},
			{"Send, credentials in the URL", strings.Replace(recv.url, "http://", "http://user:pw@", 1) + "/ok", "start.config.webhook.url", func(u string) error {
				stream, err := api.Send(ctx)
				if err != nil {
					return err
				}
				if err := stream.Send(&agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: &agentv1.StartRun{AgentId: a.ID,
					Input:  []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: "hi"}}},
					Config: &agentv1.AgentConfig{Webhook: &agentv1.Webhook{Url: proto.String(u)}}}}}); err != nil {
					return err
				}
				for {
					if _, err := stream.Recv(); err != nil {
						return err
					}
				}
			}},
		} {
			err := tc.call(tc.url)
			if status.Code(err) != codes.InvalidArgument || !slices.Contains(badRequestFields(err), tc.field) {
				t.Errorf("%s: %v (fields %v), want INVALID_ARGUMENT naming %s", tc.name, err, badRequestFields(err), tc.field)
			}
		}
		// A server whose operator allowed no host refuses every webhook.
		_, err := suite.client.API().CreateAgent(ctx, &agentv1.CreateAgentRequest{Agent: &agentv1.Agent{Config: &agentv1.AgentConfig{
			Webhook: &agentv1.Webhook{Url: proto.String(recv.url + "/ok")}}}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "sends no webhooks") {
			t.Errorf("the suite's server (no allowed host): %v", err)
		}
	})
}

// TestWebhooksDocVerifier keeps the verifier docs/webhooks.md shows the
// one TestWebhooks runs (tests/webhooks/verify.py).
func TestWebhooksDocVerifier(t *testing.T) {
	t.Parallel()
	fn := func(path string) string {
		b, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), path))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i := strings.Index(s, "def verify(")
		j := strings.Index(s[max(i, 0):], "\n\n\n")
		if i < 0 || j < 0 {
			t.Fatalf("%s has no function verify", path)
		}
		return s[i : i+j]
	}
	if doc, test := fn("docs/webhooks.md"), fn("tests/webhooks/verify.py"); doc != test {
		t.Fatalf("docs/webhooks.md's verify differs from tests/webhooks/verify.py's:\n%s\n---\n%s", doc, test)
	}
}
