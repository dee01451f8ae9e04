package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// notAPlugin is an executable script that would fail a tool scan, were
// it started: it prints no handshake.
const notAPlugin = "#!/bin/sh\necho I am a library script, not a plugin\n"

// TestToolScanSkipsProjectFolders lists, with the real toolhost, a tool
// directory that is also a Node.js and Python project: the executables in
// node_modules, a virtual environment, __pycache__ and .git, and an
// executable .js file without a #! line, are skipped (said at DEBUG), and
// the plugin beside them is listed.
func TestToolScanSkipsProjectFolders(t *testing.T) {
	t.Parallel()
	dir := privatePlugins(t, "hello")
	for _, p := range []string{"node_modules/.bin/proto-loader-gen-types", "node_modules/wrap-ansi/cli.js", "__pycache__/tool.cpython-311",
		".git/hooks/pre-commit", ".venv/bin/activate", "venv/bin/python3"} {
		writeExecutable(t, filepath.Join(dir, p), notAPlugin)
	}
	writeExecutable(t, filepath.Join(dir, "venv", "pyvenv.cfg"), "home = /usr/bin\n")
	writeExecutable(t, filepath.Join(dir, "index.js"), "'use strict';\nmodule.exports = {};\n")
	cmd := exec.Command(filepath.Join(suite.Dir, "toolhost"), "list", dir)
	cmd.Env = append(os.Environ(), "AGENTCORE_LOG_LEVEL=debug")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "say_hello") || strings.Contains(string(out), "library script") {
		t.Fatalf("toolhost list: %v\n%s", err, out)
	}
	for _, skipped := range []string{"node_modules", "__pycache__", ".git", ".venv", "venv", "index.js"} {
		if !strings.Contains(string(out), "tool scan: skipping a") || !strings.Contains(string(out), "path="+filepath.Join(dir, skipped)+" ") {
			t.Errorf("no DEBUG line about %s:\n%s", skipped, out)
		}
	}
}

// writeExecutable writes an executable file, making its folder.
func writeExecutable(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestStartupSaysWhatItPickedUp starts agent-server as a newcomer does: with
// two tool folders offering the same tool, the shadowed one is logged at
// WARN and its plugin is not kept running; the default model is logged
// (host and path, never the key); without a tool folder it warns; a typo'd
// flag gets the flag meant.
func TestStartupSaysWhatItPickedUp(t *testing.T) {
	t.Parallel()
	t.Run("shadowed tools and the default model", func(t *testing.T) {
		t.Parallel()
		first, second := privatePlugins(t, "hello", "shell"), privatePlugins(t, "hello")
		p, err := suite.StartServer(first, []string{"-tool-dir", second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopServer(t, p) })
		shadow := p.WaitLog(t, "tool shadowed: a later tool path offers a tool of the same name")
		if shadow["@level"] != "warn" || shadow["tool"] != "say_hello" || shadow["wins"] != filepath.Join(second, "hello") ||
			shadow["shadowed"] != filepath.Join(first, "hello") {
			t.Errorf("the shadowing line: %v", shadow)
		}
		if lines := p.LogLines("tool shadowed: a later tool path offers a tool of the same name"); len(lines) != 1 {
			t.Errorf("%d shadowing lines, want one (say_hello): %v", len(lines), lines)
		}
		// The shadowed plugin is not kept warm; shell, beside it, is.
		shadowed := filepath.Join(first, "hello")
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var left []int
			for _, pid := range processesUnder(first) {
				if exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); exe == shadowed {
					left = append(left, pid)
				}
			}
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the shadowed plugin still runs: %v", left)
			}
		}
		if len(processesUnder(second)) == 0 || len(processesUnder(first)) == 0 {
			t.Errorf("the winning hello (%v) or shell (%v) is not kept warm", processesUnder(second), processesUnder(first))
		}
		model := p.WaitLog(t, "default model")
		if model["model"] != "fake-model" || model["base_url"] != mustHost(t, suite.Model.URL) || model["api_key"] != "from AGENTCORE_MODEL_API_KEY" ||
			model["protocol"] != "chat" || model["profile"] != "default" {
			t.Errorf("the default model line: %v", model)
		}
	})
	t.Run("no tool folder", func(t *testing.T) {
		t.Parallel()
		p, err := suite.StartServer("", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopServer(t, p) })
		if w := p.WaitLog(t, "no tool directory: agents have no tools to call; give -tool-dir (AGENTCORE_TOOL_DIRS, tool_dirs) a folder of tool plugins, e.g. bin/plugins after make build"); w["@level"] != "warn" {
			t.Errorf("%v", w)
		}
	})
	t.Run("a typo'd flag", func(t *testing.T) {
		t.Parallel()
		code, out := runServerOnce(nil, "-tool-dri", suite.Plugins)
		if code != 2 || !strings.Contains(out, "flag provided but not defined: -tool-dri; did you mean -tool-dir?") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
}
