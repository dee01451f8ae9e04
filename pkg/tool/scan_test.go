package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/internal/syncbuf"
)

// TestScanSkipsOtherProjectsFiles fills a tool directory as a Node.js or
// Python project does: executables under node_modules, a virtual
// environment, __pycache__ and .git, and an executable .js file without a
// #! line. The scan finds the plugin alone, and says at DEBUG what it
// skipped and why; each skipped file would fail the scan if it were run.
func TestScanSkipsOtherProjectsFiles(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(dir, "testplug"), 0o755)
	notPlugin := filepath.Join(dirs.notplugin, "notplugin")
	for _, p := range []string{"node_modules/.bin/tsc", "node_modules/wrap-ansi/cli", "__pycache__/tool", ".git/hooks/pre-commit",
		".venv/bin/python3", "env/bin/python3"} {
		copyFile(t, notPlugin, filepath.Join(dir, p), 0o755)
	}
	if err := os.WriteFile(filepath.Join(dir, "env", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte("'use strict';\nmodule.exports = {};\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	h := newHost(t, Config{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})})
	set := scan(t, h, dir)
	if s, ok := set.Lookup("echo"); !ok || s.Source != filepath.Join(dir, "testplug") {
		t.Fatalf("the plugin's tools: %v", set.Names())
	}
	for _, want := range []string{
		"path=" + filepath.Join(dir, "node_modules") + ` why="Node.js packages"`,
		"path=" + filepath.Join(dir, "__pycache__") + ` why="Python's byte-code cache"`,
		"path=" + filepath.Join(dir, ".git") + " why=",
		"path=" + filepath.Join(dir, ".venv") + " why=",
		"path=" + filepath.Join(dir, "env") + ` why="a Python virtual environment"`,
		"path=" + filepath.Join(dir, "index.js") + ` why="executable, but neither a native program nor a script with a #! line"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no DEBUG line saying %s:\n%s", want, logs.String())
		}
	}
}

// TestShadowedPluginIsStopped scans two directories offering the same
// tools: each shadowed tool is logged at WARN with the plugin that wins
// and the one shadowed, and the shadowed plugin's pool is gone, while a
// plugin with a tool of its own in the first directory stays.
func TestShadowedPluginIsStopped(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(first, "testplug"), 0o755)
	copyFile(t, filepath.Join(dirs.ready, "hello"), filepath.Join(first, "hello"), 0o755)
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(second, "other"), 0o755)
	var logs syncbuf.Buffer
	h := newHost(t, Config{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
	scan(t, h, first, second)
	want := "[WARN]  tool shadowed: a later tool path offers a tool of the same name: tool=echo wins=" +
		filepath.Join(second, "other") + " shadowed=" + filepath.Join(first, "testplug")
	if !strings.Contains(logs.String(), want) || strings.Contains(logs.String(), "tool=say_hello") {
		t.Errorf("want the line\n%s\nin:\n%s", want, logs.String())
	}
	h.mu.Lock()
	_, shadowed := h.pools[Command{Path: filepath.Join(first, "testplug")}.key()]
	_, hello := h.pools[Command{Path: filepath.Join(first, "hello")}.key()]
	h.mu.Unlock()
	if shadowed || !hello {
		t.Errorf("pools after the scan: the shadowed plugin's kept %v, hello's kept %v", shadowed, hello)
	}
}
