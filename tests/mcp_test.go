package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/pkg/auth"
)

// mcpClient returns the command running tests/mcpclient's client.mjs with
// args (a mode and its arguments), or ends the test when node or the
// client's node_modules are missing (failing under CI).
func mcpClient(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	dir := filepath.Join(e2e.RepoRoot(), "tests", "mcpclient")
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		unavailable(t, "tests/mcpclient has no node_modules: run make test-deps (or npm ci there)")
	}
	cmd := exec.CommandContext(ctx, "node", append([]string{"client.mjs"}, args...)...)
	cmd.Dir = dir
	return cmd
}

// mcpSteps is what client.mjs printed: each step's JSON object by its name.
type mcpSteps struct {
	steps map[string]map[string]any
	out   strings.Builder // all of it, for failure messages
}

// add records one line of the client's output and returns its step's name ("" for another line).
func (s *mcpSteps) add(line []byte) string {
	s.out.Write(line)
	s.out.WriteByte('\n')
	var step map[string]any
	if json.Unmarshal(line, &step) != nil {
		return ""
	}
	name, _ := step["step"].(string)
	delete(step, "step")
	if s.steps == nil {
		s.steps = map[string]map[string]any{}
	}
	s.steps[name] = step
	return name
}

// check fails the test unless step's JSON holds want.
func (s *mcpSteps) check(t *testing.T, name, want string) {
	t.Helper()
	b, _ := json.Marshal(s.steps[name])
	if !strings.Contains(string(b), want) {
		t.Errorf("%s: %s lacks %s\nall output:\n%s", name, b, want, s.out.String())
	}
}

