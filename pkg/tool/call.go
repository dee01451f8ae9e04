package tool

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// errNoSession says the plugin does not implement Session.
var errNoSession = errors.New("plugin has no Session")

// call runs one call on the process: on its Session stream, or through
// Execute when the plugin has no Session. It returns the plugin's result,
// or an error when the stream failed before a result came.
// started, if not nil, is called once, when the request is sent. host
// answers the call's host requests (Session only); nil answers none.
func (pr *proc) call(ctx context.Context, req *pluginv1.ExecuteRequest, dec *chunkDecoder, started func(), host *HostHandler) (*pluginv1.ToolResult, error) {
	if !pr.noSession {
		res, err := pr.callSession(ctx, req, dec, started, host)
		if !errors.Is(err, errNoSession) {
			return res, err
		}
		pr.noSession = true
		started = nil // called already: the call goes on through Execute
	}
	return pr.callExecute(req, dec, started)
}

func (pr *proc) callSession(ctx context.Context, req *pluginv1.ExecuteRequest, dec *chunkDecoder, started func(), host *HostHandler) (*pluginv1.ToolResult, error) {
	if pr.sess == nil {
		s, err := pr.rpc.Session(pr.sessCtx)
		if err != nil {
			return nil, err
		}
		pr.sess = s
	}
	req.HostRequests = true
	// On a stream the plugin ended, Send says io.EOF and Recv has the status.
	if err := pr.sess.Send(sessionRequest(req)); err != nil && err != io.EOF {
		return nil, err
	}
	if started != nil {
		started()
	}
	var hc *hostCalls // made at the call's first host request: most make none
	defer func() {
		if hc != nil {
			hc.end()
		}
	}()
	first := true
	for {
		msg, err := pr.sess.Recv()
		if err != nil {
			if first && status.Code(err) == codes.Unimplemented {
				pr.sess = nil
				return nil, errNoSession
			}
			if err == io.EOF {
				err = errors.New("the plugin ended its session")
			}
			return nil, err
		}
		first = false
		if hr := msg.GetHostRequest(); hr != nil {
			if hc == nil {
				hc = newHostCalls(ctx, host, pr.pool.cmd.source(), pr.sess.Send)
			}
			hc.serve(hr)
			continue
		}
		if res := handle(msg.GetExecute(), dec); res != nil {
			return res, nil
		}
	}
}

// sessionRequest wraps req for the Session stream, the message and its
// oneof wrapper in one allocation.
func sessionRequest(req *pluginv1.ExecuteRequest) *pluginv1.SessionRequest {
	m := &struct {
		msg  pluginv1.SessionRequest
		kind pluginv1.SessionRequest_Execute
	}{kind: pluginv1.SessionRequest_Execute{Execute: req}}
	m.msg.Kind = &m.kind
	return &m.msg
}

func (pr *proc) callExecute(req *pluginv1.ExecuteRequest, dec *chunkDecoder, started func()) (*pluginv1.ToolResult, error) {
	stream, err := pr.rpc.Execute(pr.sessCtx, req)
	if err != nil {
		return nil, err
	}
	if started != nil {
		started()
	}
	var res *pluginv1.ToolResult
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			if res == nil {
				return nil, errors.New("the plugin ended the call without a result")
			}
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = handle(msg, dec)
		}
	}
}

// handle passes an output chunk on, or returns the result.
func handle(msg *pluginv1.ExecuteResponse, dec *chunkDecoder) *pluginv1.ToolResult {
	switch ev := msg.GetEvent().(type) {
	case *pluginv1.ExecuteResponse_Output:
		dec.write(ev.Output.GetStream(), ev.Output.GetData())
	case *pluginv1.ExecuteResponse_Result:
		dec.flush()
		if ev.Result == nil {
			return &pluginv1.ToolResult{}
		}
		return ev.Result
	}
	return nil
}

// errTimeout is the cause of a call's context when its tool's timeout passed.
var errTimeout = errors.New("tool timeout")

// callContext is the context of one call: it ends, with errTimeout as its
// cause, when the tool's declared timeout passes.
func callContext(ctx context.Context, spec Spec) (context.Context, context.CancelFunc) {
	if spec.Timeout > 0 {
		return context.WithTimeoutCause(ctx, spec.Timeout, errTimeout)
	}
	return context.WithCancel(ctx)
}

// run executes one call of a plugin tool with the host's semantics.
func (pl *pool) run(ctx context.Context, e *entry, input []byte, opts Options) Result {
	name := e.spec.Name
	if e.spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = callContext(ctx, e.spec)
		defer cancel()
	}

	pr, err := pl.get(ctx, e.spec.Limits)
	if err != nil {
		if ctx.Err() != nil {
			return stoppedResult(ctx, e)
		}
		return pl.startFailedResult(name, err)
	}
	stopCPU := func() {}
	if cpu := e.spec.Limits.CPUTime; cpu > 0 && pr.group != nil {
		stopCPU = pr.group.WatchCPU(cpu)
		defer stopCPU()
	}
	// The hard stop, on a timeout or a cancel, kills the process group at
	// once (a context that cannot end needs none).
	stop := noStop
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { pr.stopWithin(pl.cmd.StopGrace) })
	}
	dec := &chunkDecoder{onOutput: opts.OnOutput}
	var oom *oomScanner
	if pr.group != nil && !pr.group.Cgroup() {
		// Without a cgroup, an out-of-memory line is the sign of a memory
		// breach; a Go plugin's begins in the call's captured stderr.
		oom = &oomScanner{}
		dec.onStderr = oom.write
	}
	req := &pluginv1.ExecuteRequest{Tool: name, InputJson: string(input), CallId: opts.CallID, TraceContext: traceContext(ctx),
		IdempotencyKey: opts.IdempotencyKey, Attempt: uint32(max(opts.Attempt, 0))}
	res, err := pr.call(ctx, req, dec, opts.OnStart, opts.HostHandler)
	// The watch's last look, before Check: a call over its CPU time since
	// the last one is a breach too.
	stopCPU()
	if !stop() || ctx.Err() != nil {
		// Stopped for the context (gRPC may notice the context before the
		// AfterFunc runs): kill, wait until the tree is dead (not for the
		// reap), report the stop.
		pr.stopWithin(pl.cmd.StopGrace)
		pr.waitDead()
		if o := pl.host.cfg.Observer; o != nil {
			o.ProcessKilled(pl.name)
		}
		pl.lost(pr)
		return stoppedResult(ctx, e)
	}
	if err != nil {
		return pl.crashResult(pr, name, err, oom.line())
	}
	if pr.group != nil {
		// A tool's child killed at the limit, the tool answering at once:
		// the breach wins over the answer, and the tree goes.
		if b, ok := pr.group.Check(); ok {
			pr.kill()
			pr.waitDead()
			pl.lost(pr)
			return pl.breachResult(name, b)
		}
	}
	pl.put(pr)
	return fromPlugin(name, res)
}

// noStop is the stop of a hard stop never armed: there is nothing to stop.
func noStop() bool { return true }
