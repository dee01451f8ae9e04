package tests

import (
	"net"
	"net/http"
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

// TestBadModelURLFailsTheStart starts agent-server with model base URLs a
// newcomer gets wrong: it exits 2 at once, naming the variable, flag or
// config key that holds the URL and what is wrong with it.
func TestBadModelURLFailsTheStart(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "agentcore.yaml")
	if err := os.WriteFile(cfg, []byte("profiles:\n  fast:\n    base_url: htp://models.example\n    model: m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"a variable without a scheme", []string{"AGENTCORE_MODEL_BASE_URL=127.0.0.1:18080/v1", "AGENTCORE_MODEL=m"}, nil,
			[]string{`AGENTCORE_MODEL_BASE_URL "127.0.0.1:18080/v1": not an absolute URL`, `did you mean "http://127.0.0.1:18080/v1"?`}},
		{"a flag with a wrong scheme", []string{"AGENTCORE_MODEL=m"}, []string{"-model-base-url", "htp://x"},
			[]string{`-model-base-url "htp://x": scheme "htp": want http or https`}},
		{"a profile in the config file", nil, []string{"-config", cfg},
			[]string{`config file key profiles.fast.base_url "htp://models.example": scheme "htp"`}},
		{"no host", []string{"AGENTCORE_MODEL=m"}, []string{"-model-base-url", "http:///v1"},
			[]string{`-model-base-url "http:///v1": no host`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := append([]string{"AGENTCORE_MODEL_BASE_URL=", "AGENTCORE_MODEL="}, tt.env...)
			code, out := runServerOnce(env, append([]string{"-tool-dir", suite.Plugins}, tt.args...)...)
			for _, w := range tt.want {
				if code != 2 || !strings.Contains(out, w) || strings.Contains(out, `"@message":"listening"`) {
					t.Fatalf("exit %d, want 2 saying %q:\n%s", code, w, out)
				}
			}
		})
	}
}

// TestModelErrorsNameTheEndpoint sends to models a newcomer gets wrong: a
// closed port fails within a few attempts (before, 11 retries over 2½
// minutes), and a 501 HTML page becomes its title; both errors name the
// host and path called.
func TestModelErrorsNameTheEndpoint(t *testing.T) {
	t.Parallel()
	t.Run("a closed port", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := l.Addr().String()
		l.Close()
		p, err := suite.StartServer(suite.Plugins, nil, "AGENTCORE_MODEL_BASE_URL=http://"+closed+"/v1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopServer(t, p) })
		c := dialTo(t, p)
		// A minute is far beyond the default -retry-unreachable (5s), and
		// far below the 3 minutes of -retry-max-elapsed the send took before.
		ctx := e2e.Context(t, time.Minute)
		a, err := c.CreateAgent(ctx, client.AgentOptions{})
		if err != nil {
			t.Fatal(err)
		}
		retries := 0
		_, err = a.Send(ctx, "hi", client.Callbacks{OnRetry: func(*agentv1.RetryEvent) { retries++ }})
		var ce *client.Error
		want := "calling " + closed + "/v1/chat/completions"
		if !asClientError(err, &ce) || ce.Kind != client.KindNetwork || !strings.Contains(ce.Message, want) ||
			!strings.Contains(ce.Message, "cannot reach the model service") || !strings.Contains(ce.Message, "connection refused") {
			t.Fatalf("send to a closed port: %v; want a network error saying %q", err, want)
		}
		if retries > 4 {
			t.Errorf("%d retries before failing, want a few (-retry-unreachable)", retries)
		}
		// The model client's line on the last attempt: the log is written
		// in the background, so it may come a moment after the send's end.
		var last map[string]any
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			for _, line := range p.LogLines("model request failed") {
				if line["@module"] == "agent-server.llm" {
					last = line
				}
			}
			if next, _ := last["next"].(string); strings.Contains(next, "-retry-unreachable") || time.Now().After(deadline) {
				break
			}
		}
		if next, _ := last["next"].(string); last["endpoint"] != closed+"/v1/chat/completions" || !strings.Contains(next, "-retry-unreachable") {
			t.Errorf("the last failed attempt's log line: %v", last)
		}
	})
	t.Run("a 501 HTML page", func(t *testing.T) {
		t.Parallel()
		page := "<!DOCTYPE html>\n<html><head><title>501 Not Implemented</title><style>h1{color:red}</style></head>\n" +
			"<body><h1>Not Implemented</h1><p>The server does not support the action requested.</p><hr><address>Apache/2.4 Server</address></body></html>"
		calls := 0
		a := newAgent(t, func(int, *fakemodel.Request) fakemodel.Turn {
			calls++
			return fakemodel.Turn{Status: 501, ErrorBody: page, Header: http.Header{"Content-Type": {"text/html"}}}
		}, &agentv1.AgentConfig{MaxSteps: proto.Int32(2)})
		_, err := a.Send(e2e.Context(t, 30*time.Second), "hi", client.Callbacks{})
		var ce *client.Error
		want := "server error (HTTP 501) calling " + mustHost(t, suite.Model.URL) + "/chat/completions: 501 Not Implemented"
		if !asClientError(err, &ce) || !strings.HasSuffix(ce.Message, want) || strings.Contains(ce.Message, "<") || ce.Retryable || calls != 1 {
			t.Fatalf("a 501 page: %v (%d calls); want, not retried, %q", err, calls, want)
		}
	})
}
