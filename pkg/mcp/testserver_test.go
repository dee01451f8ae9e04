package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// serverEnv, when set, makes the test binary an MCP server on stdio; its
// value is the server's variant.
const serverEnv = "AGENTCORE_MCP_TEST_SERVER"

// The server variants.
const (
	variantFull      = "full"      // tools, prompts, resources
	variantToolsOnly = "toolsonly" // one tool, no prompts or resources
	variantSilent    = "silent"    // never answers
	variantCrash     = "crash"     // writes to stderr and exits 2 at once
)

// Test content.
var (
	pngBytes = []byte("\x89PNG\r\n\x1a\nnot really a png")
	wavBytes = []byte("RIFF....WAVEfmt ")
	logoBlob = []byte{0, 1, 2, 3, 254, 255}
)

// runStdioServer serves a test server on stdin/stdout and returns the exit code.
func runStdioServer(variant string) int {
	switch variant {
	case variantSilent:
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case variantCrash:
		fmt.Fprintln(os.Stderr, "fatal: this server cannot start")
		return 2
	}
	srv := newTestServer(variant, testHooks{stdio: true})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

// testHooks adapt the test server to where it runs.
type testHooks struct {
	// stdio: the server is its own process; hang ignores cancellation and die exits.
	stdio bool
	// quit ends hanging handlers of an in-process server.
	quit <-chan struct{}
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

type stepsIn struct {
	Steps int `json:"steps"`
}

// newTestServer is an MCP server written with the go-sdk, as tools authors write them.
func newTestServer(variant string, hooks testHooks) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "agentcore-test", Version: "v1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	if variant == variantToolsOnly {
		return srv
	}
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(srv, &sdk.Tool{Name: "media", Description: "Returns every kind of content.", Annotations: readOnly}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "here"},
			&sdk.ImageContent{MIMEType: "image/png", Data: pngBytes},
			&sdk.AudioContent{MIMEType: "audio/wav", Data: wavBytes},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://readme", MIMEType: "text/plain", Text: "embedded text"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://dir/logo.bin", Blob: logoBlob}},
			&sdk.ResourceLink{URI: "test://more", Name: "more"},
		}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Always fails."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("it broke")
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "sum", Description: "Adds two numbers."}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (*sdk.CallToolResult, sumOut, error) {
		return nil, sumOut{Sum: in.A + in.B}, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "progress", Description: "Reports progress."}, func(ctx context.Context, req *sdk.CallToolRequest, in stepsIn) (*sdk.CallToolResult, any, error) {
		for i := 1; i <= in.Steps; i++ {
			err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i),
			})
			if err != nil {
				return nil, nil, err
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "pid", Description: "Returns the server's process id."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(os.Getpid())}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "hang", Description: "Reports its pid, then never returns."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Message: fmt.Sprintf("pid %d", os.Getpid())})
		if hooks.stdio {
			select {} // ignores cancellation: only a kill ends it
		}
		select {
		case <-ctx.Done():
		case <-hooks.quit:
		}
		return nil, nil, ctx.Err()
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "stderr", Description: "Writes to stderr."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "a line on stderr: ünïcödé")
		time.Sleep(50 * time.Millisecond) // stderr is a separate pipe: let it arrive first
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "written"}}}, nil, nil
	})
	if hooks.stdio {
		sdk.AddTool(srv, &sdk.Tool{Name: "die", Description: "Exits mid-call."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "dying now")
			os.Exit(3)
			return nil, nil, nil
		})
	}
	srv.AddTool(&sdk.Tool{Name: "dotted.name/x", Description: "A name with characters tool names may not hold.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "dotted"}}}, nil
		})

	srv.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*sdk.PromptArgument{
		{Name: "name", Description: "who", Required: true},
		{Name: "style"},
	}}, func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		name := req.Params.Arguments["name"]
		if name == "" {
			return nil, fmt.Errorf("name is required")
		}
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			{Role: "user", Content: &sdk.TextContent{Text: "Say hello to " + name + "."}},
			{Role: "assistant", Content: &sdk.TextContent{Text: "Hello, " + name + "! (" + req.Params.Arguments["style"] + ")"}},
		}}, nil
	})
	srv.AddPrompt(&sdk.Prompt{Name: "picture"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
			{Role: "user", Content: &sdk.TextContent{Text: "What is this?"}},
			{Role: "user", Content: &sdk.ImageContent{MIMEType: "image/png", Data: pngBytes}},
		}}, nil
	})

	srv.AddResource(&sdk.Resource{URI: "test://readme", Name: "readme", Description: "The read me.", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me first"}}}, nil
		})
	srv.AddResource(&sdk.Resource{URI: "test://logo.bin", Name: "logo"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/x-logo", Blob: logoBlob}}}, nil
		})
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item", Description: "One item."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "test://items/")
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "item " + id}}}, nil
		})
	return srv
}

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
	http *httptest.Server
}

// httpServer is httpDefinition that also returns the servers.
func httpServer(t *testing.T, transport, variant, extra string, observe func(method string)) httpFixture {
	t.Helper()
	quit := make(chan struct{})
	srv := newTestServer(variant, testHooks{quit: quit})
	if observe != nil {
		srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				observe(method)
				return next(ctx, method, req)
			}
		})
	}
	var handler http.Handler
	if transport == "sse" {
		handler = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	} else {
		handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	}
	hs := httptest.NewServer(handler)
	t.Cleanup(func() {
		close(quit)
		// A cancelled call leaves its session to the server, as a client that went away would.
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
		hs.CloseClientConnections()
		hs.Close()
	})
	def := writeDefinition(t, "server.mcp.json", fmt.Sprintf(`{"transport": {"type": %q, "url": %q, "headers": {"X-Test": "yes"}}%s}`,
		transport, hs.URL, commaLead(extra)))
	return httpFixture{def: def, srv: srv, http: hs}
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
