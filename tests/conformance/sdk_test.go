package conformance

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPythonSDK runs sdk/python's unit tests (schemas from type hints,
// results, tool definitions) with an interpreter that has grpcio.
func TestPythonSDK(t *testing.T) {
	t.Parallel()
	py := pythonWithGRPC(t)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-s", "tests")
	cmd.Dir = filepath.Join(repoRoot(t), "sdk", "python")
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
	cmd.Dir = filepath.Join(repoRoot(t), "sdk", "node")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
}
