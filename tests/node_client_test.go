package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
)

// tsClient makes sdk/node-client runnable: node on PATH, its packages
// installed (make test-deps), and tsc run over the client and its tests,
// which type-checks both and builds dist/.
func tsClient(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	dir := filepath.Join(e2e.RepoRoot(), "sdk", "node-client")
	tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		unavailable(t, "sdk/node-client has no node_modules: run make test-deps (or npm ci there)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", tsc, "-p", "tsconfig.json")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc -p sdk/node-client/tsconfig.json: %v\n%s", err, out)
	}
	return dir
}

// networkTrouble matches npm's messages when the registry cannot be reached.
var networkTrouble = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENETUNREACH|network|socket hang up`)

// nodeExample makes examples/node runnable once the client is built
// (tsClient): its packages installed (npm ci, once; node_modules is kept
// between runs) and the example compiled.
func nodeExample(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		unavailable(t, "npm is not on PATH")
	}
	dir := filepath.Join(e2e.RepoRoot(), "examples", "node")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "typescript", "package.json")); err != nil {
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			if networkTrouble.Match(out) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				unavailable(t, "npm ci could not reach the registry, examples/node is not tested: %v\n%s", err, out)
			}
			t.Fatalf("npm ci in examples/node: %v\n%s", err, out)
		}
	}
	cmd := exec.CommandContext(ctx, "npm", "run", "build")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm run build in examples/node: %v\n%s", err, out)
	}
	return dir
}

// npmPack packs the package in dir into out, as make sdk-pack does, and
// returns the tarball's path and the files it holds; with extra
// "--dry-run" it writes no tarball.
func npmPack(t *testing.T, ctx context.Context, dir, out string, extra ...string) (string, []string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "npm", append([]string{"pack", "--json", "--pack-destination", out}, extra...)...)
	cmd.Dir = dir
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("npm pack in %s: %v\n%s", dir, err, stderr)
	}
	var packed []struct {
		Filename string `json:"filename"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	if err := json.Unmarshal(stdout, &packed); err != nil || len(packed) != 1 {
		t.Fatalf("npm pack --json: %v\n%s", err, stdout)
	}
	files := make([]string, 0, len(packed[0].Files))
	for _, f := range packed[0].Files {
		files = append(files, f.Path)
	}
	return filepath.Join(out, packed[0].Filename), files
}

// tsScripts are the fake model's answers the client's tests use, by the
// name the tests know them by.
func tsScripts(t *testing.T) map[string]string {
	hello := func(step int, req *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{TextChunks: []string{"Greeting ", "Ming."},
				ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "say_hello", Arguments: `{"name":"Ming"}`}}}
		}
		return fakemodel.Turn{Text: "I said: " + strings.Join(e2e.LastToolResults(req), "")}
	}
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + string(rune('a'+i%26)) + " "
	}
	var retried atomic.Int32
	return map[string]string{
		"hello": suite.Router.Add(t, hello),
		// slow streams 40 words 25 ms apart: a run that lasts a second,
		// long enough to stop, detach from or cut mid-way.
		"slow": suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
			return fakemodel.Turn{TextChunks: words, ChunkDelay: 25 * time.Millisecond}
		}),
		// retry fails its first request with a 503, then answers.
		"retry": suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
			if retried.Add(1) == 1 {
				return fakemodel.Turn{Status: 503, ErrorBody: `{"error":{"message":"overloaded","type":"server_error"}}`}
			}
			return fakemodel.Turn{Text: "fine now"}
		}),
		// chatty runs a shell command printing three lines, then says done.
		"chatty": suite.Router.Add(t, func(step int, _ *fakemodel.Request) fakemodel.Turn {
			if step == 0 {
				return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_sh", Name: "shell", Arguments: `{"command":"for i in 1 2 3; do echo line $i; done"}`}}}
			}
			return fakemodel.Turn{Text: "done"}
		}),
		"auth": suite.Router.Add(t, func(int, *fakemodel.Request) fakemodel.Turn {
			return fakemodel.Turn{Status: 401, ErrorBody: `{"error":{"message":"bad key","type":"invalid_request_error"}}`}
		}),
		// compact answers a compaction request with a summary, anything else with ok.
		"compact": suite.Router.Add(t, func(_ int, req *fakemodel.Request) fakemodel.Turn {
			if strings.Contains(string(req.Body), "Write the summary now") {
				return fakemodel.Turn{TextChunks: []string{"Goal: ", "none."}, Usage: &fakemodel.Usage{Input: 20, Output: 4}}
			}
			return fakemodel.Turn{Text: "ok", Usage: &fakemodel.Usage{Input: 10, Output: 1}}
		}),
	}
}

