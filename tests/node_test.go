package tests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
)

// networkTrouble matches npm's messages when the registry cannot be reached.
var networkTrouble = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|network|socket hang up`)

// nodeExample makes examples/node runnable: node and npm on PATH, its
// packages installed (npm ci, once; node_modules is kept between runs).
func nodeExample(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: the Node.js example is not tested", tool)
		}
	}
	dir := filepath.Join(e2e.RepoRoot(), "examples", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@grpc", "grpc-js", "package.json")); err == nil {
		return dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		if networkTrouble.Match(out) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Skipf("npm ci could not reach the registry, the Node.js example is not tested: %v\n%s", err, out)
		}
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	return dir
}

func TestNodeClient(t *testing.T) {
	t.Parallel()
	dir := nodeExample(t)
	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{TextChunks: []string{"Greeting ", "Ming."},
				ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
		}
		return fakemodel.Turn{Text: "I said: " + strings.Join(e2e.LastToolResults(req), "")}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.js", suite.server.Addr, "Say hello to Ming.")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTCORE_SYSTEM="+system)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.js: %v\n%s", err, out)
	}
	for _, want := range []string{
		`permission asked: say_hello {"name":"Ming"} -> allow`,
		"<- say_hello = Hello, Ming!",
		`result: reason=END_REASON_NO_TOOL steps=2 text="I said: Hello, Ming!"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
