package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// errServerClosed is returned by a Server used after Close.
var errServerClosed = errors.New("closed")

// Server bridges one MCP server: it discovers the server's tools, prompts and
// resources as tool specs, and runs calls of them. Every discovery and call
// opens its own connection and closes it at the end, unless the definition
// asks for reuse. A Server is safe for concurrent use; with reuse, one call
// at a time uses the kept connection and calls beside it connect for
// themselves.
type Server struct {
	def *Definition
	// base carries the http and sse requests of every connection.
	base *http.Transport

	mu     sync.Mutex
	cat    *catalog // from the last listing
	kept   *conn    // with reuse: the idle connection
	busy   bool     // with reuse: the kept connection is in use
	closed bool
	calls  uint64 // numbers progress tokens
}

// NewServer returns the bridge to the server def declares. It does not connect.
func NewServer(def *Definition) (*Server, error) {
	if def == nil {
		return nil, errors.New("mcp server: nil definition")
	}
	if err := def.check(); err != nil {
		return nil, fmt.Errorf("mcp server %s: %w", def.label(), err)
	}
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("mcp server: http.DefaultTransport is not an *http.Transport")
	}
	return &Server{def: def, base: base.Clone()}, nil
}

// Definition returns the definition the server was made from.
func (s *Server) Definition() *Definition { return s.def }

// Discover connects, lists what the server declares (tools, and prompts and
// resources only when it has those capabilities) and returns one tool spec
// for each server tool, one for each prompt, and one read_resource tool when
// there are resources. It fails when the server cannot be reached within the
// discovery timeout, naming the definition file and the cause.
func (s *Server) Discover(ctx context.Context) ([]*pluginv1.ToolSpec, error) {
	ctx, cancel := s.reachContext(ctx, "discovery")
	defer cancel()
	c, err := s.acquire(ctx)
	if err != nil {
		return nil, s.errorf("%w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.abort(context.Cause(ctx)) })
	cat, err := list(ctx, c.session, s.def)
	if !stop() && err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		s.discard(c)
		return nil, s.errorf("discovering: %w", c.explain(err))
	}
	s.release(c, true)
	s.mu.Lock()
	s.cat = cat
	s.mu.Unlock()
	return cat.specs(), nil
}

// Call runs the tool named tool (a name Discover returned) with inputJSON,
// a JSON object. Progress notifications, and a stdio server's stderr, go to
// emit as output chunks while the call runs; emit may be nil, and is not
// called after Call returns. Every outcome of the call is a result, failures
// included (an error result the model can read). The error is non-nil only
// when ctx ended first: the call's connection is then closed at once, and a
// stdio server is dead when Call returns.
func (s *Server) Call(ctx context.Context, tool, inputJSON string, emit func(*pluginv1.OutputChunk)) (*pluginv1.ToolResult, error) {
	args, err := parseInput(inputJSON)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	reachCtx, cancel := s.reachContext(ctx, "connecting")
	defer cancel()
	c, err := s.acquire(reachCtx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, s.errorf("call %q: %w", tool, ctx.Err())
		}
		return errorResult(s.errorf("%w", err).Error()), nil
	}
	e, ok, err := s.lookup(reachCtx, c, tool)
	if err != nil {
		s.discard(c)
		if ctx.Err() != nil {
			return nil, s.errorf("call %q: %w", tool, ctx.Err())
		}
		return errorResult(s.errorf("%w", c.explain(err)).Error()), nil
	}
	if !ok {
		s.release(c, true)
		return errorResult(fmt.Sprintf("unknown tool %q; this MCP server offers: %s", tool, strings.Join(s.names(), ", "))), nil
	}

	token := s.token()
	c.out.attach(token, emit)
	stop := context.AfterFunc(ctx, func() { c.abort(context.Cause(ctx)) })
	res, err := c.run(ctx, e, args, token)
	aborted := !stop()
	c.out.detach()
	switch {
	case ctx.Err() != nil && (aborted || err != nil):
		c.abort(context.Cause(ctx))
		s.release(c, false)
		return nil, s.errorf("call %q: %w", tool, ctx.Err())
	case err == nil:
		s.release(c, true)
		return res, nil
	case isProtocolError(err):
		// The server answered with an error: the connection is fine.
		s.release(c, true)
		return errorResult(s.errorf("%s %q: %w", e.kind, e.target, err).Error()), nil
	default:
		s.discard(c)
		return errorResult(s.errorf("%s %q: %w", e.kind, e.target, c.explain(err)).Error()), nil
	}
}

// Close closes the kept connection, if any. Calls still running close their
// own connections when they end; later calls fail.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	kept := s.kept
	s.kept = nil
	s.mu.Unlock()
	if kept != nil {
		_ = kept.close()
	}
	s.base.CloseIdleConnections()
}

