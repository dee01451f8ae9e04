package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
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
// a virtual environment, offline (e2e.InstallPythonSDK), and runs the SDKs'
// unit tests against the installed package, away from the source tree.
func TestPythonSDKInstalls(t *testing.T) {
	t.Parallel()
	venvPy, err := e2e.InstallPythonSDK(t, pythonWithGRPC(t))
	if err != nil {
		unavailable(t, "%v", err)
	}
	src := filepath.Join(e2e.RepoRoot(), "sdk", "python")
	// The tests alone, with no src beside them: they import the installed
	// package (test_backend.py tests the build backend in the tree).
	tests := t.TempDir()
	for _, f := range []string{"test_sdk.py", "test_client.py"} {
		body, err := os.ReadFile(filepath.Join(src, "tests", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tests, f), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := exec.Command(venvPy, "-m", "unittest", "discover", "-s", tests)
	run.Dir = tests
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("unittest against the installed package: %v\n%s", err, out)
	}
}
