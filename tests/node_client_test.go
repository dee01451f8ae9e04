package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
)

// tsClient makes sdk/node-client runnable: node on PATH, its packages
// installed (make test-deps), and tsc run over the client and its tests,
// which type-checks both and builds dist/.
func tsClient(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	dir := filepath.Join(e2e.RepoRoot(), "sdk", "node-client")
	tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		unavailable(t, "sdk/node-client has no node_modules: run make test-deps (or npm ci there)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", tsc, "-p", "tsconfig.json")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc -p sdk/node-client/tsconfig.json: %v\n%s", err, out)
	}
	return dir
}

// tsScripts are the fake model's answers the client's tests use, by the
// name the tests know them by.
func tsScripts(t *testing.T) map[string]string {
	hello := func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{TextChunks: []string{"Greeting ", "Ming."},
				ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
		}
		return fakemodel.Turn{Text: "I said: " + strings.Join(e2e.LastToolResults(req), "")}
	}
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + string(rune('a'+i%26)) + " "
	}
	var retried atomic.Int32
	return map[string]string{
		"hello": suite.Router.Add(t, hello),
		// slow streams 40 words 25 ms apart: a run that lasts a second,
		// long enough to stop, detach from or cut mid-way.
		"slow": suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
			return fakemodel.Turn{TextChunks: words, ChunkDelay: 25 * time.Millisecond}
		}),
		// retry fails its first request with a 503, then answers.
		"retry": suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
			if retried.Add(1) == 1 {
				return fakemodel.Turn{Status: 503, ErrorBody: `{"error":{"message":"overloaded","type":"server_error"}}`}
			}
			return fakemodel.Turn{Text: "fine now"}
		}),
		"auth": suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
			return fakemodel.Turn{Status: 401, ErrorBody: `{"error":{"message":"bad key","type":"invalid_request_error"}}`}
		}),
		// compact answers a compaction request with a summary, anything else with ok.
		"compact": suite.Router.Add(t, func(_ int, req *fakemodel.Request) fakemodel.Turn {
			if strings.Contains(string(req.Body), "Write the summary now") {
				return fakemodel.Turn{TextChunks: []string{"Goal: ", "none."}, Usage: &fakemodel.Usage{Input: 20, Output: 4}}
			}
			return fakemodel.Turn{Text: "ok", Usage: &fakemodel.Usage{Input: 10, Output: 1}}
		}),
	}
}

// TestTypeScriptClient runs the TypeScript client's tests (node --test)
// against the real agent-server and the scripted model: every call of the
// client, permissions, detaching and reattaching, a connection cut mid-run,
// errors and their reasons, a token; then examples/node on the client.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	dir := tsClient(t)
	scripts, err := json.Marshal(tsScripts(t))
	if err != nil {
		t.Fatal(err)
	}
	const token = "ts-client-token-4f1d2c9e8b7a"
	tokens := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(tokens, []byte("tenants:\n  ts:\n    tokens: ["+token+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Without a default model: a send there fails NO_MODEL.
	authed, err := suite.StartServer(suite.Plugins, []string{"-auth-tokens-file", tokens},
		"AGENTCORE_MODEL_BASE_URL=", "AGENTCORE_MODEL=", "AGENTCORE_MODEL_API_KEY=")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := authed.Stop(); err != nil {
			t.Errorf("agent-server with tokens did not stop cleanly: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	files, err := filepath.Glob(filepath.Join(dir, "dist", "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tests in sdk/node-client/dist/test: %v", err)
	}
	cmd := exec.CommandContext(ctx, "node", append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"AGENTCORE_TEST_ADDR="+suite.server.Addr,
		"AGENTCORE_TEST_SCRIPTS="+string(scripts),
		"AGENTCORE_TEST_AUTH_ADDR="+authed.Addr,
		"AGENTCORE_TEST_TOKEN="+token,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test sdk/node-client: %v\n%s", err, out)
	}
	t.Logf("node --test sdk/node-client:\n%s", out)
	if strings.Contains(authed.Logs(), token) {
		t.Error("the token appears in the server's logs")
	}
}
