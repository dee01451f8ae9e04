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

// errBridgeClosed is returned by a Bridge used after Close.
var errBridgeClosed = errors.New("closed")

// Bridge is the client side of one MCP server: it discovers the server's
// tools, prompts and resources as tool specs, and runs calls of them. Every discovery and call
// opens its own connection and closes it at the end, unless the definition
// asks for reuse. A Bridge is safe for concurrent use; with reuse, one call
// at a time uses the kept connection and calls beside it connect for
// themselves.
type Bridge struct {
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

// NewBridge returns the bridge to the server def declares. It does not connect.
func NewBridge(def *Definition) (*Bridge, error) {
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
	return &Bridge{def: def, base: base.Clone()}, nil
}

// Definition returns the definition the server was made from.
func (b *Bridge) Definition() *Definition { return b.def }

// Discover connects, lists what the server declares (tools, and prompts and
// resources only when it has those capabilities) and returns one tool spec
// for each server tool, one for each prompt, and one read_resource tool when
// there are resources. It fails when the server cannot be reached within the
// discovery timeout, naming the definition file and the cause.
func (b *Bridge) Discover(ctx context.Context) ([]*pluginv1.ToolSpec, error) {
	ctx, cancel := b.reachContext(ctx, "discovery")
	defer cancel()
	c, err := b.acquire(ctx)
	if err != nil {
		return nil, b.errorf("%w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.abort(context.Cause(ctx)) })
	cat, err := list(ctx, c.session, b.def)
	if !stop() && err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		b.discard(c)
		return nil, b.errorf("discovering: %w", c.explain(err))
	}
	b.release(c, true)
	b.mu.Lock()
	b.cat = cat
	b.mu.Unlock()
	return cat.specs(), nil
}

// Call runs the tool named tool (a name Discover returned) with inputJSON,
// a JSON object. Progress notifications, and a stdio server's stderr, go to
// emit as output chunks while the call runs; emit may be nil, and is not
// called after Call returns. Every outcome of the call is a result, failures
// included (an error result the model can read). The error is non-nil only
// when ctx ended first: the call's connection is then closed at once, and a
// stdio server is dead when Call returns. The definition's callTimeout is not
// applied here: it is the tools' declared timeout, which the plugin host
// enforces by killing the plugin process (and with it a stdio server).
func (b *Bridge) Call(ctx context.Context, tool, inputJSON string, emit func(*pluginv1.OutputChunk)) (*pluginv1.ToolResult, error) {
	args, err := parseInput(inputJSON)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	reachCtx, cancel := b.reachContext(ctx, "connecting")
	defer cancel()
	c, err := b.acquire(reachCtx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, b.errorf("call %q: %w", tool, ctx.Err())
		}
		if notConnected(err) {
			return b.notConnectedResult(err), nil
		}
		return errorResult(b.errorf("%w", err).Error()), nil
	}
	e, ok, err := b.lookup(reachCtx, c, tool)
	if err != nil {
		b.discard(c)
		if ctx.Err() != nil {
			return nil, b.errorf("call %q: %w", tool, ctx.Err())
		}
		if notConnected(err) {
			return b.notConnectedResult(err), nil
		}
		return errorResult(b.errorf("%w", c.explain(err)).Error()), nil
	}
	if !ok {
		b.release(c, true)
		return errorResult(fmt.Sprintf("unknown tool %q; this MCP server offers: %s", tool, strings.Join(b.names(), ", "))), nil
	}

	token := b.token()
	c.out.attach(ctx, token, emit)
	stop := context.AfterFunc(ctx, func() { c.abort(context.Cause(ctx)) })
	res, err := c.run(ctx, e, args, token)
	aborted := !stop()
	c.out.detach()
	switch {
	case ctx.Err() != nil && (aborted || err != nil):
		c.abort(context.Cause(ctx))
		b.release(c, false)
		return nil, b.errorf("call %q: %w", tool, ctx.Err())
	case err == nil:
		b.release(c, true)
		return res, nil
	case isProtocolError(err):
		// The server answered with an error: the connection is fine.
		b.release(c, true)
		return errorResult(b.errorf("%s %q: %w", e.kind, e.target, err).Error()), nil
	case notConnected(err):
		b.discard(c)
		return b.notConnectedResult(err), nil
	default:
		b.discard(c)
		return errorResult(b.errorf("%s %q: %w", e.kind, e.target, c.explain(err)).Error()), nil
	}
}

// Close closes the kept connection, if any. Calls still running close their
// own connections when they end; later calls fail.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	kept := b.kept
	b.kept = nil
	b.mu.Unlock()
	if kept != nil {
		_ = kept.close()
	}
	b.base.CloseIdleConnections()
}

// reachContext bounds reaching the server (connecting, and listing) by the
// discovery timeout, with a cause that says so.
func (b *Bridge) reachContext(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	d := b.def.discoveryTimeout()
	return context.WithTimeoutCause(ctx, d, fmt.Errorf("%s timed out after %s", what, d))
}

// acquire returns a connection: with reuse, the kept one when it still
// answers a ping, or a new one that may be kept; else a new one.
func (b *Bridge) acquire(ctx context.Context) (*conn, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errBridgeClosed
	}
	reuse := b.def.Reuse && !b.busy
	var kept *conn
	if reuse {
		b.busy = true
		kept, b.kept = b.kept, nil
	}
	b.mu.Unlock()

	if kept != nil {
		if kept.alive() && kept.session.Ping(ctx, nil) == nil {
			return kept, nil
		}
		// The server has gone (or stopped answering): reconnect.
		kept.abort(errors.New("the kept connection stopped answering"))
		_ = kept.close()
	}
	c, err := connect(ctx, b.def, b.base)
	if err != nil {
		if reuse {
			b.mu.Lock()
			b.busy = false
			b.mu.Unlock()
		}
		return nil, err
	}
	c.reusable = reuse
	return c, nil
}

// release ends the use of c: a reusable connection that is still fine is
// kept for the next call, any other is closed.
func (b *Bridge) release(c *conn, keep bool) {
	if c.reusable {
		b.mu.Lock()
		b.busy = false
		if keep && !b.closed && c.alive() {
			b.kept = c
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
	_ = c.close()
}

// discard ends a connection that failed at once, without the graceful close
// a broken server could stall (an http DELETE, a stdio server's grace).
func (b *Bridge) discard(c *conn) {
	c.abort(errBroken)
	b.release(c, false)
}

// lookup finds a tool in the catalog, listing on c when the catalog is
// missing (a process that did not discover) or lacks the name (the server's
// list may have changed).
func (b *Bridge) lookup(ctx context.Context, c *conn, tool string) (entry, bool, error) {
	b.mu.Lock()
	cat := b.cat
	b.mu.Unlock()
	if cat != nil {
		if e, ok := cat.byName[tool]; ok {
			return e, true, nil
		}
	}
	cat, err := list(ctx, c.session, b.def)
	if err != nil {
		return entry{}, false, fmt.Errorf("discovering: %w", err)
	}
	b.mu.Lock()
	b.cat = cat
	b.mu.Unlock()
	e, ok := cat.byName[tool]
	return e, ok, nil
}

func (b *Bridge) names() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cat == nil {
		return nil
	}
	return b.cat.names()
}

// token is a fresh progress token, so late progress of an earlier call on a
// kept connection is not taken for this one'b.
func (b *Bridge) token() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	return "agentcore-" + strconv.FormatUint(b.calls, 10)
}

func (b *Bridge) errorf(format string, args ...any) error {
	return fmt.Errorf("mcp server %s: "+format, append([]any{b.def.label()}, args...)...)
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
