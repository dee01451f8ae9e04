package tests

import (
	"context"
	"github.com/agentcore/agentcore/internal/e2e"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// greetJS is a tool plugin as a user writes one with @agentcore/tool.
const greetJS = `#!/usr/bin/env node
const { tool, serve } = require('@agentcore/tool');
serve(tool('greet', 'Greets someone by name.', async ({ name }) => 'Hello, ' + name + '!', {
  schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
}));
`

// nodeSDK is sdk/node with its packages installed (make test-deps), which
// npm pack bundles.
func nodeSDK(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "%s is not on PATH", tool)
		}
	}
	dir := filepath.Join(e2e.RepoRoot(), "sdk", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@grpc", "grpc-js", "package.json")); err != nil {
		unavailable(t, "sdk/node has no node_modules: run make test-deps (or npm ci there)")
	}
	return dir
}

// toolhost runs the suite's toolhost with args and returns its output.
func toolhost(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(suite.Dir, "toolhost"), args...).CombinedOutput()
	return string(out), err
}

// TestNodeToolSDKPackage installs the Node.js tool SDK as a user does, from
// the tarball npm pack makes (make sdk-pack), into a fresh folder, offline
// and with an empty npm cache: its dependencies come bundled. Then toolhost
// runs a plugin of the tool directory in that folder, which Node.js finds
// the SDK for in the folder's node_modules.
func TestNodeToolSDKPackage(t *testing.T) {
	t.Parallel()
	sdk := nodeSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tgz, _ := npmPack(t, ctx, sdk, t.TempDir())

	project := t.TempDir()
	tools := filepath.Join(project, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "greet.js"), []byte(greetJS), 0o755); err != nil {
		t.Fatal(err)
	}
	install := exec.CommandContext(ctx, "npm", "install", "--offline", "--cache", t.TempDir(),
		"--no-audit", "--no-fund", "--loglevel=error", tgz)
	install.Dir = project
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install --offline %s: %v\n%s", filepath.Base(tgz), err, out)
	}
	if _, err := os.Stat(filepath.Join(project, "node_modules", "@agentcore", "tool", "node_modules", "@grpc", "grpc-js")); err != nil {
		t.Errorf("the package does not carry its dependencies: %v", err)
	}
	if out, err := toolhost(ctx, "list", tools); err != nil || !strings.Contains(out, "greet") {
		t.Fatalf("toolhost list: %v\n%s", err, out)
	}
	if out, err := toolhost(ctx, "call", tools, "greet", `{"name":"Ming"}`); err != nil || !strings.Contains(out, "Hello, Ming!") {
		t.Fatalf("toolhost call: %v\n%s", err, out)
	}
}

// TestNodeToolMissingModule: a plugin whose SDK was installed without its
// dependencies (npm install of the source folder makes such a link) fails
// to start, and the error says which module is missing, not only the end of
// Node's stack trace.
func TestNodeToolMissingModule(t *testing.T) {
	t.Parallel()
	sdk := nodeSDK(t)
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, "greet.js"), []byte(greetJS), 0o755); err != nil {
		t.Fatal(err)
	}
	// The SDK's own files, without its node_modules.
	copyTo := filepath.Join(tools, "node_modules", "@agentcore", "tool")
	for _, f := range []string{"package.json", "index.js", "lib", "proto"} {
		cp := exec.Command("cp", "-r", filepath.Join(sdk, f), filepath.Join(copyTo, f))
		if err := os.MkdirAll(copyTo, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := cp.CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", f, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := toolhost(ctx, "list", tools)
	if err == nil {
		t.Fatalf("toolhost list found the plugin without its dependencies:\n%s", out)
	}
	for _, want := range []string{"greet.js", "Cannot find module '@grpc/grpc-js'"} {
		if !strings.Contains(out, want) {
			t.Errorf("toolhost list's error lacks %q:\n%s", want, out)
		}
	}
}
