package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcore/agentcore/internal/e2e"
)

// TestPythonSDK runs sdk/python's unit tests (schemas from type hints,
// results, tool definitions) with an interpreter that has grpcio.
func TestPythonSDK(t *testing.T) {
	t.Parallel()
	py := pythonWithGRPC(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", "tests")
	cmd.Dir = filepath.Join(e2e.RepoRoot(), "sdk", "python")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s -m unittest: %v\n%s", py, err, out)
	}
}

// TestNodeSDK runs sdk/node's unit tests and type-checks its declarations
// (npm test: node --test, tsc).
func TestNodeSDK(t *testing.T) {
	t.Parallel()
	nodeLang(t)
	cmd := exec.Command("npm", "test", "--silent")
	cmd.Dir = filepath.Join(e2e.RepoRoot(), "sdk", "node")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
}

// TestPythonSDKInstalls installs sdk/python with a plain pip install into
// a virtual environment, offline (--no-index: pip builds it in an isolated
// environment with the package's own build backend, and its dependencies
// are the system's grpcio and protobuf), and runs the SDKs' unit tests
// against the installed package, away from the source tree.
func TestPythonSDKInstalls(t *testing.T) {
	t.Parallel()
	py := pythonWithGRPC(t)
	if out, err := exec.Command(py, "-c", "import venv, ensurepip").CombinedOutput(); err != nil {
		unavailable(t, "%s has no venv or ensurepip (apt-get install python3-venv): %v %s", py, err, lastLine(out))
	}
	src := filepath.Join(e2e.RepoRoot(), "sdk", "python")
	pkg := filepath.Join(t.TempDir(), "python")
	if err := os.CopyFS(pkg, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "venv")
	steps := [][]string{
		{py, "-m", "venv", "--system-site-packages", env},
		{filepath.Join(env, "bin", "python"), "-m", "pip", "install", "--quiet", "--no-index", pkg},
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	// The tests alone, with no src beside them: they import the installed package.
	tests := t.TempDir()
	files, err := filepath.Glob(filepath.Join(src, "tests", "test_*.py"))
	if err != nil || len(files) < 2 {
		t.Fatalf("the SDKs' unit tests: %v %v", files, err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tests, filepath.Base(f)), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, mod := range []string{"agentcore_tool", "agentcore.client"} {
		where := exec.Command(filepath.Join(env, "bin", "python"), "-c", "import "+mod+"; print("+mod+".__file__)")
		where.Dir = tests
		out, err := where.CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), env) {
			t.Fatalf("%s imported from %q (%v), not from the virtual environment %s", mod, out, err, env)
		}
	}
	run := exec.Command(filepath.Join(env, "bin", "python"), "-m", "unittest", "discover", "-s", tests)
	run.Dir = tests
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("unittest against the installed package: %v\n%s", err, out)
	}
}
