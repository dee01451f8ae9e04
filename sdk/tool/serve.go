package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Serve serves tools as a plugin and does not return. Call it from main.
//
// A handler's return value becomes the result handed to the model:
//   - a string is text;
//   - [Content], []Part or a [Part] are content parts (text, images, files);
//   - a [Result] adds flags (stop, error) to its Output;
//   - json.RawMessage is sent as JSON as it is;
//   - anything else is marshalled to JSON (nil is JSON null).
//
// A returned error, a panic in the handler, an invalid part and a value that
// cannot be marshalled all become error results the model can read; the
// plugin keeps serving. Serve exits with status 1 when the tools are invalid
// (bad name, duplicate name, bad schema) or when the binary is started by
// hand rather than by a host.
func Serve(tools ...Tool) {
	srv, err := newServer(tools)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tool plugin: %v\n", err)
		os.Exit(1)
	}
	serve(srv, "offering "+strings.Join(srv.names, ", "))
}

// ServeService serves svc as a plugin and does not return: for a plugin
// whose tools are known only at run time, such as toolhost serving an MCP
// server. svc's Describe answers the host's Describe. Calls reach svc's
// Execute one at a time, whether the host uses Execute or Session (svc's own
// Session is never called), with what Serve gives its tools: whatever the
// process writes to its standard output and error during a call is that
// call's output, in order and before its result, and the process group dies
// with the host. An error Execute returns before sending a result, or a
// panic in it, becomes an error result; messages sent after the result are
// dropped. ServeService exits with status 1 when the binary is started by
// hand rather than by a host.
func ServeService(svc pluginv1.ToolPluginServiceServer) {
	serve(&server{svc: svc}, "")
}

// serve serves srv through go-plugin; what names the tools for a person who
// starts the binary by hand.
func serve(srv *server, what string) {
	if os.Getenv(pluginv1.MagicCookieKey) != pluginv1.MagicCookieValue {
		if what != "" {
			what = " " + what
		}
		fmt.Fprintf(os.Stderr, "This is an agentcore tool plugin%s.\n"+
			"A host starts it; to try it, put it in a directory and run: toolhost list DIR\n", what)
		os.Exit(1)
	}
	io, err := captureStdio()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tool plugin: capturing stdio: %v\n", err)
		os.Exit(1)
	}
	srv.stdio = io
	srv.maxResult, _ = strconv.Atoi(os.Getenv(pluginv1.MaxResultBytesEnv))
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake(),
		Plugins:         plugin.PluginSet{pluginv1.PluginName: &grpcPlugin{srv: srv}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32),
				// Fixed windows turn off bandwidth-delay pings, overhead on a local socket.
				grpc.InitialWindowSize(4<<20), grpc.InitialConnWindowSize(4<<20))
			return grpc.NewServer(opts...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{
			Name: "plugin", Level: hclog.Warn, JSONFormat: true, Output: io.diag,
		}),
	})
	os.Exit(0)
}

// handshake returns the go-plugin handshake shared with the host (pkg/tool).
func handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  pluginv1.ProtocolVersion,
		MagicCookieKey:   pluginv1.MagicCookieKey,
		MagicCookieValue: pluginv1.MagicCookieValue,
	}
}

// grpcPlugin registers the server with go-plugin; the client half lives in pkg/tool.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv *server
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv1.RegisterToolPluginServiceServer(s, p.srv)
	return nil
}

func (p *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("sdk/tool serves tools; use pkg/tool to call them")
}

// server is the plugin's gRPC service: it runs one call at a time, with the
// process's stdio attached to it, on Execute or Session. A call runs a tool
// of its own (tools), or the Execute of svc when it serves a service.
type server struct {
	pluginv1.UnimplementedToolPluginServiceServer
	svc   pluginv1.ToolPluginServiceServer
	tools map[string]*Tool
	names []string
	specs []*pluginv1.ToolSpec

	stdio     *stdio
	stdioOnce sync.Once
	callMu    sync.Mutex // one call at a time: output is attributed to it
	maxResult int        // the host's cap on a result, from MaxResultBytesEnv; 0: none
}

func newServer(tools []Tool) (*server, error) {
	s := &server{tools: make(map[string]*Tool, len(tools))}
	var errs []error
	for i := range tools {
		t := &tools[i]
		if err := checkTool(t); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, dup := s.tools[t.Name]; dup {
			errs = append(errs, fmt.Errorf("tool %q is defined twice", t.Name))
			continue
		}
		s.tools[t.Name] = t
		s.names = append(s.names, t.Name)
		spec := &pluginv1.ToolSpec{
			Name:            t.Name,
			Description:     t.Description,
			InputSchemaJson: string(t.InputSchema),
			Hints:           &pluginv1.ToolHints{ReadOnly: t.ReadOnly, Idempotent: t.Idempotent},
		}
		if t.Timeout > 0 {
			spec.Timeout = durationpb.New(t.Timeout)
		}
		if l := t.Limits; l != (Limits{}) {
			spec.Limits = &pluginv1.ToolLimits{MemoryBytes: l.MemoryBytes, MaxProcesses: l.MaxProcesses, MaxOpenFiles: l.MaxOpenFiles}
			if l.CPUTime > 0 {
				spec.Limits.CpuTime = durationpb.New(l.CPUTime)
			}
		}
		s.specs = append(s.specs, spec)
	}
	if len(tools) == 0 {
		errs = append(errs, errors.New("no tools to serve"))
	}
	sort.Strings(s.names)
	return s, errors.Join(errs...)
}

