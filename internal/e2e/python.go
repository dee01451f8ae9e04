package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Python returns the first of $AGENTCORE_PYTHON, python3 and
// /usr/bin/python3 that imports grpcio and protobuf (Debian's
// python3-grpcio and python3-protobuf); the error says what was tried.
func Python() (string, error) {
	var tried []string
	for _, py := range []string{os.Getenv("AGENTCORE_PYTHON"), "python3", "/usr/bin/python3"} {
		if py == "" {
			continue
		}
		out, err := exec.Command(py, "-c", "import grpc, google.protobuf").CombinedOutput()
		if err == nil {
			return py, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v %s", py, err, lastLine(out)))
	}
	return "", fmt.Errorf("no Python with grpcio and protobuf (apt-get install python3-grpcio python3-protobuf): %s", strings.Join(tried, "; "))
}

// ErrNoVenv is InstallPythonSDK's error when the interpreter cannot make a
// virtual environment.
var ErrNoVenv = errors.New("no venv or ensurepip (apt-get install python3-venv)")

// InstallPythonSDK installs a copy of sdk/python with pip, offline
// (--no-index: pip builds it in an isolated environment with the package's
// own build backend), into a new virtual environment that sees py's
// grpcio and protobuf, and returns the environment's interpreter. A failing
// step fails the test.
func InstallPythonSDK(t testing.TB, py string) (string, error) {
	t.Helper()
	if out, err := exec.Command(py, "-c", "import venv, ensurepip").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w: %v %s", py, ErrNoVenv, err, lastLine(out))
	}
	pkg := filepath.Join(t.TempDir(), "python")
	if err := os.CopyFS(pkg, os.DirFS(filepath.Join(RepoRoot(), "sdk", "python"))); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "venv")
	venvPy := filepath.Join(env, "bin", "python")
	for _, s := range [][]string{
		{py, "-m", "venv", "--system-site-packages", env},
		{venvPy, "-m", "pip", "install", "--quiet", "--no-index", pkg},
	} {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	// Away from the source tree, with no PYTHONPATH: the installed copies.
	where := exec.Command(venvPy, "-c", "import agentcore.client, agentcore_tool; print(agentcore.client.__file__, agentcore_tool.__file__)")
	where.Dir = t.TempDir()
	where.Env = append(os.Environ(), "PYTHONPATH=")
	out, err := where.CombinedOutput()
	if err != nil || strings.Count(string(out), env+"/") != 2 {
		t.Fatalf("the SDKs imported from %q (%v), not from the virtual environment %s", out, err, env)
	}
	return venvPy, nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