// TestMCPListen drives agent-server's MCP listener (-mcp-listen) from the
// official TypeScript MCP SDK (tests/mcpclient): the bearer token, list,
// a call with streamed progress, content parts, an invalid input, an
// output cut to -max-tool-output, a cancelled call whose process tree (the
// plugin, bash and its sleep) is gone while the session is still open, and
// the calls counted in the tool metrics and traced as ExecuteTool's are.
func TestMCPListen(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const token = "mcp-test-token-42"
	const limit = 64
	cmd := mcpClient(t, ctx) // before the server: it may skip the test
	recv := startReceiver(t)
	srv, err := suite.StartServer(suite.Plugins, []string{"-mcp-listen", "127.0.0.1:0", "-metrics-listen", "127.0.0.1:0",
		"-max-tool-output", fmt.Sprint(limit)}, "AGENTCORE_AUTH_TOKEN="+token,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+recv.addr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_BSP_SCHEDULE_DELAY=50")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	addr, _ := srv.WaitLog(t, "mcp listening")["addr"].(string)
	metrics, _ := srv.WaitLog(t, "metrics listening")["addr"].(string)

	cmd.Args = append(cmd.Args, "calls", "http://"+addr+"/mcp", token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var s mcpSteps
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if s.add(sc.Bytes()) != "cancelled" {
			continue
		}
		// The client keeps its session (and its connection) open until it
		// reads a line: the cancelled call's tree must die before.
		pids, _ := s.steps["pids"]["pids"].([]any)
		if len(pids) != 3 {
			t.Fatalf("no pids (plugin, bash, sleep) from the cancelled call:\n%s", s.out.String())
		}
		deadline := time.Now().Add(5 * time.Second)
		for i, p := range pids {
			pid := int(p.(float64))
			for alive(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("process %d (%s) of the cancelled call still runs with the client's session open",
						pid, []string{"plugin", "bash", "sleep"}[i])
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if _, err := io.WriteString(stdin, "close\n"); err != nil {
			t.Fatal(err)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node client.mjs: %v\n%s\n%s", err, s.out.String(), stderr.String())
	}
	if s.steps["after"] == nil {
		t.Fatalf("the client never got to close its session:\n%s\n%s", s.out.String(), stderr.String())
	}
	s.check(t, "unauthorized", `"status":401`)
	s.check(t, "list", `{"name":"bar_chart","readOnly":true,"schemaType":"object"}`)
	s.check(t, "list", `{"name":"shell","readOnly":false,"schemaType":"object"}`)
	s.check(t, "progress", `"progress":[{"message":"counted to 1\n","progress":1},{"message":"counted to 2\n","progress":2},{"message":"counted to 3\n","progress":3}]`)
	s.check(t, "progress", `"content":[{"text":"counted to 3","type":"text"}],"isError":false`)
	s.check(t, "content", `"isError":false,"mimeType":"image/png","types":["text","image"]`)
	s.check(t, "error", `"isError":true`)
	s.check(t, "error", `"text":"invalid input for tool \"count\"`)
	s.check(t, "cancel", `"error":"MCP error`)
	s.check(t, "after", `"text":"counted to 1"`)
	// The shell's JSON result, longer than the limit, is cut from the middle.
	s.check(t, "limit", `"isError":false`)
	s.check(t, "limit", fmt.Sprintf("characters cut from the middle: the output is longer than the %d-character limit", limit))
	if txt, _ := s.steps["limit"]["text"].(string); strings.Contains(txt, strings.Repeat("a", limit)) {
		t.Errorf("output not cut to %d characters: %q", limit, txt)
	}

	// Counted and traced as ExecuteTool's calls are.
	want := map[string]float64{
		`agentcore_tool_calls_total{outcome="ok",tool="count"}`:     2,
		`agentcore_tool_calls_total{outcome="ok",tool="bar_chart"}`: 1,
		`agentcore_tool_calls_total{outcome="ok",tool="shell"}`:     1,
		`agentcore_tool_calls_total{outcome="killed",tool="shell"}`: 1,
		`agentcore_tool_calls_total{outcome="error",tool="count"}`:  1,
		`agentcore_tool_call_duration_seconds_count{tool="count"}`:  3,
	}
	got := scrapeMetrics(t, metrics)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if n := len(recv.named("execute_tool count", 3)); n != 3 {
		t.Errorf("%d execute_tool count spans, want 3 (two calls and the invalid one)", n)
	}
}

// TestMCPTenants runs the MCP listener with a tenants file: a request
// without a token or with a wrong one is refused, each tenant lists and
// calls the tools (shared by every tenant: nothing offered over MCP is an
// admin's only), and a session stays its tenant's.
func TestMCPTenants(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := mcpClient(t, ctx)
	tokens := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(tokens, []byte("tenants:\n"+
		"  alice:\n    tokens: ["+aliceToken+"]\n"+
		"  bob:\n    admin: true\n    tokens: [\""+auth.HashToken(bobToken)+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := suite.StartServer(suite.Plugins, []string{"-mcp-listen", "127.0.0.1:0", "-auth-tokens-file", tokens})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	addr, _ := srv.WaitLog(t, "mcp listening")["addr"].(string)
	cmd.Args = append(cmd.Args, "tenants", "http://"+addr+"/mcp", aliceToken, bobToken)
	out, err := cmd.CombinedOutput()
	var s mcpSteps
	for _, line := range bytes.Split(out, []byte("\n")) {
		s.add(line)
	}
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, out)
	}
	s.check(t, "no token", `"status":401`)
	s.check(t, "wrong token", `"status":401`)
	s.check(t, "tenant a", `"hasCount":true,"isError":false,"text":"counted to 1"`)
	s.check(t, "tenant b", `"hasCount":true,"isError":false,"text":"counted to 2"`)
	if a, b := s.steps["tenant a"]["tools"], s.steps["tenant b"]["tools"]; a != b {
		t.Errorf("tenant a lists %v tools, tenant b %v", a, b)
	}
	s.check(t, "hijack", `"status":403`)
	s.check(t, "hijack", `session user mismatch`)
	if strings.Contains(string(out), aliceToken) || strings.Contains(srv.Logs(), aliceToken) || strings.Contains(srv.Logs(), bobToken) {
		t.Error("a token is echoed back or logged")
	}
}

// unavailable skips the test with why, or fails it under CI, which must
// have installed what the test needs (.ci/run).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format, args...)
}