func checkTool(t *Tool) error {
	if !validName.MatchString(t.Name) {
		return fmt.Errorf("tool name %q must match %s", t.Name, validName)
	}
	if t.err != nil {
		return fmt.Errorf("tool %q: %w", t.Name, t.err)
	}
	if t.Handler == nil {
		return fmt.Errorf("tool %q has no handler", t.Name)
	}
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(t.InputSchema))
	if err := dec.Decode(&root); err != nil {
		return fmt.Errorf("tool %q: input schema is not a JSON object: %w", t.Name, err)
	}
	if root["type"] != "object" {
		return fmt.Errorf(`tool %q: input schema must have "type": "object" at its root`, t.Name)
	}
	return nil
}

// Describe lists the tools.
func (s *server) Describe(ctx context.Context, req *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	s.stdioOnce.Do(s.stdio.takeOver)
	if s.svc != nil {
		return s.svc.Describe(ctx, req)
	}
	return &pluginv1.DescribeResponse{Tools: s.specs}, nil
}

// Execute runs one call: its output, then its result. Its host answers
// no requests: they travel on a Session.
func (s *server) Execute(req *pluginv1.ExecuteRequest, stream grpc.ServerStreamingServer[pluginv1.ExecuteResponse]) error {
	return s.serveCall(stream.Context(), req, stream.Send, nil)
}

// Session runs calls one after another on one stream. Its messages are
// read on a goroutine of their own, so that the host's answers to a
// running call's requests reach it while the call runs; the goroutine ends
// with the stream, when Session returns.
func (s *server) Session(stream grpc.BidiStreamingServer[pluginv1.SessionRequest, pluginv1.SessionResponse]) error {
	var sendMu sync.Mutex // the call's messages and its host requests share the stream
	sendMsg := func(m *pluginv1.SessionResponse) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(m)
	}
	send := func(r *pluginv1.ExecuteResponse) error {
		// The message and its oneof wrapper in one allocation.
		m := &struct {
			msg  pluginv1.SessionResponse
			kind pluginv1.SessionResponse_Execute
		}{kind: pluginv1.SessionResponse_Execute{Execute: r}}
		m.msg.Kind = &m.kind
		return sendMsg(&m.msg)
	}
	sendHost := func(r *pluginv1.HostRequest) error {
		return sendMsg(&pluginv1.SessionResponse{Kind: &pluginv1.SessionResponse_HostRequest{HostRequest: r}})
	}
	var cur sessionCall
	calls := make(chan *pluginv1.SessionRequest) // execute or describe
	bad := make(chan error, 1)
	go func() {
		defer close(calls)
		for {
			msg, err := stream.Recv()
			if err != nil {
				cur.end() // the host closed the session
				return
			}
			switch k := msg.GetKind().(type) {
			case *pluginv1.SessionRequest_Execute, *pluginv1.SessionRequest_Describe:
				select {
				case calls <- msg:
				case <-stream.Context().Done():
					return
				}
			case *pluginv1.SessionRequest_HostResponse:
				cur.deliver(k.HostResponse)
			default:
				bad <- status.Error(codes.InvalidArgument, "session message without a call")
				return
			}
		}
	}()
	for {
		select {
		case msg, ok := <-calls:
			if !ok {
				return nil // the host closed the session
			}
			if d := msg.GetDescribe(); d != nil {
				if err := s.describeOnSession(stream.Context(), d, sendMsg, sendHost, &cur); err != nil {
					return err
				}
				continue
			}
			req := msg.GetExecute()
			var link *hostLink
			if req.GetHostRequests() {
				link = newHostLink(sendHost)
			}
			cur.set(link)
			err := s.serveCall(stream.Context(), req, send, link)
			cur.set(nil)
			if err != nil {
				return err
			}
		case err := <-bad:
			return err
		}
	}
}

// describeOnSession answers a Describe sent on the Session: its host
// requests (Ask on its context) go on the stream like a call's. A failed
// Describe ends the session with its status, as the unary RPC would.
func (s *server) describeOnSession(ctx context.Context, req *pluginv1.DescribeRequest, sendMsg func(*pluginv1.SessionResponse) error,
	sendHost func(*pluginv1.HostRequest) error, cur *sessionCall) error {
	link := newHostLink(sendHost)
	cur.set(link)
	defer cur.set(nil)
	defer link.end()
	res, err := s.Describe(context.WithValue(ctx, hostKey{}, link), req)
	if err != nil {
		return err
	}
	return sendMsg(&pluginv1.SessionResponse{Kind: &pluginv1.SessionResponse_Describe{Describe: res}})
}

