// Package mcpserver serves a tool set over MCP streamable HTTP, so that MCP
// clients (IDEs, desktop assistants, agents) call the tools an agentcore
// host runs with the host's handling of plugins: a process per call, pooled,
// killed with its whole process group on cancel or timeout, crashes turned
// into results, declared limits.
//
// tools/list lists the current tools (name, description, input schema, the
// read-only and idempotent hints); tools/call runs one, streaming its live
// output as progress notifications (when the client asked for progress) and
// returning its result as MCP content: text as text, JSON as text with the
// value as structured content, images and audio as such, other files as
// embedded resources (data) or resource links (URL); an error result has
// isError set; a tool that asks to stop the agent's loop says so in the
// result's _meta ("agentcore/stop"). Output is capped by Options.Limit and
// MaxBytes, and Options.Observe sees every call (for telemetry). A client's notifications/cancelled, or
// the connection going away, kills the call's process tree.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Path is where the handler is mounted by agent-server.
const Path = "/mcp"

// Meta keys of the results and progress notifications this server sends.
const (
	// MetaStop is true in a result's _meta when the tool asked to end the agent's loop.
	MetaStop = "agentcore/stop"
	// MetaStream names the stream of a progress notification's message: output, stdout or stderr.
	MetaStream = "agentcore/stream"
)

// Options configure a handler.
type Options struct {
	// Tools returns the tools to serve now; an error (e.g. tools still
	// loading) fails the MCP request with it. Required.
	Tools func() (*tool.Set, error)
	// Authenticate checks a request's bearer token (r is the whole request,
	// e.g. for its TLS client certificate) and returns the caller's tenant.
	// Nil: no authentication. A request without a bearer token, or a
	// failure, is answered 401.
	Authenticate func(ctx context.Context, token string, r *http.Request) (tenant string, err error)
	// Limit caps the characters of a call's text output and MaxBytes the
	// size of its result, media included (tool.Options: the host's
	// max_tool_output and max_tool_result_bytes); 0: no cap.
	Limit, MaxBytes int
	// Observe, if set, is called as a call starts, with the tool's name and
	// input; the context it returns is the call's (e.g. carrying its trace
	// span) and the function it returns gets the result once the call ends,
	// cancelled calls included (e.g. for metrics). Nil: calls are not observed.
	Observe func(ctx context.Context, name string, input json.RawMessage) (context.Context, func(tool.Result))
	// Name and Version describe the server to clients.
	Name, Version string
	// Logger receives request errors at debug level. Default: none.
	Logger hclog.Logger
	// Execute, if set, runs each tools/call in place of set.Execute, e.g. to
	// audit it or clean its output; tenant is the session's, as
	// Authenticate returned it ("" without authentication).
	Execute func(ctx context.Context, tenant string, set *tool.Set, name string, input json.RawMessage, opts tool.Options) tool.Result
}

// NewHandler returns the MCP streamable HTTP handler serving opts.Tools.
// Every session sees the tools current when it started in tools/list; a call
// runs the tool of that name current at the call.
func NewHandler(opts Options) (http.Handler, error) {
	if opts.Tools == nil {
		return nil, errors.New("mcpserver: Options.Tools is required")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Name == "" {
		opts.Name = "agentcore"
	}
	s := &server{opts: opts, versions: &versions{}}
	sh := sdk.NewStreamableHTTPHandler(s.sessionServer, &sdk.StreamableHTTPOptions{
		// With the 2026-07-28 protocol, a client that goes away cancels its
		// calls (and so kills their tools) as notifications/cancelled does.
		PropagateRequestCancellation: true,
		// Priming events and resumable streams for clients of the 2025-11-25
		// protocol (sse.go).
		EventStore: newEventStore(),
	})
	// Until the tools are loaded, say so (503) rather than the SDK's bare 400.
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := opts.Tools(); err != nil {
			w.Header().Set("Retry-After", "1")
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		sh.ServeHTTP(w, r)
	})
	h = withRetry(s.versions.wrap(h))
	if opts.Authenticate != nil {
		h = sdkauth.RequireBearerToken(s.verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	}
	return h, nil
}

type server struct {
	opts     Options
	versions *versions // the protocol version of each session (version.go)
}

// verify is the bearer token check: the tenant becomes the session's user,
// so that a session cannot be used with another tenant's token.
func (s *server) verify(ctx context.Context, token string, r *http.Request) (*sdkauth.TokenInfo, error) {
	tenant, err := s.opts.Authenticate(ctx, token, r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", sdkauth.ErrInvalidToken, err)
	}
	return &sdkauth.TokenInfo{UserID: tenant}, nil
}

// sessionServer returns the MCP server of a new session, holding the tools
// current now; nil (400) while they cannot be had.
func (s *server) sessionServer(r *http.Request) *sdk.Server {
	set, err := s.opts.Tools()
	if err != nil {
		s.opts.Logger.Debug("mcp session refused", "error", err)
		return nil
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: s.opts.Name, Version: s.opts.Version}, &sdk.ServerOptions{
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	srv.AddReceivingMiddleware(s.versions.middleware)
	for _, spec := range set.Specs() {
		srv.AddTool(&sdk.Tool{
			Name:        spec.Name,
			Description: spec.Description,
			InputSchema: json.RawMessage(spec.InputSchema),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: spec.ReadOnly, IdempotentHint: spec.Idempotent},
		}, s.call(spec.Name))
	}
	return srv
}

// call returns the tools/call handler of one tool.
func (s *server) call(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		set, err := s.opts.Tools()
		if err != nil {
			return nil, err
		}
		if _, ok := set.Lookup(name); !ok {
			return nil, fmt.Errorf("tool %q is no longer offered; list the tools again", name)
		}
		input := req.Params.Arguments
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage("{}")
		}
		var onOutput func(tool.Chunk)
		if token := req.Params.GetProgressToken(); token != nil {
			p := &progress{ctx: ctx, session: req.Session, token: token}
			onOutput = p.send
		}
		cctx, ended := ctx, func(tool.Result) {}
		if s.opts.Observe != nil {
			cctx, ended = s.opts.Observe(ctx, name, input)
		}
		res := s.execute(cctx, req, set, name, input, tool.Options{Limit: s.opts.Limit, MaxBytes: s.opts.MaxBytes, OnOutput: onOutput})
		ended(res)
		if err := ctx.Err(); err != nil {
			return nil, err // cancelled: the client is not waiting for a result
		}
		return Result(res), nil
	}
}

