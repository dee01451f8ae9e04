package tool

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// runService runs one call on svc's Execute: its output chunks pass through
// c, after whatever the process wrote to fd 1 and 2 before them; its result
// is returned. Every way the call can end is a result.
func runService(ctx context.Context, svc pluginv1.ToolPluginServiceServer, c *call, req *pluginv1.ExecuteRequest) (res *pluginv1.ToolResult) {
	st := &callStream{ctx: ctx, call: c}
	defer func() {
		if p := recover(); p != nil {
			res = errorResult(fmt.Sprintf("tool %q panicked: %v\n\n%s", req.GetTool(), p, debug.Stack()))
		}
	}()
	err := svc.Execute(req, st)
	if r := st.taken(); r != nil {
		return r
	}
	if err != nil {
		return errorResult(fmt.Sprintf("tool %q failed: %s", req.GetTool(), status.Convert(err).Message()))
	}
	return errorResult(fmt.Sprintf("tool %q ended without a result", req.GetTool()))
}

// errResultSent is what Send says once the call's result has been sent.
var errResultSent = errors.New("the call's result has already been sent")

// callStream is the server stream a service's Execute writes one call to.
type callStream struct {
	ctx  context.Context
	call *call

	mu     sync.Mutex
	result *pluginv1.ToolResult
}

var _ grpc.ServerStreamingServer[pluginv1.ExecuteResponse] = (*callStream)(nil)

// Send forwards an output chunk, or takes the result.
func (s *callStream) Send(msg *pluginv1.ExecuteResponse) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.result != nil {
		return errResultSent
	}
	switch ev := msg.GetEvent().(type) {
	case *pluginv1.ExecuteResponse_Output:
		s.call.sendAfterStdio(ev.Output.GetStream(), ev.Output.GetData())
	case *pluginv1.ExecuteResponse_Result:
		s.result = ev.Result
		if s.result == nil {
			s.result = &pluginv1.ToolResult{}
		}
	}
	return nil
}

// taken returns the result, if one was sent.
func (s *callStream) taken() *pluginv1.ToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result
}

// Context is the call's context: it ends when the call does.
func (s *callStream) Context() context.Context { return s.ctx }

// SendMsg sends an ExecuteResponse, as Send does.
func (s *callStream) SendMsg(m any) error {
	msg, ok := m.(*pluginv1.ExecuteResponse)
	if !ok {
		return fmt.Errorf("a call's stream carries ExecuteResponse messages, not %T", m)
	}
	return s.Send(msg)
}

// RecvMsg fails: the host sends nothing on a call's stream.
func (s *callStream) RecvMsg(any) error {
	return errors.New("a call's stream carries no messages from the host")
}

// SetHeader does nothing: a call has no headers of its own on a Session.
func (s *callStream) SetHeader(metadata.MD) error { return nil }

// SendHeader does nothing: a call has no headers of its own on a Session.
func (s *callStream) SendHeader(metadata.MD) error { return nil }

// SetTrailer does nothing: a call has no trailers of its own on a Session.
func (s *callStream) SetTrailer(metadata.MD) {}
