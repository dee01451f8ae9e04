package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

const (
	// closeGrace is how long a stdio server has to exit after its stdin is
	// closed, and again after SIGTERM, before it is killed.
	closeGrace = time.Second
	// pipeGrace bounds waiting for a dead server's stderr to reach EOF (a
	// grandchild may hold it open).
	pipeGrace = 200 * time.Millisecond
	// stderrTail is how much of a stdio server's stderr errors quote.
	stderrTail = 2048
)

// errClosed is the cause of a connection's context once it has been closed normally.
var errClosed = errors.New("connection closed")

// errBroken is the cause of a connection's context when it was ended at once
// because it failed: explain then reports what the server did.
var errBroken = fmt.Errorf("%w: broken", errClosed)

// conn is one connection to an MCP server: for stdio, one server process.
type conn struct {
	def     *Definition
	session *sdk.ClientSession
	// cmd is the stdio server process, nil for http and sse.
	cmd *exec.Cmd
	// ctx ends when the connection is aborted or closed. For stdio it is the
	// process's context: ending it kills the process at once. For http and sse
	// every request is bound to it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// done is closed when the session has ended, by either side.
	done chan struct{}
	// out routes progress and stderr to the running call.
	out sink
	// reusable says the Bridge may keep the connection after a call.
	reusable bool

	closeOnce sync.Once
	closeErr  error
}

// connect opens a connection and completes the MCP handshake. Ending ctx
// (its deadline is the discovery timeout) aborts it with ctx's cause.
func connect(ctx context.Context, def *Definition, base http.RoundTripper) (*conn, error) {
	c := &conn{def: def, done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	var transport sdk.Transport
	switch def.Transport.Type {
	case TransportStdio:
		// exec would blame the command for a missing working directory.
		if info, err := os.Stat(def.Transport.Cwd); err != nil || !info.IsDir() {
			c.cancel(errClosed)
			if err == nil {
				err = errors.New("not a directory")
			}
			return nil, fmt.Errorf("working directory %s: %w", def.Transport.Cwd, err)
		}
		cmd := exec.CommandContext(c.ctx, def.Transport.Command, def.Transport.Args...)
		cmd.Dir = def.Transport.Cwd
		cmd.Env = commandEnv(def.Transport.Env)
		cmd.Stderr = &c.out
		cmd.WaitDelay = pipeGrace
		dieWithParent(cmd)
		c.cmd = cmd
		transport = &progressTransport{
			Transport: &sdk.CommandTransport{Command: cmd, TerminateDuration: closeGrace},
			deliver:   c.out.progress,
		}
	case TransportHTTP:
		st := &sdk.StreamableClientTransport{
			Endpoint:   def.Transport.URL,
			HTTPClient: c.httpClient(base, c.out.progress),
			// The standalone stream stays on: a server may send its
			// requests of a call (elicitation, sampling) there rather than
			// on the call's own stream, as the TypeScript SDK's servers do.
		}
		if def.OAuth != nil {
			// The authorization server gets none of the definition's headers.
			st.OAuthHandler = newOAuthHandler(c.ctx, def, &http.Client{Transport: &boundTransport{base: base, ctx: c.ctx}})
		}
		transport = st
	case TransportSSE:
		transport = &progressTransport{
			Transport: &sdk.SSEClientTransport{Endpoint: def.Transport.URL, HTTPClient: c.httpClient(base, nil)},
			deliver:   c.out.progress,
		}
	default:
		c.cancel(errClosed)
		return nil, fmt.Errorf("unknown transport %q", def.Transport.Type)
	}
	client := sdk.NewClient(clientInfo(), &sdk.ClientOptions{
		// No roots. Elicitation (form) and sampling go to the plugin's host
		// during a call (hostreq.go). Progress is taken off the wire (see
		// progress.go), not by a handler.
		Capabilities: &sdk.ClientCapabilities{
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}},
			//lint:ignore SA1019 sampling is deprecated as of MCP 2026-07-28 (SEP-2577); servers of earlier versions still sample.
			Sampling: &sdk.SamplingCapabilities{},
		},
		ElicitationHandler: c.out.elicit,
		//lint:ignore SA1019 as Sampling above.
		CreateMessageHandler: c.out.sample,
	})
	stop := context.AfterFunc(ctx, func() { c.cancel(context.Cause(ctx)) })
	session, err := client.Connect(c.ctx, transport, nil)
	stop()
	if err != nil {
		cause := context.Cause(c.ctx)
		c.cancel(errClosed)
		if cause != nil {
			err = cause
		}
		return nil, c.explain(fmt.Errorf("connecting: %w", err))
	}
	c.session = session
	go func() {
		_ = session.Wait()
		close(c.done)
	}()
	return c, nil
}

// alive reports whether the session has not ended.
func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// abort ends the connection at once: a stdio server is killed, http requests are cancelled.
func (c *conn) abort(cause error) {
	c.cancel(cause)
}