// The tokens of the tenant ts and of an admin on tsAuthServer.
const (
	tsToken      = "ts-client-token-4f1d2c9e8b7a"
	tsAdminToken = "ts-admin-token-93b0e6c1d5f2"
)

// tsAuthServer starts an agent-server over mutual TLS with tenants: ts and
// root (an admin) by their tokens, dave by its client certificate; without
// a default model, so that a send there fails NO_MODEL. It returns the
// server and the environment that tells the client's tests the CA, the
// client certificates (PEM files) and the tokens.
func tsAuthServer(t *testing.T) (*e2e.Server, []string) {
	pki := newPKI(t)
	anon := pki.issue(t, 40, pkix.Name{CommonName: "ts-anon"}, nil, x509.ExtKeyUsageClientAuth)
	dave := pki.issue(t, 41, pkix.Name{CommonName: "dave"}, []string{"dave.agentcore.test"}, x509.ExtKeyUsageClientAuth)
	tokens := filepath.Join(t.TempDir(), "tenants.yaml")
	if err := os.WriteFile(tokens, []byte("tenants:\n  ts:\n    tokens: ["+tsToken+"]\n"+
		"  root:\n    admin: true\n    tokens: ["+tsAdminToken+"]\n"+
		"  dave:\n    client_certs: {sans: [dave.agentcore.test]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := suite.ServerCmd(suite.Plugins, []string{"-auth-tokens-file", tokens, "-tls-cert", pki.certFile, "-tls-key", pki.keyFile,
		"-tls-client-ca", pki.caFile}, "AGENTCORE_MODEL_BASE_URL=", "AGENTCORE_MODEL=", "AGENTCORE_MODEL_API_KEY=")
	p, err := e2e.Launch(cmd, grpc.WithTransportCredentials(pki.creds(anon)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("agent-server over mutual TLS did not stop cleanly: %v", err)
		}
	})
	env := []string{"AGENTCORE_TEST_TOKEN=" + tsToken, "AGENTCORE_TEST_ADMIN_TOKEN=" + tsAdminToken, "AGENTCORE_TEST_CA=" + pki.caFile}
	for name, c := range map[string]tls.Certificate{"ANON": anon, "DAVE": dave} {
		key, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
		if err != nil {
			t.Fatal(err)
		}
		env = append(env,
			"AGENTCORE_TEST_"+name+"_CERT="+pki.write(t, name+".pem", "CERTIFICATE", c.Certificate[0]),
			"AGENTCORE_TEST_"+name+"_KEY="+pki.write(t, name+".key", "EC PRIVATE KEY", key))
	}
	return p, env
}

