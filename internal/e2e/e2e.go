// Package e2e is the end-to-end harness that tests/ and bench/ share: it
// builds agent-server, toolhost, the MCP test server and every plugin,
// starts the fake model server on 127.0.0.1 with a router of scripted
// answers, and starts agent-server processes against it on free ports.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/fakemodel"
)

// TestKey is the default profile's API key of every server started here:
// it must never show in a log, an error or GetAgent.
const TestKey = "sk-e2e-very-secret-key-0123456789"

// Suite is what a package of end-to-end tests shares: the built binaries
// and the fake model with its router.
type Suite struct {
	Dir     string // the suite's temporary folder, which Close removes
	Bin     string // the agent-server binary
	Plugins string // every plugin of plugins/, one binary each
	// MCPServer is an MCP server over stdio (cmd/toolhost/testdata/mcpserver).
	MCPServer string
	// TestPlugins holds the plugins of tests/testdata/plugins.
	TestPlugins string
	Model       *fakemodel.Server
	Router      *Router
}

// Start builds the binaries into a new temporary folder and starts the fake
// model, whose requests go to the router's scripts.
func Start() (*Suite, error) {
	dir, err := os.MkdirTemp("", "agentcore-e2e-")
	if err != nil {
		return nil, err
	}
	// Binaries only: servers run as another user (the trust tests) must reach them.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Suite{Dir: dir, Router: NewRouter()}
	if err := s.build(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("build: %w", err)
	}
	if s.Model, err = fakemodel.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.Model.Handle(s.Router.Handle)
	return s, nil
}

// Close stops the fake model and removes the suite's folder.
func (s *Suite) Close() {
	s.Model.Close()
	os.RemoveAll(s.Dir)
}

// build compiles agent-server, toolhost, the MCP test server and every
// plugin into the suite's folder.
func (s *Suite) build() error {
	s.Bin = filepath.Join(s.Dir, "agent-server")
	s.Plugins = filepath.Join(s.Dir, "plugins")
	s.MCPServer = filepath.Join(s.Dir, "mcpserver")
	s.TestPlugins = filepath.Join(s.Dir, "testplugins")
	for _, d := range []string{s.Plugins, s.TestPlugins} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	serverBuild := []string{"build", "-o", s.Bin, "./cmd/agent-server"}
	if os.Getenv("AGENTCORE_E2E_RACE") != "" { // the server under the race detector
		serverBuild = append(serverBuild[:1], append([]string{"-race"}, serverBuild[1:]...)...)
	}
	for _, args := range [][]string{
		serverBuild,
		{"build", "-o", s.Dir + "/", "./cmd/toolhost"}, // beside agent-server, which serves MCP definitions with it
		{"build", "-o", s.MCPServer, "./cmd/toolhost/testdata/mcpserver"},
		{"build", "-o", s.Plugins + "/", "./plugins/..."},
		{"build", "-o", s.TestPlugins + "/", "./tests/testdata/plugins/..."},
	} {
		cmd := Go(args...)
		// Static, as make build and the sidecar image have them (the race
		// detector needs cgo).
		if os.Getenv("AGENTCORE_E2E_RACE") == "" {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// Go returns the go command with args, run in the repository's top folder.
// It is the go on PATH: go test puts the go command that runs the tests
// first on its tests' PATH.
func Go(args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = RepoRoot()
	return cmd
}

// RepoRoot is the repository's top folder: the nearest folder holding
// go.mod above the working directory (a test's package folder).
func RepoRoot() string {
	wd, _ := os.Getwd()
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

// Context returns a context that ends with the test (or after d).
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
