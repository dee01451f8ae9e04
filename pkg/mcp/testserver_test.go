package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcore/agentcore/internal/mcptest"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// serverEnv, when set, makes the test binary an MCP server on stdio (see
// mcptest.RunStdio); its value is the server's variant.
const serverEnv = "AGENTCORE_MCP_TEST_SERVER"

// The server variants, short.
const (
	variantFull      = mcptest.VariantFull
	variantToolsOnly = mcptest.VariantToolsOnly
	variantSilent    = mcptest.VariantSilent
	variantCrash     = mcptest.VariantCrash
)

// fixture is a test server reachable over one transport.
type fixture struct {
	name string
	// def declares the server of the given variant in a definition file
	// (extra holds more top-level JSON fields, e.g. `"reuse": true`).
	def func(t *testing.T, variant, extra string) *Definition
}

// fixtures are the three transports.
func fixtures() []fixture {
	return []fixture{
		{name: "stdio", def: func(t *testing.T, variant, extra string) *Definition {
			return stdioDefinition(t, variant, extra)
		}},
		{name: "http", def: func(t *testing.T, variant, extra string) *Definition {
			return httpDefinition(t, "http", variant, extra, nil)
		}},
		{name: "sse", def: func(t *testing.T, variant, extra string) *Definition {
			return httpDefinition(t, "sse", variant, extra, nil)
		}},
	}
}

// quickRaceExit is an env entry that stops a race-enabled server binary from
// sleeping a second at exit (GORACE's atexit_sleep_ms).
const quickRaceExit = `"GORACE": "atexit_sleep_ms=0"`

// testBinary is this test binary, which is also the stdio test server.
func testBinary(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func stdioDefinition(t testing.TB, variant, extra string) *Definition {
	t.Helper()
	return writeDefinition(t, "server.mcp.json", fmt.Sprintf(`{"transport": {"type": "stdio", "command": %q, "env": {%q: %q, %s}}%s}`,
		testBinary(t), serverEnv, variant, quickRaceExit, commaLead(extra)))
}

// httpDefinition serves a test server over http or sse for the test's
// duration; observe, if set, sees every method the server receives.
func httpDefinition(t *testing.T, transport, variant, extra string, observe func(method string)) *Definition {
	t.Helper()
	return httpServer(t, transport, variant, extra, observe).def
}

// httpFixture is a test server served over http or sse.
type httpFixture struct {
	def  *Definition
	srv  *sdk.Server
	http *mcptest.HTTPServer
}

// httpServer is httpDefinition that also returns the servers.
func httpServer(t *testing.T, transport, variant, extra string, observe func(method string)) httpFixture {
	t.Helper()
	hs := mcptest.StartHTTP(transport, variant, observe)
	t.Cleanup(hs.Close)
	def := writeDefinition(t, "server.mcp.json", fmt.Sprintf(`{"transport": {"type": %q, "url": %q, "headers": {"X-Test": "yes"}}%s}`,
		transport, hs.URL, commaLead(extra)))
	return httpFixture{def: def, srv: hs.MCP, http: hs}
}

func commaLead(extra string) string {
	if extra == "" {
		return ""
	}
	return ", " + extra
}

func writeDefinition(t testing.TB, name, content string) *Definition {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	def, err := ReadDefinition(path)
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func newTestBridge(t testing.TB, def *Definition) *Bridge {
	t.Helper()
	s, err := NewBridge(def)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// recorder collects the output chunks of a call.
type recorder struct {
	mu     sync.Mutex
	chunks []string
	// first receives the first chunk's data.
	first chan string
}

func newRecorder() *recorder { return &recorder{first: make(chan string, 1)} }

func (r *recorder) emit(c *pluginv1.OutputChunk) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.chunks) == 0 {
		r.first <- string(c.Data)
	}
	r.chunks = append(r.chunks, c.Stream.String()+" "+string(c.Data))
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.chunks)
}