// TestTypeScriptClient runs the TypeScript client's tests (node --test)
// against the real agent-server and the scripted model: every call of the
// client, permissions, detaching and reattaching, a connection cut mid-run,
// errors and their reasons, a token, an MCP server's elicitation answered;
// then examples/node on the client.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	dir := tsClient(t)
	scripts := tsScripts(t)
	scripts["elicit"] = suite.Router.Add(t, callOnce("ask_user", `{}`)) // on mcp
	scriptsJSON, err := json.Marshal(scripts)
	if err != nil {
		t.Fatal(err)
	}
	authed, tlsEnv := tsAuthServer(t)
	mcp := mcpToolServer(t) // test/elicitation.test.ts: the MCP test server's tools
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	files, err := filepath.Glob(filepath.Join(dir, "dist", "test", "*.test.js"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tests in sdk/node-client/dist/test: %v", err)
	}
	cmd := exec.CommandContext(ctx, "node", append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"AGENTCORE_TEST_ADDR="+suite.server.Addr,
		"AGENTCORE_TEST_SCRIPTS="+string(scriptsJSON),
		"AGENTCORE_TEST_AUTH_ADDR="+authed.Addr,
		"AGENTCORE_TEST_MCP_ADDR="+mcp.Addr, "AGENTCORE_TEST_MCP_TOKEN="+e2e.HTTPToken,
	)
	cmd.Env = append(cmd.Env, tlsEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test sdk/node-client: %v\n%s", err, out)
	}
	t.Logf("node --test sdk/node-client:\n%s", out)
	for _, tok := range []string{tsToken, tsAdminToken} {
		if strings.Contains(authed.Logs(), tok) {
			t.Error("a token appears in the server's logs")
		}
	}

	// The package make sdk-pack makes: the built client and its types, not its tests.
	_, packed := npmPack(t, ctx, dir, t.TempDir(), "--dry-run", "--ignore-scripts")
	for _, want := range []string{"dist/src/index.js", "dist/src/index.d.ts", "dist/src/gen/agentcore/v1/errors_pb.js", "src/client.ts", "package.json"} {
		if !slices.Contains(packed, want) {
			t.Errorf("the package lacks %s: %v", want, packed)
		}
	}
	for _, f := range packed {
		if strings.HasPrefix(f, "dist/test/") || strings.HasPrefix(f, "test/") || strings.HasPrefix(f, "node_modules/") {
			t.Errorf("the package holds %s", f)
		}
	}

	t.Run("example", func(t *testing.T) { testNodeExample(t, scripts["hello"]) })
	t.Run("docs", func(t *testing.T) { testTypeScriptDocs(t, dir) })
}

// snippetPrelude is what a code block of docs/clients/typescript.md may use
// without declaring it: the client's names, a client and an agent.
const snippetPrelude = `import { Agent, AgentcoreError, Client, Reason, allow, assistant, deny, image, pb, text, textOf, user } from "@agentcore/client";
declare const client: Client;
declare const agent: Agent;
`

// testTypeScriptDocs checks the code of docs/clients/typescript.md: its
// first block is examples/node/hello.ts, and tsc accepts the others, each
// the body of a function, against the built client as an installed package.
func testTypeScriptDocs(t *testing.T, client string) {
	page, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "docs", "clients", "typescript.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```ts\n(.*?)```").FindAllStringSubmatch(string(page), -1)
	if len(blocks) < 2 {
		t.Fatalf("docs/clients/typescript.md has %d ts blocks", len(blocks))
	}
	example, err := os.ReadFile(filepath.Join(e2e.RepoRoot(), "examples", "node", "hello.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if blocks[0][1] != string(example) {
		t.Error("the page's first code block is not examples/node/hello.ts")
	}
	dir := t.TempDir()
	mods := filepath.Join(dir, "node_modules")
	for link, target := range map[string]string{
		filepath.Join(mods, "@agentcore", "client"): client,
		filepath.Join(mods, "@types"):               filepath.Join(client, "node_modules", "@types"),
	} {
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for i, b := range blocks[1:] {
		name := fmt.Sprintf("snippet%d.ts", i+1)
		body := strings.ReplaceAll(strings.TrimRight(b[1], "\n"), "\n", "\n  ")
		src := fmt.Sprintf("%sexport async function snippet%d(): Promise<void> {\n  %s\n}\n", snippetPrelude, i+1, body)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	tsconfig, _ := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{
			"target": "ES2022", "lib": []string{"ES2022"}, "module": "node16", "moduleResolution": "node16",
			"types": []string{"node"}, "strict": true, "skipLibCheck": true, "noEmit": true,
		},
		"files": files,
	})
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), tsconfig, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(client, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc over docs/clients/typescript.md's code: %v\n%s", err, out)
	}
}

// testNodeExample runs examples/node, the README's task on the client,
// against the script system answers.
func testNodeExample(t *testing.T, system string) {
	dir := nodeExample(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "dist/hello.js", suite.server.Addr, "Say hello to Ming.")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTCORE_SYSTEM="+system)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node dist/hello.js: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Greeting Ming.",
		`permission asked: say_hello {"name":"Ming"} -> allow`,
		`-> say_hello {"name":"Ming"}`,
		"<- say_hello = Hello, Ming!",
		`result: reason=no-tool steps=2 text="I said: Hello, Ming!"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