// sessionCall is the host link of a Session's running call, if any, for
// the goroutine reading the host's answers.
type sessionCall struct {
	mu   sync.Mutex
	link *hostLink
}

func (c *sessionCall) set(l *hostLink) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.link = l
}

func (c *sessionCall) deliver(res *pluginv1.HostResponse) {
	c.mu.Lock()
	l := c.link
	c.mu.Unlock()
	if l != nil {
		l.deliver(res)
	}
}

func (c *sessionCall) end() {
	c.mu.Lock()
	l := c.link
	c.mu.Unlock()
	if l != nil {
		l.end()
	}
}

// serveCall runs one call, sending its output and result with send; link,
// if not nil, carries its requests to the host. The call's context ends
// when the call does, so goroutines the tool left behind see it done.
func (s *server) serveCall(ctx context.Context, req *pluginv1.ExecuteRequest, send func(*pluginv1.ExecuteResponse) error, link *hostLink) error {
	s.stdioOnce.Do(s.stdio.takeOver)
	s.callMu.Lock()
	defer s.callMu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if link != nil {
		ctx = context.WithValue(ctx, hostKey{}, link)
		// Requests still waiting when the result goes fail, and later ones.
		defer link.end()
	}

	c := &call{write: send, stdio: s.stdio}
	s.stdio.attach(c)
	res := s.run(withTraceContext(ctx, req.GetTraceContext()), c, req)
	s.stdio.detach()
	return c.finish(capResult(res, s.maxResult))
}

func (s *server) run(ctx context.Context, c *call, req *pluginv1.ExecuteRequest) (res *pluginv1.ToolResult) {
	if s.svc != nil {
		return runService(ctx, s.svc, c, req)
	}
	t, ok := s.tools[req.GetTool()]
	if !ok {
		return errorResult(fmt.Sprintf("unknown tool %q; this plugin offers: %s", req.GetTool(), strings.Join(s.names, ", ")))
	}
	defer func() {
		if p := recover(); p != nil {
			res = errorResult(fmt.Sprintf("tool %q panicked: %v\n\n%s", t.Name, p, trimStack(debug.Stack())))
		}
	}()
	emit := func(text string) { c.sendAfterStdio(pluginv1.OutputStream_OUTPUT_STREAM_OUTPUT, []byte(text)) }
	ctx = context.WithValue(ctx, callInfoKey{}, Call{ID: req.GetCallId(), IdempotencyKey: req.GetIdempotencyKey(), Attempt: int(req.GetAttempt())})
	v, err := t.Handler(context.WithValue(ctx, callKey{}, c), json.RawMessage(req.GetInputJson()), emit)
	return toResult(v, err)
}

// trimStack keeps the frames of a panic's stack that belong to the tool:
// those between the panic and the SDK's own frames.
func trimStack(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			start = i + 2 // the function line and its file line
			break
		}
	}
	var kept []string
	for i := start; i+1 < len(lines); i += 2 {
		if strings.HasPrefix(lines[i], "github.com/agentcore/agentcore/sdk/tool.(*server).") ||
			strings.HasPrefix(lines[i], "github.com/agentcore/agentcore/sdk/tool.New[") {
			break
		}
		kept = append(kept, lines[i], lines[i+1])
	}
	return strings.Join(kept, "\n")
}

type callKey struct{}

// call is one running call: it serialises sends on its stream.
type call struct {
	stdio *stdio // its flush forwards what was written to fd 1 and 2 so far; nil: none

	mu    sync.Mutex
	write func(*pluginv1.ExecuteResponse) error // sends on the call's stream
	done  bool
	err   error
}

// sendAfterStdio sends a chunk after whatever the process wrote to its
// stdout and stderr before, so that output keeps the order it was made in.
func (c *call) sendAfterStdio(stream pluginv1.OutputStream, data []byte) {
	if len(data) == 0 {
		return
	}
	c.stdio.flush()
	c.send(stream, data)
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// send streams a chunk; it is a no-op once the result has been sent.
func (c *call) send(stream pluginv1.OutputStream, data []byte) {
	if len(data) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || c.err != nil {
		return
	}
	// The messages and the oneof wrapper in one allocation.
	m := &struct {
		msg   pluginv1.ExecuteResponse
		event pluginv1.ExecuteResponse_Output
		chunk pluginv1.OutputChunk
	}{chunk: pluginv1.OutputChunk{Stream: stream, Data: bytes.Clone(data)}}
	m.event.Output = &m.chunk
	m.msg.Event = &m.event
	c.err = c.write(&m.msg)
}

func (c *call) finish(res *pluginv1.ToolResult) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if c.err != nil {
		return c.err
	}
	m := &struct {
		msg   pluginv1.ExecuteResponse
		event pluginv1.ExecuteResponse_Result
	}{event: pluginv1.ExecuteResponse_Result{Result: res}}
	m.msg.Event = &m.event
	return c.write(&m.msg)
}