// reachContext bounds reaching the server (connecting, and listing) by the
// discovery timeout, with a cause that says so.
func (s *Server) reachContext(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	d := s.def.discoveryTimeout()
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("%s timed out after %s", what, d))
}

// acquire returns a connection: with reuse, the kept one when it still
// answers a ping, or a new one that may be kept; else a new one.
func (s *Server) acquire(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errServerClosed
	}
	reuse := s.def.Reuse && !s.busy
	var kept *conn
	if reuse {
		s.busy = true
		kept, s.kept = s.kept, nil
	}
	s.mu.Unlock()

	if kept != nil {
		if kept.alive() && kept.session.Ping(ctx, nil) == nil {
			return kept, nil
		}
		// The server has gone (or stopped answering): reconnect.
		kept.abort(errors.New("the kept connection stopped answering"))
		_ = kept.close()
	}
	c, err := connect(ctx, s.def, s.base)
	if err != nil {
		if reuse {
			s.mu.Lock()
			s.busy = false
			s.mu.Unlock()
		}
		return nil, err
	}
	c.reusable = reuse
	return c, nil
}

// release ends the use of c: a reusable connection that is still fine is
// kept for the next call, any other is closed.
func (s *Server) release(c *conn, keep bool) {
	if c.reusable {
		s.mu.Lock()
		s.busy = false
		if keep && !s.closed && c.alive() {
			s.kept = c
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
	_ = c.close()
}

// discard ends a connection that failed at once, without the graceful close
// a broken server could stall (an http DELETE, a stdio server's grace).
func (s *Server) discard(c *conn) {
	c.abort(errBroken)
	s.release(c, false)
}

// lookup finds a tool in the catalog, listing on c when the catalog is
// missing (a process that did not discover) or lacks the name (the server's
// list may have changed).
func (s *Server) lookup(ctx context.Context, c *conn, tool string) (entry, bool, error) {
	s.mu.Lock()
	cat := s.cat
	s.mu.Unlock()
	if cat != nil {
		if e, ok := cat.byName[tool]; ok {
			return e, true, nil
		}
	}
	cat, err := list(ctx, c.session, s.def)
	if err != nil {
		return entry{}, false, fmt.Errorf("discovering: %w", err)
	}
	s.mu.Lock()
	s.cat = cat
	s.mu.Unlock()
	e, ok := cat.byName[tool]
	return e, ok, nil
}

func (s *Server) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cat == nil {
		return nil
	}
	return s.cat.names()
}

// token is a fresh progress token, so late progress of an earlier call on a
// kept connection is not taken for this one's.
func (s *Server) token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return "agentcore-" + strconv.FormatUint(s.calls, 10)
}

func (s *Server) errorf(format string, args ...any) error {
	return fmt.Errorf("mcp server %s: "+format, append([]any{s.def.label()}, args...)...)
}

// run does what the tool stands for: a tools/call, prompts/get or resources/read.
func (c *conn) run(ctx context.Context, e entry, args map[string]any, token string) (*pluginv1.ToolResult, error) {
	switch e.kind {
	case kindPrompt:
		params := &sdk.GetPromptParams{Name: e.target, Arguments: promptArgs(args)}
		params.SetProgressToken(token)
		r, err := c.session.GetPrompt(ctx, params)
		if err != nil {
			return nil, err
		}
		return promptResult(r), nil
	case kindResource:
		uri, _ := args["uri"].(string)
		if uri == "" {
			return errorResult(`read_resource needs "uri": the URI of a resource (see the tool's description)`), nil
		}
		params := &sdk.ReadResourceParams{URI: uri}
		params.SetProgressToken(token)
		r, err := c.session.ReadResource(ctx, params)
		if err != nil {
			return nil, err
		}
		return resourceResult(r), nil
	default:
		params := &sdk.CallToolParams{Name: e.target, Arguments: args}
		params.SetProgressToken(token)
		r, err := c.session.CallTool(ctx, params)
		if err != nil {
			return nil, err
		}
		return toolResult(r)
	}
}

// parseInput decodes a call's input: a JSON object, or nothing.
func parseInput(inputJSON string) (map[string]any, error) {
	if strings.TrimSpace(inputJSON) == "" {
		return map[string]any{}, nil
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(inputJSON), &args); err != nil || args == nil {
		return nil, errors.New("the tool's input must be a JSON object")
	}
	return args, nil
}

// promptArgs are a prompt's arguments, which MCP takes as strings: other
// values are passed as their JSON text.
func promptArgs(args map[string]any) map[string]string {
	out := make(map[string]string, len(args))
	for k, v := range args {
		switch v := v.(type) {
		case nil:
		case string:
			out[k] = v
		default:
			data, err := json.Marshal(v)
			if err == nil {
				out[k] = string(data)
			}
		}
	}
	return out
}

// isProtocolError reports whether the server answered with a JSON-RPC error.
func isProtocolError(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr)
}
