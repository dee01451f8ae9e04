// Package a2a serves agentcore's agents over the A2A protocol (JSON-RPC
// over HTTP, github.com/a2aproject/a2a-go), as a front of its own: every
// request becomes AgentService calls on a gRPC connection (agent-server's
// in-process link), so the interceptors (authentication and tenants, limits,
// the audit log) apply exactly as to a gRPC client.
//
// Each agent of the caller's tenant is an A2A agent at /a2a/{agent_id},
// with its card at /a2a/{agent_id}/.well-known/agent-card.json (name, a
// description, a skill per tool it may use, streaming, push notifications
// when the server sends them, the server's security schemes). An A2A
// context is the agent (contextId = agent id) and a task is one of its runs
// (taskId = run id):
//
//   - message/send and message/stream start a run with the message's
//     parts as input (on_disconnect continue: the run outlives the request);
//     a message naming a task whose run waits for a permission answers it
//     (a data part {"allow": true|false, "reason", "toolCallId"} or the text
//     allow/yes or deny/no). A new task after a finished one continues the
//     conversation: the agent's history holds the earlier turns.
//   - task states come from the run: working while it runs, input-required
//     while a tool call waits for permission, completed, failed, canceled.
//   - tasks/get reads the run; tasks/cancel stops it (its tools are killed);
//     tasks/resubscribe follows it again: the task as it is now, then the
//     events after it, or, given metadata {"agentcore/afterSeq": N} (every
//     streamed event carries its "agentcore/seq"), the events after seq N.
//   - the result is the task's artifacts: "result" (the final text, and the
//     structured output as data when the agent has an output format) and
//     "files" (the files its tools returned).
//
// Message metadata may set the run's "agentcore/permissionMode" (allow_all,
// ask_all, ask_listed) with "agentcore/askTools", and its
// "agentcore/busyPolicy" (reject, the default, queue or replace).
package a2a

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/agentcore/agentcore/pkg/gateway"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// PathPrefix is where the agents are served: PathPrefix + agent id is an
// agent's JSON-RPC endpoint.
const PathPrefix = "/a2a/"

// Options configure a Handler.
type Options struct {
	// Conn reaches AgentService. Required.
	Conn grpc.ClientConnInterface
	// Authenticate, if set, checks a request before anything is served
	// (the bearer token, a client certificate); an error is answered 401.
	// Nil: the server needs no token.
	Authenticate func(r *http.Request) error
	// BearerAuth and MutualTLS say which security schemes the cards name.
	BearerAuth, MutualTLS bool
	// Version is the agents' version on their cards.
	Version string
	// Push, if set, delivers push notifications; nil: the cards offer none.
	Push Pusher
	// MaxBodyBytes bounds a request body; 0: no bound.
	MaxBodyBytes int64
	// Logger receives request errors at debug level. Default: none.
	Logger hclog.Logger
}

// Handler is the A2A HTTP handler. Close ends what it runs in the
// background (push notification watchers).
type Handler struct {
	opts   Options
	client agentv1.AgentServiceClient
	mux    *http.ServeMux

	// ctx ends the watchers; wg counts them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	push   *pushConfigs
}

// NewHandler returns the A2A handler of the agents that Conn serves.
func NewHandler(opts Options) (*Handler, error) {
	if opts.Conn == nil {
		return nil, errors.New("a2a: Options.Conn is required")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{opts: opts, client: agentv1.NewAgentServiceClient(opts.Conn), mux: http.NewServeMux(),
		ctx: ctx, cancel: cancel, push: newPushConfigs()}
	h.mux.HandleFunc("GET "+PathPrefix+"{agent}/.well-known/agent-card.json", h.serveCard)
	h.mux.HandleFunc("GET "+PathPrefix+"{agent}", h.serveCard)
	h.mux.HandleFunc("POST "+PathPrefix+"{agent}", h.serveRPC)
	return h, nil
}

// Close stops the push notification watchers and waits for them.
func (h *Handler) Close() {
	h.cancel()
	h.wg.Wait()
}

// ServeHTTP authenticates the request and routes it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if h.opts.Authenticate != nil {
		if err := h.opts.Authenticate(r); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentcore"`)
			http.Error(w, "unauthenticated: "+err.Error(), http.StatusUnauthorized)
			return
		}
	}
	if h.opts.MaxBodyBytes > 0 && r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	}
	h.mux.ServeHTTP(w, r)
}

// serveRPC serves one JSON-RPC request on an agent.
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request) {
	ctx := callContext(r)
	rh := &requestHandler{h: h, agentID: r.PathValue("agent"), md: outgoing(r)}
	a2asrv.NewJSONRPCHandler(rh).ServeHTTP(w, r.WithContext(ctx))
}

// callContext is the context of a request's calls: its own, with the
// metadata the in-process link takes as the HTTP client's.
func callContext(r *http.Request) context.Context {
	return metadata.NewOutgoingContext(r.Context(), outgoing(r))
}

// outgoing is the call metadata of a request: its bearer token, its
// client's address and verified certificate (as pkg/gateway passes them),
// and the W3C trace context.
func outgoing(r *http.Request) metadata.MD {
	md := metadata.MD{}
	for _, v := range r.Header.Values("Authorization") {
		md.Append("authorization", v)
	}
	for _, k := range []string{"traceparent", "tracestate"} {
		if v := r.Header.Get(k); v != "" {
			md.Set(k, v)
		}
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		md.Set("x-forwarded-for", host)
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		md.Set(gateway.ClientCertMetadata, string(r.TLS.VerifiedChains[0][0].Raw))
	}
	return md
}

// endpoint is the absolute URL of an agent's JSON-RPC endpoint as the
// request reached it.
func endpoint(r *http.Request, agentID string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + PathPrefix + agentID
}

// validAgentID reports whether id may be an agent's id ([A-Za-z0-9._-]{1,128}).
func validAgentID(id string) bool {
	return id != "" && len(id) <= 128 && strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}
