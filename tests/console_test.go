package tests

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
)

// missing skips the test for a missing prerequisite, or fails it under CI
// (CI=true), where .ci/run installs everything the test needs.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// chromiumPath is Debian's chromium, or $CHROMIUM.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// consoleModules makes tests/console runnable: node on PATH and
// playwright-core installed (npm ci, once; node_modules is kept).
func consoleModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not on PATH: the console is not tested in a browser")
	}
	if _, err := os.Stat(chromiumPath()); err != nil {
		missing(t, "no chromium at %s (apt-get install chromium; or set CHROMIUM): the console is not tested in a browser", chromiumPath())
	}
	dir := filepath.Join(e2e.RepoRoot(), "tests", "console")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err == nil {
		return dir
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missing(t, "tests/console/node_modules is missing and npm is not on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		missing(t, "tests/console/node_modules is missing and npm ci failed: %v\n%s", err, out)
	}
	return dir
}

// consoleTask is the scripted model of the console test: it says what it
// will do and calls shell, whose output streams, then reports.
func consoleTask(step int, req *fakemodel.Request) fakemodel.Turn {
	if step == 0 {
		return fakemodel.Turn{
			TextChunks: []string{"Let me ", "build it."},
			ToolCalls: []fakemodel.ToolCall{{ID: "call_build", Name: "shell",
				Arguments: `{"command":"echo building; sleep 0.3; echo 'a warning' >&2; echo done"}`}},
			Usage: &fakemodel.Usage{Input: 120, Output: 20},
		}
	}
	return fakemodel.Turn{TextChunks: []string{"The greeting ", "is built."}, Usage: &fakemodel.Usage{Input: 180, Output: 8}}
}

// consoleDeny is the scripted model of the console's denial: it calls
// shell, which the test denies with a reason, then says what it was told.
func consoleDeny(step int, req *fakemodel.Request) fakemodel.Turn {
	if step == 0 {
		return fakemodel.Turn{Text: "I will look around.", ToolCalls: []fakemodel.ToolCall{{ID: "call_look", Name: "shell",
			Arguments: `{"command":"echo should-not-run"}`}}}
	}
	return fakemodel.Turn{Text: "I was told: " + strings.Join(e2e.LastToolResults(req), "")}
}

// consoleSlow starts a shell command that outlasts the test, for the Stop buttons.
func consoleSlow(step int, _ *fakemodel.Request) fakemodel.Turn {
	if step == 0 {
		return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_wait", Name: "shell", Arguments: `{"command":"echo waiting; sleep 120"}`}}}
	}
	return fakemodel.Turn{Text: "the stopped call came back"}
}

// consoleFail is a model that refuses the key: the run fails, error kind auth.
func consoleFail(int, *fakemodel.Request) fakemodel.Turn {
	return fakemodel.Turn{Status: 401, ErrorBody: `{"error": {"message": "bad key", "type": "invalid_request_error"}}`}
}

// TestConsoleInBrowser drives the web console in headless chromium against
// a real agent-server: token, create an agent, send a task and watch its
// events stream (text, live tool output, result), try a tool; deny a call
// with a reason, stop running runs from the agent's page and the run's,
// and see a failed run's error kind; past runs' approvals, the agent's
// model, the runs table's durations and errors; a run whose agent calls
// another, its child run drawn inside the call and the tree in the runs
// table; a tool's request for input (an MCP server's elicitation) shown as
// a form and answered, on a second server of the MCP test server's tools.
// Screenshots are kept in a
// temporary folder the log names (console-failure.png when a step failed).
// The browser program waits on the console's own state; the budget below
// only bounds a hang, for a step can take many times its usual time on a
// loaded machine.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	dir := consoleModules(t)
	h := startHTTPServer(t)
	mcp := mcpToolServer(t)
	system := suite.Router.Add(t, consoleTask)
	shots, err := os.MkdirTemp("", "agentcore-console-shots-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "console.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"CONSOLE_URL="+h.url, "CONSOLE_TOKEN="+e2e.HTTPToken, "CONSOLE_SYSTEM="+system, "CONSOLE_SHOTS="+shots,
		"CONSOLE_SYSTEM_DENY="+suite.Router.Add(t, consoleDeny), "CONSOLE_SYSTEM_SLOW="+suite.Router.Add(t, consoleSlow),
		"CONSOLE_SYSTEM_FAIL="+suite.Router.Add(t, consoleFail),
		"CONSOLE_SYSTEM_LEAD="+suite.Router.Add(t, delegating("The helper said: ", "helper", "do it")),
		"CONSOLE_SYSTEM_HELPER="+suite.Router.Add(t, answer(func(*fakemodel.Request) string { return "the helper did it" })),
		"CONSOLE_MCP_URL="+mcp.url, "CONSOLE_SYSTEM_ELICIT="+suite.Router.Add(t, callOnce("ask_user", `{}`)),
		"CONSOLE_SECRETS="+e2e.TestKey, "CHROMIUM="+chromiumPath())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("the browser test ran over 5 minutes:\n%s", out.String())
	}
	if err != nil {
		t.Fatalf("node console.mjs: %v\n%s", err, out.String())
	}
	if !strings.HasSuffix(strings.TrimSpace(out.String()), "ok") {
		t.Fatalf("the browser test did not finish:\n%s", out.String())
	}
	for _, name := range []string{"console-run.png", "console-tool.png", "console-denied.png", "console-stopped.png", "console-failed.png", "console-elicitation.png"} {
		fi, err := os.Stat(filepath.Join(shots, name))
		if err != nil || fi.Size() < 1000 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
}
