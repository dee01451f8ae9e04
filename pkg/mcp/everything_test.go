package mcp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The MCP project's reference server, @modelcontextprotocol/server-everything
// from npm, run by node over stdio. It is installed at a pinned version into
// a cache directory outside the repository, only when everythingEnv is 1;
// once installed, the test runs whenever node is on PATH. CI does not opt in: the
// install needs the npm registry (about 20 s), and a suite that must not
// flake should not depend on it. The go-sdk servers above cover every
// behaviour; this checks the bridge against a server written by others.
const (
	everythingEnv     = "AGENTCORE_TEST_MCP_EVERYTHING"
	everythingPackage = "@modelcontextprotocol/server-everything"
	everythingVersion = "2026.8.31"
)

// everythingEntry returns server-everything's entry script, installing it if
// asked to, or skips the test saying how to run it.
func everythingEntry(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not on PATH: skipping the test against %s", everythingPackage)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache directory for %s: %v", everythingPackage, err)
	}
	dir := filepath.Join(cache, "agentcore-test", "server-everything-"+everythingVersion)
	entry := filepath.Join(dir, "node_modules", filepath.FromSlash(everythingPackage), "dist", "index.js")
	if _, err := os.Stat(entry); err == nil {
		return entry
	}
	if os.Getenv(everythingEnv) != "1" {
		t.Skipf("%s@%s is not installed in %s; set %s=1 to install it with npm (needs the npm registry, about 20 s)",
			everythingPackage, everythingVersion, dir, everythingEnv)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("%s=1 but npm is not on PATH", everythingEnv)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// Install beside the cache entry, then rename: a run killed half-way
	// leaves no half-installed package behind.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", "--loglevel=error",
		everythingPackage+"@"+everythingVersion)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s@%s: %v\n%s", everythingPackage, everythingVersion, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !dirExists(dir) {
		t.Fatal(err)
	}
	return entry
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func TestServerEverything(t *testing.T) {
	entry := everythingEntry(t)
	t.Setenv("AGENTCORE_TEST_CANARY", "must-not-reach-the-server")
	definition := func(reuse bool) string {
		return fmt.Sprintf(`{"transport": {"type": "stdio", "command": "node", "args": [%q, "stdio"], "env": {"GIVEN": "given-value"}}, "prefix": "ev_", "reuse": %t}`,
			entry, reuse)
	}
	// One kept node process serves most calls: node takes about a second to start.
	s := newTestBridge(t, writeDefinition(t, "everything.mcp.json", definition(true)))
	specs, err := s.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var resources string
	for _, spec := range specs {
		names = append(names, spec.Name)
		if spec.Name == "ev_read_resource" {
			resources = spec.Description
		}
	}
	for _, want := range []string{"ev_echo", "ev_get-sum", "ev_get-tiny-image", "ev_trigger-long-running-operation", "ev_simple-prompt", "ev_args-prompt", "ev_read_resource"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s among %v", want, names)
		}
	}
	uri := "demo://resource/static/document/architecture.md"
	if !strings.Contains(resources, uri) {
		t.Errorf("read_resource does not list %s:\n%s", uri, resources)
	}

	calls := []struct {
		tool, input string
		want        []string // the summary contains each
	}{
		{"ev_echo", `{"message":"hi"}`, []string{"text Echo: hi"}},
		{"ev_get-sum", `{"a":2,"b":3}`, []string{"text ", "5"}},
		{"ev_get-tiny-image", `{}`, []string{"content [", "file image/png"}},
		{"ev_get-structured-content", `{"location":"Chicago"}`, []string{"json {", "temperature"}},
		{"ev_args-prompt", `{"city":"Paris"}`, []string{"text user: ", "Paris"}},
		{"ev_read_resource", `{"uri":"` + uri + `"}`, []string{"text "}},
		{"ev_echo", `{}`, []string{"ERROR"}},
		{"ev_get-env", `{}`, []string{"given-value"}},
	}
	for _, c := range calls {
		res, err := s.Call(t.Context(), c.tool, c.input, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		got := summary(res)
		for _, want := range c.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s %s: %.300q lacks %q", c.tool, c.input, got, want)
			}
		}
		if strings.Contains(got, "must-not-reach-the-server") {
			t.Errorf("%s: the host's environment reached the server", c.tool)
		}
	}

	t.Run("progress", func(t *testing.T) {
		rec := newRecorder()
		res, err := s.Call(t.Context(), "ev_trigger-long-running-operation", `{"duration":0.3,"steps":3}`, rec.emit)
		if err != nil || res.Error != "" {
			t.Fatalf("%v %v", summary(res), err)
		}
		want := "OUTPUT_STREAM_OUTPUT 1/3\nOUTPUT_STREAM_OUTPUT 2/3\nOUTPUT_STREAM_OUTPUT 3/3\n"
		if got := strings.Join(rec.all(), ""); got != want {
			t.Errorf("chunks %q, want %q", got, want)
		}
	})

	t.Run("cancel and per-call connection", func(t *testing.T) {
		s := newTestBridge(t, writeDefinition(t, "everything.mcp.json", definition(false)))
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := s.Call(ctx, "ev_trigger-long-running-operation", `{"duration":60,"steps":60}`, nil)
		if err == nil || time.Since(start) > 10*time.Second {
			t.Fatalf("a 60 s call cancelled after 3 s ended with %v after %v", err, time.Since(start))
		}
		res, err := s.Call(t.Context(), "ev_echo", `{"message":"again"}`, nil)
		if err != nil || summary(res) != "text Echo: again" {
			t.Errorf("after cancel: %v %v", summary(res), err)
		}
	})
}
