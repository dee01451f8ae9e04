// Package mcptest provides MCP servers for tests of the MCP bridge
// (pkg/mcp) and of toolhost: one server, written with the go-sdk, with a
// tool per behaviour the bridge must handle, served over stdio by a test
// binary ([RunStdio]) or over http and sse in the test's own process
// ([StartHTTP]). It is test support, internal so that only this module's
// tests and their helper programs can import it.
package mcptest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server variants.
const (
	// VariantFull has tools, prompts and resources.
	VariantFull = "full"
	// VariantToolsOnly has one tool, echo, and no prompts or resources.
	VariantToolsOnly = "toolsonly"
	// VariantSilent (stdio only) reads its stdin and never answers.
	VariantSilent = "silent"
	// VariantCrash (stdio only) writes to stderr and exits 2 at once.
	VariantCrash = "crash"
)

// The content the media tool and the prompts and resources return.
var (
	pngBytes = []byte("\x89PNG\r\n\x1a\nnot really a png")
	wavBytes = []byte("RIFF....WAVEfmt ")
	logoBlob = []byte{0, 1, 2, 3, 254, 255}
)

// RunStdio serves the test server of the variant on stdin/stdout and returns
// the process's exit code.
func RunStdio(variant string) int {
	switch variant {
	case VariantSilent:
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case VariantCrash:
		fmt.Fprintln(os.Stderr, "fatal: this server cannot start")
		return 2
	}
	srv := NewServer(variant, Hooks{Stdio: true})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

// Hooks adapt the test server to where it runs.
type Hooks struct {
	// Stdio: the server is its own process; hang ignores cancellation, and
	// there is a tool die that exits mid-call.
	Stdio bool
	// Quit ends hanging handlers of an in-process server.
	Quit <-chan struct{}
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

// NewServer returns the test server of the variant (full or toolsonly),
// written with the go-sdk as tool authors write theirs. Its tools: echo,
// media (every kind of content), fail (an isError result), sum (structured
// output), progress (steps progress notifications), pid (the server's
// process id), hang (reports its pid as progress, then never returns),
// stderr (writes a line to stderr), die (with Stdio: exits mid-call) and
// dotted.name/x. Its prompts: greet (name, style) and picture. Its resources:
// test://readme, test://logo.bin and the template test://items/{id}.
func NewServer(variant string, hooks Hooks) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "agentcore-test", Version: "v1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	if variant == VariantToolsOnly {
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
		if hooks.Stdio {
			select {} // ignores cancellation: only a kill ends it
		}
		select {
		case <-ctx.Done():
		case <-hooks.Quit:
		}
		return nil, nil, ctx.Err()
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "stderr", Description: "Writes to stderr."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "a line on stderr: ünïcödé")
		time.Sleep(50 * time.Millisecond) // stderr is a separate pipe: let it arrive first
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "written"}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "ask_user", Description: "Asks the user for a name (elicitation) and greets them."}, askUser)
	sdk.AddTool(srv, &sdk.Tool{Name: "ask_model", Description: "Asks the client's model (sampling) and returns its answer."}, askModel)
	if hooks.Stdio {
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

// HTTPServer is the test server served over http (streamable) or sse on
// 127.0.0.1 by the test's own process.
type HTTPServer struct {
	// Server is the HTTP server: URL is the MCP endpoint.
	*httptest.Server
	// MCP is the MCP server behind it.
	MCP  *sdk.Server
	quit chan struct{}
}

// StartHTTP serves the test server of the variant over transport, "http" or
// "sse". observe, if set, sees the method of every request the server gets.
// Close it at the end.
func StartHTTP(transport, variant string, observe func(method string)) *HTTPServer {
	quit := make(chan struct{})
	srv := NewServer(variant, Hooks{Quit: quit})
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
	return &HTTPServer{Server: httptest.NewServer(handler), MCP: srv, quit: quit}
}

// Close ends hanging handlers and every session, then the server: a
// cancelled call leaves its session to the server, as a client that went
// away would.
func (s *HTTPServer) Close() {
	close(s.quit)
	for ss := range s.MCP.Sessions() {
		_ = ss.Close()
	}
	s.CloseClientConnections()
	s.Server.Close()
}

// askUser elicits a name (with a default greeting) during the call, as a
// multi round-trip request (SEP-2322): the SDK sends elicitation/create
// itself to a client of an older protocol version.
func askUser(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
	r, ok := req.Params.InputResponses["who"].(*sdk.ElicitResult)
	if !ok {
		return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"who": &sdk.ElicitParams{Message: "Who are you?", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":     map[string]any{"type": "string"},
				"greeting": map[string]any{"type": "string", "default": "hello"},
			},
			"required": []string{"name"},
		}}}}, nil, nil
	}
	text := r.Action
	if r.Action == "accept" {
		text = fmt.Sprintf("%v, %v", r.Content["greeting"], r.Content["name"])
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
}
