package layering

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// module is the import path every package of this module starts with.
const module = "github.com/agentcore/agentcore"

// layers is the house, top first: a package may import packages of its own
// layer and of those below it, never of one above. A package belongs to the
// layer of the longest entry that is its path or a folder above it. Test
// support that imports upward (a fake model, a whole server) sits on top
// with the commands: only tests, examples and commands import it.
var layers = []struct {
	name string
	pkgs []string
}{
	{"commands, plugins, examples, scripts and test support", []string{
		"cmd", "plugins", "examples", "scripts", "internal", "tests", "bench", "docs",
		"pkg/llm/internal/adaptertest",
	}},
	{"the agent-server process", []string{"pkg/serve"}},
	{"the AgentService handlers", []string{"pkg/server"}},
	{"what the handlers and the process use beside the engine", []string{
		"pkg/interceptor", "pkg/replica", "pkg/profile", "pkg/eventlog", "pkg/redact", "pkg/sessions", "pkg/apierr", "pkg/catalog", "pkg/agenttool", "pkg/apireq",
		"pkg/telemetry", "pkg/gateway", "pkg/mcpserver", "pkg/store/stores", "pkg/webhook", "pkg/a2a", "pkg/runhooks", "pkg/faults", "pkg/pending", "pkg/connect", "pkg/mcpauth",
	}},
	{"the engine", []string{"pkg/agent"}},
	{"the engine's context and MCP tools", []string{"pkg/mcp", "pkg/a2atool", "pkg/compact", "pkg/window"}},
	{"tools, skills, models, tokens, stores and the SDKs", []string{
		"pkg/tool", "pkg/skill", "pkg/llm", "pkg/tokens", "pkg/store", "pkg/vault", "pkg/auth", "pkg/reap",
		"pkg/internal", "sdk",
	}},
	{"the wire types, settings and history", []string{"proto", "pkg/config", "pkg/history"}},
}

// layerOf is the index in layers of the package at path rel (relative to
// the module), or -1 when no entry holds it.
func layerOf(rel string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l.pkgs {
			if (rel == p || strings.HasPrefix(rel, p+"/")) && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// TestLayerOf pins how a path finds its layer: the longest entry wins, and
// an entry names a folder, not a prefix of a name.
func TestLayerOf(t *testing.T) {
	for _, c := range []struct {
		path string
		want string
	}{
		{"cmd/agent-server", "commands, plugins, examples, scripts and test support"},
		{"pkg/serve", "the agent-server process"},
		{"pkg/server", "the AgentService handlers"},
		{"pkg/store/stores", "what the handlers and the process use beside the engine"},
		{"pkg/store/sqlite", "tools, skills, models, tokens, stores and the SDKs"},
		{"pkg/llm/chat", "tools, skills, models, tokens, stores and the SDKs"},
		{"pkg/llm/internal/adaptertest", "commands, plugins, examples, scripts and test support"},
		{"proto/agentcore/v1", "the wire types, settings and history"},
	} {
		if i := layerOf(c.path); i < 0 || layers[i].name != c.want {
			t.Errorf("layerOf(%q) = %d, want the layer %q", c.path, i, c.want)
		}
	}
	if i := layerOf("pkg/nowhere"); i != -1 {
		t.Errorf("layerOf(pkg/nowhere) = %d, want -1", i)
	}
}

// TestNoUpwardImports lists every package of the module with its imports
// (not its tests': a test may import what it tests from above) and fails on
// each import of a package of a higher layer, and on each package no layer
// holds, so that a new package is placed on purpose.
func TestNoUpwardImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output() // go test puts its go first on PATH
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	n := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		from, _ := rel(fields[0])
		fromLayer := layerOf(from)
		if fromLayer < 0 {
			t.Errorf("%s is in no layer: add it to the layers of this test", from)
			continue
		}
		n++
		for _, imp := range fields[1:] {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			if toLayer := layerOf(to); toLayer >= 0 && toLayer < fromLayer {
				t.Errorf("%s (%s) imports %s, of a layer above it (%s)", from, layers[fromLayer].name, to, layers[toLayer].name)
			}
		}
	}
	if n < 30 {
		t.Fatalf("go list gave %d packages, want the whole module:\n%s", n, out)
	}
}
