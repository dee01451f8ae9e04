package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// HTTPToken is the bearer token of the servers StartHTTPServer starts.
const HTTPToken = "http-e2e-token-0123456789abcdef"

var servingHTTP = regexp.MustCompile(`"@message":"serving HTTP"[^\n]*"addr":"([^"]+)"`)

// StartHTTPServer starts an agent-server of the test's own with
// -http-listen on a free port, the bearer token HTTPToken and the suite's
// plugins and model, and returns it with its HTTP listener's base URL
// (http://127.0.0.1:PORT). It is stopped when the test ends, and fails the
// test when a secret shows in its logs.
func (s *Suite) StartHTTPServer(t testing.TB, extra ...string) (*Server, string) {
	t.Helper()
	p, err := s.StartServer(s.Plugins, append([]string{"-http-listen", "127.0.0.1:0"}, extra...), "AGENTCORE_AUTH_TOKEN="+HTTPToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
		if strings.Contains(p.Logs(), TestKey) || strings.Contains(p.Logs(), HTTPToken) {
			t.Errorf("a secret appeared in the server's logs")
		}
	})
	return p, "http://" + HTTPAddr(t, p)
}

// HTTPAddr is the address of a server's HTTP listener, from its log.
func HTTPAddr(t testing.TB, p *Server) string {
	t.Helper()
	// The line is written before the server serves, but read from its
	// stderr by another goroutine: it may take a moment to show.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := servingHTTP.FindStringSubmatch(p.Logs()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no serving HTTP line in the logs:\n%s", p.Logs())
		}
	}
}
