package tool

import (
	"context"
	"errors"
	"sync"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// maxOpenHostRequests bounds the requests of one call waiting for its
// host at once: a plugin asking more is refused, not given a goroutine each.
const maxOpenHostRequests = 16

// HostHandler answers what a plugin asks its host during one call (the plugin
// protocol's HostRequest: ask the person behind the run, sample the run's
// model). Each func, when set, answers one kind; unset, the plugin is told
// that this host cannot (HOST_ERROR_CODE_UNSUPPORTED). The funcs run on
// goroutines of their own, may overlap, and must return once ctx ends: it
// ends when the call does. An error they return reaches the plugin as a
// HostError (see HostError for choosing its code).
type HostHandler struct {
	// Elicit asks the person behind the run for input.
	Elicit func(ctx context.Context, req *pluginv1.ElicitRequest) (*pluginv1.ElicitResponse, error)
	// Sample asks the run's model for a message.
	Sample func(ctx context.Context, req *pluginv1.SampleRequest) (*pluginv1.SampleResponse, error)
	// Credential answers an MCP host process's requests for its server's
	// OAuth credential. source is the Source of the plugin that asks
	// ("mcp:" and its definition's path), known to the host, never taken
	// from the request: a plugin gets only its own server's credential.
	Credential func(ctx context.Context, source string, req *pluginv1.CredentialRequest) (*pluginv1.CredentialResponse, error)
}

// HostError is an error of a Host func with the code the plugin gets;
// other errors reach it as HOST_ERROR_CODE_FAILED, and a call's end as
// HOST_ERROR_CODE_CANCELLED.
type HostError struct {
	Code    pluginv1.HostErrorCode
	Message string
}

func (e *HostError) Error() string { return e.Message }

// hostCalls serves the host requests of one call on its Session: each on a
// goroutine of its own, its answer sent on the stream; end cancels the
// ones still open and waits for them, so none answers after the call.
type hostCalls struct {
	host   *HostHandler
	source string // the plugin's Command source
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex // serialises sends; guards open and ended
	send  func(*pluginv1.SessionRequest) error
	open  int
	ended bool
}

func newHostCalls(ctx context.Context, host *HostHandler, source string, send func(*pluginv1.SessionRequest) error) *hostCalls {
	h := &hostCalls{host: host, source: source, send: send}
	h.ctx, h.cancel = context.WithCancel(ctx)
	return h
}

// serve answers one request, on a goroutine of its own.
func (h *hostCalls) serve(req *pluginv1.HostRequest) {
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		return
	}
	if h.open >= maxOpenHostRequests {
		h.mu.Unlock()
		h.reply(req.GetId(), hostError(&HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_INVALID,
			Message: "too many host requests of this call are open at once"}))
		return
	}
	h.open++
	h.mu.Unlock()
	h.wg.Go(func() {
		res := h.answer(req)
		h.reply(req.GetId(), res)
		h.mu.Lock()
		h.open--
		h.mu.Unlock()
	})
}

// answer runs the host's func for req.
func (h *hostCalls) answer(req *pluginv1.HostRequest) *pluginv1.HostResponse {
	var host HostHandler
	if h.host != nil {
		host = *h.host
	}
	switch k := req.GetKind().(type) {
	case *pluginv1.HostRequest_Elicit:
		if host.Elicit != nil {
			r, err := host.Elicit(h.ctx, k.Elicit)
			if err != nil {
				return hostError(h.classify(err))
			}
			return &pluginv1.HostResponse{Kind: &pluginv1.HostResponse_Elicit{Elicit: r}}
		}
		return hostError(&HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED,
			Message: "this host has no one to ask: the call runs outside a run that can answer elicitations"})
	case *pluginv1.HostRequest_Sample:
		if host.Sample != nil {
			r, err := host.Sample(h.ctx, k.Sample)
			if err != nil {
				return hostError(h.classify(err))
			}
			return &pluginv1.HostResponse{Kind: &pluginv1.HostResponse_Sample{Sample: r}}
		}
		return hostError(&HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED,
			Message: "this host has no model to sample: the call runs outside a run"})
	case *pluginv1.HostRequest_Credential:
		if host.Credential != nil {
			r, err := host.Credential(h.ctx, h.source, k.Credential)
			if err != nil {
				return hostError(h.classify(err))
			}
			return &pluginv1.HostResponse{Kind: &pluginv1.HostResponse_Credential{Credential: r}}
		}
		return hostError(&HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED,
			Message: "this host keeps no credentials for MCP servers"})
	default:
		return hostError(&HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_UNSUPPORTED,
			Message: "unknown host request: this host does not know its kind"})
	}
}

// classify gives err its HostError code.
func (h *hostCalls) classify(err error) *HostError {
	var he *HostError
	switch {
	case errors.As(err, &he):
		return he
	case h.ctx.Err() != nil:
		return &HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_CANCELLED, Message: "the call ended before its host answered"}
	default:
		return &HostError{Code: pluginv1.HostErrorCode_HOST_ERROR_CODE_FAILED, Message: err.Error()}
	}
}

func hostError(e *HostError) *pluginv1.HostResponse {
	return &pluginv1.HostResponse{Kind: &pluginv1.HostResponse_Error{Error: &pluginv1.HostError{Code: e.Code, Message: e.Message}}}
}

// reply sends an answer, unless the call has ended.
func (h *hostCalls) reply(id uint64, res *pluginv1.HostResponse) {
	res.Id = id
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	// A failed send means the stream broke: the call's Recv says so.
	_ = h.send(&pluginv1.SessionRequest{Kind: &pluginv1.SessionRequest_HostResponse{HostResponse: res}})
}

// end cancels the requests still open and waits for them: nothing of the
// call is sent after it.
func (h *hostCalls) end() {
	h.mu.Lock()
	h.ended = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
}