// execute runs a call with Options.Execute, or set.Execute without one.
func (s *server) execute(ctx context.Context, req *sdk.CallToolRequest, set *tool.Set, name string, input json.RawMessage, opts tool.Options) tool.Result {
	if s.opts.Execute == nil {
		return set.Execute(ctx, name, input, opts)
	}
	tenant := ""
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		tenant = extra.TokenInfo.UserID
	}
	return s.opts.Execute(ctx, tenant, set, name, input, opts)
}

// progress sends a call's output chunks as progress notifications, one per
// chunk, in order.
type progress struct {
	ctx     context.Context
	session *sdk.ServerSession
	token   any

	mu sync.Mutex
	n  float64
}

func (p *progress) send(ch tool.Chunk) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	// An error means the client is gone; the call's context ends with it.
	_ = p.session.NotifyProgress(p.ctx, &sdk.ProgressNotificationParams{
		ProgressToken: p.token,
		Progress:      p.n,
		Message:       ch.Data,
		Meta:          sdk.Meta{MetaStream: streamName(ch.Stream)},
	})
}

func streamName(s agentv1.OutputStream) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "OUTPUT_STREAM_"))
}

// Result converts a tool result into an MCP tools/call result.
func Result(res tool.Result) *sdk.CallToolResult {
	out := &sdk.CallToolResult{IsError: res.Error}
	switch v := res.Output.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		out.Content = []sdk.Content{&sdk.TextContent{Text: v.Text}}
	case *agentv1.ToolOutput_Json:
		out.Content = []sdk.Content{&sdk.TextContent{Text: v.Json}}
		var value any
		if json.Unmarshal([]byte(v.Json), &value) == nil {
			if _, isObject := value.(map[string]any); isObject {
				out.StructuredContent = json.RawMessage(v.Json)
			}
		}
	case *agentv1.ToolOutput_Content:
		for i, p := range v.Content.GetParts() {
			out.Content = append(out.Content, contentPart(i, p))
		}
	}
	if out.Content == nil {
		out.Content = []sdk.Content{&sdk.TextContent{Text: ""}}
	}
	if res.Stop {
		out.Meta = sdk.Meta{MetaStop: true}
	}
	return out
}

func contentPart(i int, p *agentv1.Part) sdk.Content {
	f := p.GetFile()
	for _, legacy := range []*agentv1.FilePart{p.GetImage(), p.GetAudio(), p.GetVideo()} {
		if f == nil {
			f = legacy
		}
	}
	if f == nil {
		return &sdk.TextContent{Text: p.GetText()}
	}
	mt := f.GetMediaType()
	if url := f.GetUrl(); url != "" {
		name := f.GetFilename()
		if name == "" {
			name = fmt.Sprintf("part-%d", i)
		}
		return &sdk.ResourceLink{URI: url, Name: name, MIMEType: mt}
	}
	switch {
	case strings.HasPrefix(mt, "image/"):
		return &sdk.ImageContent{Data: f.GetData(), MIMEType: mt}
	case strings.HasPrefix(mt, "audio/"):
		return &sdk.AudioContent{Data: f.GetData(), MIMEType: mt}
	}
	name := f.GetFilename()
	if name == "" {
		name = fmt.Sprintf("part-%d", i)
	}
	return &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "agentcore:file/" + name, MIMEType: mt, Blob: f.GetData()}}
}