// close ends the session (a stdio server gets EOF on stdin, then SIGTERM, then
// SIGKILL) and waits until it is over: no process is left.
func (c *conn) close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.session.Close()
		<-c.done
		c.cancel(errClosed)
	})
	return c.closeErr
}

// explain adds to err, once the connection is over, what is known of why
// it failed: why it was aborted, or how a stdio server exited, and the tail
// of its stderr.
func (c *conn) explain(err error) error {
	var notes []string
	cause := context.Cause(c.ctx)
	switch {
	case cause != nil && !errors.Is(cause, errClosed):
		if !errors.Is(err, cause) {
			notes = append(notes, cause.Error())
		}
	case c.cmd != nil && c.cmd.ProcessState != nil && !c.cmd.ProcessState.Success():
		// The SDK has waited for the process when the session ended.
		notes = append(notes, "the server process ended: "+c.cmd.ProcessState.String())
	}
	if tail := c.out.stderrTail(); tail != "" {
		notes = append(notes, "its stderr ends with: "+strconv.Quote(tail))
	}
	if len(notes) == 0 {
		return err
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(notes, "; "))
}

// httpClient is a client whose requests carry the definition's headers and
// end when the connection does; progress, if set, gets the progress
// notifications of event-stream responses.
func (c *conn) httpClient(base http.RoundTripper, progress func(*sdk.ProgressNotificationParams)) *http.Client {
	return &http.Client{Transport: &boundTransport{base: base, headers: c.def.Transport.Headers, ctx: c.ctx, progress: progress}}
}

// commandEnv is the few inherited variables plus the definition's env.
func commandEnv(extra map[string]string) []string {
	env := make([]string, 0, 6+len(extra))
	for _, k := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"} {
		if _, set := extra[k]; set {
			continue
		}
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// clientInfo is how the bridge introduces itself to servers.
func clientInfo() *sdk.Implementation {
	version := "devel"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		version = info.Main.Version
	}
	return &sdk.Implementation{Name: "agentcore", Version: version}
}

// boundTransport adds the definition's headers to each request (never
// replacing the protocol's own) and ends each request when ctx ends.
type boundTransport struct {
	base     http.RoundTripper
	headers  map[string]string
	ctx      context.Context
	progress func(*sdk.ProgressNotificationParams)
}

func (t *boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := context.Cause(t.ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(t.ctx, func() { cancel(context.Cause(t.ctx)) })
	release := func() {
		stop()
		cancel(nil)
	}
	req = req.Clone(ctx)
	for k, v := range t.headers {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		release()
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	if t.progress != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &progressBody{ReadCloser: resp.Body, deliver: t.progress}
	}
	return resp, nil
}

// releasingBody releases its request's context once closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// sink routes a connection's progress notifications and stdio stderr to the
// running call's output function, and keeps the tail of stderr for errors.
// The output function is never called concurrently, nor after detach returns.
// It also gives the server's requests to its client (elicitation,
// sampling) the running call's context, through which they reach the host.
type sink struct {
	mu    sync.Mutex
	call  context.Context // the running call's; nil between calls
	token string
	emit  func(*pluginv1.OutputChunk)
	tail  []byte
}

// attach routes output to emit, progress whose token is token, and the
// server's requests to the call of ctx.
func (s *sink) attach(ctx context.Context, token string, emit func(*pluginv1.OutputChunk)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.call, s.token, s.emit = ctx, token, emit
}

// detach stops routing; output arriving later is dropped.
func (s *sink) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.call, s.token, s.emit = nil, "", nil
}

func (s *sink) progress(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, _ := p.ProgressToken.(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.emit == nil || token == "" || token != s.token {
		return
	}
	s.emit(&pluginv1.OutputChunk{Stream: pluginv1.OutputStream_OUTPUT_STREAM_OUTPUT, Data: []byte(progressText(p))})
}

// progressText renders a progress notification as one line: "3/10 message".
func progressText(p *sdk.ProgressNotificationParams) string {
	text := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		text += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if msg := strings.TrimSpace(p.Message); msg != "" {
		text += " " + msg
	}
	return strings.ToValidUTF8(text, "\uFFFD") + "\n"
}

// Write takes a stdio server's stderr.
func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail = append(s.tail, p...)
	if over := len(s.tail) - stderrTail; over > 0 {
		s.tail = slices.Delete(s.tail, 0, over)
	}
	if s.emit != nil {
		// Raw bytes: the host joins a stream's chunks before decoding them.
		s.emit(&pluginv1.OutputChunk{Stream: pluginv1.OutputStream_OUTPUT_STREAM_STDERR, Data: slices.Clone(p)})
	}
	return len(p), nil
}

// stderrTail is the end of a stdio server's stderr, made valid UTF-8.
func (s *sink) stderrTail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tail := s.tail
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(tail), "\uFFFD"))
}
