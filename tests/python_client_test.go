package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// pyTimeout bounds one Python program of these tests.
const pyTimeout = 5 * time.Minute

// pythonClientRuntime returns an interpreter that imports grpcio and protobuf.
func pythonClientRuntime(t *testing.T) string {
	t.Helper()
	py, err := e2e.Python()
	if err != nil {
		unavailable(t, "%v", err)
	}
	return py
}

// pyPlan is what sdk/python/e2e writes on the second line of an agent's
// system prompt (harness.plan): the model's answer to each step, a list of
// attempts (a step asked again, after a failed attempt, gets the next).
type pyPlan struct {
	Steps [][]fakemodel.Turn `json:"steps"`
}

// pyResults in a planned text is replaced by the request's last tool results.
const pyResults = "{results}"

// pyPlanned answers a model request from the plan in the agent's system
// prompt, whose first line is key. A compaction request, whose system
// prompt is the compactor's, gets a fixed summary.
func pyPlanned(key string) func(step int, req *fakemodel.Request) fakemodel.Turn {
	var mu sync.Mutex
	attempts := map[string]int{}
	return func(step int, req *fakemodel.Request) fakemodel.Turn {
		var msgs []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		}
		req.Field("messages", &msgs)
		system := ""
		if len(msgs) > 0 && msgs[0].Role == "system" {
			system = e2e.ContentText(msgs[0].Content)
		}
		lines := strings.SplitN(system, "\n", 3)
		if lines[0] != key {
			return fakemodel.Turn{Text: "Summary of the talk."}
		}
		var plan pyPlan
		if len(lines) < 2 || json.Unmarshal([]byte(lines[1]), &plan) != nil || len(plan.Steps) == 0 {
			return fakemodel.Turn{Status: 400, ErrorBody: "the system prompt's second line is not a plan"}
		}
		attempt := fmt.Sprint(step, "\x00", lines[1])
		mu.Lock()
		n := attempts[attempt]
		attempts[attempt]++
		mu.Unlock()
		tries := plan.Steps[min(step, len(plan.Steps)-1)]
		turn := tries[min(n, len(tries)-1)]
		results := strings.Join(e2e.LastToolResults(req), " and ")
		turn.Text = strings.ReplaceAll(turn.Text, pyResults, results)
		for i, c := range turn.TextChunks {
			turn.TextChunks[i] = strings.ReplaceAll(c, pyResults, results)
		}
		return turn
	}
}

// runPython runs a Python program with args in dir and returns its output;
// PYTHONPATH gives it sdk/python/src unless env says otherwise.
func runPython(t *testing.T, py, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(e2e.RepoRoot(), "sdk", "python", "src"), "PYTHONDONTWRITEBYTECODE=1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", py, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// unittestRan matches unittest's count line.
var unittestRan = regexp.MustCompile(`(?m)^Ran (\d+) tests? in`)

// TestPythonClient runs sdk/python/e2e, the Python client's end-to-end
// tests, against a real agent-server (of its own, which wants a bearer
// token) and the scripted model: every call of the sync and of the asyncio
// client, permissions, detaching and reconnecting over a connection the
// tests cut, errors decoded with their reasons, a unix socket; and against
// a second server over mutual TLS with tenants (tsAuthServer), by a token
// and by a client certificate.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	py := pythonClientRuntime(t)
	srv, _ := suite.StartHTTPServer(t)
	authed, authEnv := tsAuthServer(t)
	key := "e2e:" + t.Name()
	suite.Router.Set(t, key, pyPlanned(key))
	env := []string{"AGENTCORE_TEST_TARGET=" + srv.Addr, "AGENTCORE_TEST_TOKEN=" + e2e.HTTPToken,
		"AGENTCORE_TEST_SCRIPT_KEY=" + key, "AGENTCORE_TEST_AUTH_ADDR=" + authed.Addr}
	for _, kv := range authEnv {
		env = append(env, strings.Replace(kv, "AGENTCORE_TEST_", "AGENTCORE_TEST_AUTH_", 1))
	}
	out := runPython(t, py, filepath.Join(e2e.RepoRoot(), "sdk", "python", "e2e"), env, "-m", "unittest", "discover", "-s", ".", "-v")
	m := unittestRan.FindStringSubmatch(out)
	if m == nil || m[1] == "0" || strings.Contains(out, "skipped") {
		t.Fatalf("the Python client's tests ran none, or skipped some:\n%s", out)
	}
	t.Logf("sdk/python/e2e: %s tests", m[1])
	for _, tok := range []string{tsToken, tsAdminToken} {
		if strings.Contains(authed.Logs(), tok) {
			t.Error("a token appears in the server's logs")
		}
	}
}

