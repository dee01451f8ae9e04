package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPListen drives agent-server's MCP listener (-mcp-listen) from the
// official TypeScript MCP SDK (tests/mcpclient): the bearer token, list,
// a call with streamed progress, content parts, an invalid input, and a
// cancelled call whose process tree must then be gone.
func TestMCPListen(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot(), "tests", "mcpclient")
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		unavailable(t, "tests/mcpclient has no node_modules: run make test-deps (or npm ci there)")
	}
	const token = "mcp-test-token-42"
	srv, err := startServer(suite.plugins, []string{"-mcp-listen", "127.0.0.1:0"}, "AGENTCORE_AUTH_TOKEN="+token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	addr := mcpAddr(t, srv)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs", "http://"+addr+"/mcp", token)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, out)
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var step map[string]any
		if json.Unmarshal(sc.Bytes(), &step) == nil {
			name, _ := step["step"].(string)
			delete(step, "step")
			steps[name] = step
		}
	}
	check := func(name, want string) {
		t.Helper()
		b, _ := json.Marshal(steps[name])
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: %s lacks %s\nall output:\n%s", name, b, want, out)
		}
	}
	check("unauthorized", `"error":"`+`Streamable HTTP error`)
	check("list", `{"name":"bar_chart","readOnly":true,"schemaType":"object"}`)
	check("list", `{"name":"shell","readOnly":false,"schemaType":"object"}`)
	check("progress", `"progress":[{"message":"counted to 1\n","progress":1},{"message":"counted to 2\n","progress":2},{"message":"counted to 3\n","progress":3}]`)
	check("progress", `"content":[{"text":"counted to 3","type":"text"}],"isError":false`)
	check("content", `"isError":false,"mimeType":"image/png","types":["text","image"]`)
	check("error", `"isError":true`)
	check("error", `"text":"invalid input for tool \"count\"`)
	check("cancel", `"error":"MCP error`)

	pids, _ := steps["pids"]["pids"].([]any)
	if len(pids) != 2 {
		t.Fatalf("no pids from the cancelled call:\n%s", out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		pid := int(p.(float64))
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d of the cancelled call still runs", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// mcpAddr waits for agent-server's "mcp listening" log line and returns its address.
func mcpAddr(t *testing.T, p *serverProc) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(p.logs(), "\n") {
			var rec struct {
				Message string `json:"@message"`
				Addr    string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Message == "mcp listening" {
				return rec.Addr
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no mcp listening line:\n%s", p.logs())
	return ""
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