// pyHello is the five-minute task's model: say_hello for Ming, then what
// it said.
func pyHello(step int, req *fakemodel.Request) fakemodel.Turn {
	if step == 0 {
		return fakemodel.Turn{TextChunks: []string{"Greeting ", "Ming."},
			ToolCalls: []fakemodel.ToolCall{{ID: "call_hello", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
	}
	return fakemodel.Turn{Text: "I said: " + strings.Join(e2e.LastToolResults(req), "")}
}

// TestPythonExample installs sdk/python into a virtual environment with
// pip, offline, and runs examples/python/hello.py with it: the README's
// task with the permission request answered.
func TestPythonExample(t *testing.T) {
	t.Parallel()
	venvPy, err := e2e.InstallPythonSDK(t, pythonClientRuntime(t))
	if err != nil {
		unavailable(t, "%v", err)
	}
	key := "e2e:" + t.Name()
	suite.Router.Set(t, key, pyHello)
	out := runPython(t, venvPy, t.TempDir(), []string{"PYTHONPATH=", "AGENTCORE_SYSTEM=" + key},
		filepath.Join(e2e.RepoRoot(), "examples", "python", "hello.py"), suite.server.Addr)
	for _, want := range []string{
		`permission asked: say_hello {"name":"Ming"} -> allow`,
		"-> say_hello {\"name\":\"Ming\"}",
		"<- say_hello = Hello, Ming!",
		`result: reason=no-tool steps=2 text='I said: Hello, Ming!'`,
		"user: Say hello to Ming.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// pyDocs is the Python client's page; the programs on it whose agent has
// the five-minute start's system prompt run in TestPythonClientDocs.
var pyDocs = filepath.Join("docs", "clients", "python.md")

const pyDocsSystem = `"Use the tools to do the task."`

// pythonBlocks returns the page's python code blocks.
func pythonBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), pyDocs))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```python\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestPythonClientDocs runs the programs of the Python client's page, as
// they are written but for the server's address and the agent's system
// prompt, against the real server and the five-minute task's model.
func TestPythonClientDocs(t *testing.T) {
	t.Parallel()
	py := pythonClientRuntime(t)
	key := "e2e:" + t.Name()
	suite.Router.Set(t, key, pyHello)
	wants := [][]string{
		{"tool: say_hello Hello, Ming!", "no-tool 2 I said: Hello, Ming!"},
		{"say_hello done", "I said: Hello, Ming!"},
	}
	ran := 0
	for _, code := range pythonBlocks(t) {
		if !strings.Contains(code, pyDocsSystem) {
			continue
		}
		if ran == len(wants) {
			t.Fatalf("%s has more programs than this test knows the output of", pyDocs)
		}
		code = strings.ReplaceAll(code, `"127.0.0.1:50051"`, fmt.Sprintf("%q", suite.server.Addr))
		code = strings.ReplaceAll(code, pyDocsSystem, fmt.Sprintf("%q", key))
		file := filepath.Join(t.TempDir(), "program.py")
		if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runPython(t, py, t.TempDir(), nil, file)
		for _, want := range wants[ran] {
			if !strings.Contains(out, want) {
				t.Errorf("program %d of %s: the output lacks %q:\n%s", ran+1, pyDocs, want, out)
			}
		}
		ran++
	}
	if ran != len(wants) {
		t.Fatalf("%s: %d programs with the system prompt %s, want %d", pyDocs, ran, pyDocsSystem, len(wants))
	}
}

// TestPythonClientTypes type-checks the Python client, its example and the
// programs of its page with mypy --strict (sdk/python/pyproject.toml's
// settings): the stubs of the generated code and the client's annotations
// must agree with how they are used.
func TestPythonClientTypes(t *testing.T) {
	t.Parallel()
	py := pythonClientRuntime(t)
	if out, err := exec.Command(py, "-m", "mypy", "--version").CombinedOutput(); err != nil {
		unavailable(t, "%s has no mypy (apt-get install python3-mypy): %v %s", py, err, out)
	}
	docs := t.TempDir()
	args := []string{"-m", "mypy", "--cache-dir", filepath.Join(t.TempDir(), "cache"), "src/agentcore",
		filepath.Join(e2e.RepoRoot(), "examples", "python", "hello.py")}
	for i, code := range pythonBlocks(t) {
		file := filepath.Join(docs, fmt.Sprintf("docs_block_%d.py", i+1))
		if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, file)
	}
	out := runPython(t, py, filepath.Join(e2e.RepoRoot(), "sdk", "python"), nil, args...)
	if !strings.Contains(out, "Success: no issues found") {
		t.Fatalf("mypy: %s", out)
	}
}

// TestPythonReasons checks the Python client's Reason and Kind against the
// ErrorReason and ErrorKind enums, whose Go code reasongen's test holds to
// errors.proto: make test fails on Python constants that make sdk-proto was
// not run for, also where proto-check, which needs protoc 3.21, does not
// check the Python code.
func TestPythonReasons(t *testing.T) {
	t.Parallel()
	py := pythonClientRuntime(t)
	out := runPython(t, py, t.TempDir(), nil, "-c",
		"import json; from agentcore.client import Kind, Reason; print(json.dumps([sorted(Reason.ALL), sorted(Kind.ALL)]))")
	var got [2][]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for i, enum := range []struct {
		names  map[int32]string
		prefix string
		wire   func(string) string
	}{
		{agentv1.ErrorReason_name, "ERROR_REASON_", func(s string) string { return s }},
		{agentv1.ErrorKind_name, "ERROR_KIND_", strings.ToLower},
	} {
		var want []string
		for _, name := range enum.names {
			if name != enum.prefix+"UNSPECIFIED" {
				want = append(want, enum.wire(strings.TrimPrefix(name, enum.prefix)))
			}
		}
		slices.Sort(want)
		if !slices.Equal(got[i], want) {
			t.Errorf("the Python client's %s constants are %v, the proto's %v: run make sdk-proto",
				[]string{"Reason", "Kind"}[i], got[i], want)
		}
	}
}
