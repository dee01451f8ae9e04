// Package gateway serves AgentService over HTTP/JSON, with server-sent
// events for the streams, its OpenAPI document and a web console, for the
// callers that have no gRPC: a browser, a shell script with curl, a
// serverless function.
//
// Every route is a call to the gRPC service over a connection the caller
// gives (agent-server gives an in-process connection to its own gRPC
// server), so authentication, limits, validation and logging are the gRPC
// service's own: the Authorization header travels as the call's metadata.
//
//	POST   /v1/agents                          CreateAgent
//	GET    /v1/agents                          ListAgents
//	GET    /v1/agents/{agent_id}               GetAgent
//	PATCH  /v1/agents/{agent_id}               UpdateAgent (body: the agent; ?updateMask=config.model)
//	DELETE /v1/agents/{agent_id}               DeleteAgent
//	POST   /v1/agents/{agent_id}:send          Send: a StartRun body; the events as server-sent events
//	POST   /v1/agents/{agent_id}:stop          Stop
//	POST   /v1/agents/{agent_id}:compact       Compact (server-sent events)
//	GET    /v1/agents/{agent_id}/history       GetHistory
//	PUT    /v1/agents/{agent_id}/history       SetHistory
//	POST   /v1/agents/{agent_id}:previewContext PreviewContext
//	GET    /v1/tools                           ListTools
//	POST   /v1/tools/{name}:execute            ExecuteTool (server-sent events)
//	POST   /v1/tools:reload                    ReloadTools
//	GET    /v1/runs                            ListRuns (also /v1/agents/{agent_id}/runs)
//	GET    /v1/runs/{run_id}                   GetRun
//	GET    /v1/runs/{run_id}:attach            Attach (server-sent events; ?afterSeq=N or Last-Event-ID)
//	GET    /v1/agents/{agent_id}:attach        Attach to the agent's latest run
//	POST   /v1/runs/{run_id}/permissions/{tool_call_id}  RespondPermission ({"allow": true} or a reason)
//	POST   /v1/runs/{run_id}/elicitations/{elicitation_id}  RespondElicitation ({"action": …, "content": {…}})
//	GET    /healthz                            the gRPC health service
//	GET    /openapi.json                       the OpenAPI document of all of the above
//	GET    /                                   the web console
//
// The unary routes are grpc-gateway's, generated from the google.api.http
// annotations of agent_service.proto. The streaming routes are written here:
// each answers with text/event-stream, one event per message, its data the
// message as JSON on one line and, for run events, its id the event's seq.
// A stream that ends in an error sends a last event named "error" whose data
// is the google.rpc.Status. Attach takes the Last-Event-ID of a reconnecting
// EventSource as after_seq, and answers 204 when the run has nothing left to
// send (an EventSource then stops reconnecting). An error found before the
// first message (a bad
// request, an unknown agent) is a plain HTTP error instead: every error body
// is a google.rpc.Status, with the gRPC service's ErrorInfo reason and
// BadRequest field violations, and the HTTP status mapped from its code.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/connect"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// ClientCertMetadata is the call metadata that carries the HTTP client's
// verified TLS certificate (DER) to the gRPC server, which, on its
// in-process link only, takes it as the call's own (agent-server's
// authentication maps certificates to tenants). An HTTP client cannot set
// it: no header becomes this key.
const ClientCertMetadata = "x-agentcore-client-cert-bin"

// Options configure a gateway.
type Options struct {
	// Conn reaches AgentService and the gRPC health service. Required.
	Conn grpc.ClientConnInterface
	// CORSOrigins are the origins whose pages may call the API ("*": any);
	// empty: no cross-origin call is allowed.
	CORSOrigins []string
	// MaxBodyBytes bounds a request body; 0: no bound.
	MaxBodyBytes int64
	// Callback serves the OAuth callback route (connect.CallbackPath),
	// which an authorization server sends people's browsers to: no token,
	// no CORS. Nil: no such route.
	Callback http.Handler
}

// gateway is the HTTP handler: the API routes, the OpenAPI document and the console.
type gateway struct {
	api     *runtime.ServeMux
	client  agentv1.AgentServiceClient
	json    *runtime.JSONPb
	cors    cors
	maxBody int64
	console http.Handler
	// callback serves connect.CallbackPath; nil: none.
	callback http.Handler
}

// New returns the HTTP handler of the gateway and the console.
func New(opts Options) (http.Handler, error) {
	if opts.Conn == nil {
		return nil, errors.New("gateway: Options.Conn is required")
	}
	c, err := newCORS(opts.CORSOrigins)
	if err != nil {
		return nil, err
	}
	g := &gateway{
		client:   agentv1.NewAgentServiceClient(opts.Conn),
		json:     jsonMarshaler(),
		cors:     c,
		maxBody:  opts.MaxBodyBytes,
		console:  consoleHandler(),
		callback: opts.Callback,
	}
	g.api = runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, g.json),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithMetadata(clientCert),
		runtime.WithErrorHandler(g.errorHandler),
		runtime.WithRoutingErrorHandler(g.routingError),
		runtime.WithHealthzEndpoint(healthpb.NewHealthClient(opts.Conn)),
		runtime.WithDisableHTTPMethodOverride(),
	)
	if err := agentv1.RegisterAgentServiceHandlerClient(context.Background(), g.api, g.client); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	// Registered after the generated routes, these win over grpc-gateway's
	// own streaming handlers (newline-delimited JSON) for the same paths.
	for _, r := range []struct {
		method, path string
		h            runtime.HandlerFunc
	}{
		{http.MethodPost, sendPath, g.send},
		{http.MethodPost, compactPath, g.compact},
		{http.MethodPost, executePath, g.execute},
		{http.MethodGet, attachPath, g.attach},
		{http.MethodGet, attachAgentPath, g.attach},
	} {
		if err := g.api.HandlePath(r.method, r.path, r.h); err != nil {
			return nil, fmt.Errorf("gateway: route %s %s: %w", r.method, r.path, err)
		}
	}
	return g, nil
}

// jsonMarshaler is the JSON of every body: proto3 JSON with lowerCamelCase
// names (snake_case accepted on input), zero values and empty lists written
// out, and unknown fields rejected, so that a misspelt field is an error
// rather than silently ignored.
func jsonMarshaler() *runtime.JSONPb {
	return &runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{EmitDefaultValues: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}
}

// incomingHeader picks the HTTP headers that become call metadata besides
// Authorization (which always does): grpc-gateway's defaults, the W3C
// trace context and the user a call acts for (x-agentcore-user).
func incomingHeader(key string) (string, bool) {
	switch strings.ToLower(key) {
	case "traceparent", "tracestate", auth.UserHeader:
		return strings.ToLower(key), true
	}
	return runtime.DefaultHeaderMatcher(key)
}

// clientCert passes the request's verified client certificate on.
func clientCert(_ context.Context, r *http.Request) metadata.MD {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil
	}
	return metadata.Pairs(ClientCertMetadata, string(r.TLS.VerifiedChains[0][0].Raw))
}

// ServeHTTP routes a request to the API, the OpenAPI document or the console.
func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Path == connect.CallbackPath && g.callback != nil {
		g.callback.ServeHTTP(w, r)
		return
	}
	if g.cors.handle(w, r, func(origin string) {
		g.writeError(w, status.Newf(codes.PermissionDenied, "a page of origin %q may not call this API (see -http-cors-origin)", origin),
			http.StatusForbidden, agentv1.ErrorReason_ERROR_REASON_ORIGIN_NOT_ALLOWED)
	}) {
		return
	}
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/v1/") || p == "/healthz":
		if g.maxBody > 0 && r.Body != nil {
			if r.ContentLength > g.maxBody {
				g.writeError(w, status.New(codes.InvalidArgument, fmt.Sprintf("the body has %d bytes, more than the %d this server accepts", r.ContentLength, g.maxBody)),
					http.StatusRequestEntityTooLarge, agentv1.ErrorReason_ERROR_REASON_BODY_TOO_LARGE)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
		}
		g.api.ServeHTTP(w, r)
	case p == "/openapi.json":
		serveOpenAPI(w, r)
	default:
		g.console.ServeHTTP(w, r)
	}
}

// errorHandler writes a call's error as its google.rpc.Status.
func (g *gateway) errorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, err error) {
	code := 0
	var hs *runtime.HTTPStatusError
	if errors.As(err, &hs) {
		code, err = hs.HTTPStatus, hs.Err
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) || strings.Contains(err.Error(), "http: request body too large") {
		g.writeError(w, status.New(codes.InvalidArgument, fmt.Sprintf("the body is larger than the %d bytes this server accepts", g.maxBody)),
			http.StatusRequestEntityTooLarge, agentv1.ErrorReason_ERROR_REASON_BODY_TOO_LARGE)
		return
	}
	g.writeError(w, status.Convert(err), code, agentv1.ErrorReason_ERROR_REASON_UNSPECIFIED)
}

// routingError reports a path or method no route has.
func (g *gateway) routingError(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	switch httpStatus {
	case http.StatusMethodNotAllowed:
		g.writeError(w, status.Newf(codes.Unimplemented, "%s is not allowed on %s", r.Method, r.URL.Path), httpStatus, agentv1.ErrorReason_ERROR_REASON_METHOD_NOT_ALLOWED)
	case http.StatusNotFound:
		g.writeError(w, status.Newf(codes.NotFound, "no route for %s %s (see /openapi.json)", r.Method, r.URL.Path), httpStatus, agentv1.ErrorReason_ERROR_REASON_ROUTE_NOT_FOUND)
	default:
		g.writeError(w, status.New(codes.InvalidArgument, http.StatusText(httpStatus)), httpStatus, agentv1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	}
}

// writeError writes st as the body with the HTTP status mapped from its
// code (or httpStatus when not 0).
func (g *gateway) writeError(w http.ResponseWriter, st *status.Status, httpStatus int, reason agentv1.ErrorReason) {
	if httpStatus == 0 {
		httpStatus = runtime.HTTPStatusFromCode(st.Code())
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	if st.Code() == codes.Unauthenticated {
		h.Set("WWW-Authenticate", `Bearer realm="agentcore"`)
	}
	w.WriteHeader(httpStatus)
	_, _ = w.Write(g.statusJSON(st, reason))
}

// statusJSON is st as JSON. A status without details (the gateway's own: a
// body that is not JSON, an unknown route) gets an ErrorInfo with reason
// (when unspecified: the code's name, INVALID_ARGUMENT, UNAVAILABLE…), so
// that every error names one.
func (g *gateway) statusJSON(st *status.Status, reason agentv1.ErrorReason) []byte {
	if len(st.Details()) == 0 {
		if reason == agentv1.ErrorReason_ERROR_REASON_UNSPECIFIED {
			reason = codeReason(st.Code())
		}
		if d, err := st.WithDetails(&errdetails.ErrorInfo{Domain: agentv1.ErrorDomain, Reason: reason.Wire()}); err == nil {
			st = d
		}
	}
	body, err := g.json.Marshal(st.Proto())
	if err != nil {
		return []byte(`{"code":13,"message":"the error could not be written as JSON"}`)
	}
	return body
}

// decodeBody reads a request body into msg; an empty body leaves msg as it is.
func (g *gateway) decodeBody(r *http.Request, msg any) error {
	if r.Body == nil {
		return nil
	}
	if err := g.json.NewDecoder(r.Body).Decode(msg); err != nil && !errors.Is(err, io.EOF) {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return err
		}
		return status.Errorf(codes.InvalidArgument, "the body is not a valid request: %v", err)
	}
	return nil
}

// codeReason is the reason of a status that has none: the one named as its
// code in upper snake case (INVALID_ARGUMENT, DEADLINE_EXCEEDED), which the
// enum has for every code but OK.
func codeReason(c codes.Code) agentv1.ErrorReason {
	if c == codes.Canceled {
		return agentv1.ErrorReason_ERROR_REASON_CANCELLED
	}
	var b strings.Builder
	prev := rune(0)
	for _, r := range c.String() {
		if r >= 'A' && r <= 'Z' && prev >= 'a' && prev <= 'z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
		prev = r
	}
	return agentv1.ErrorReasonOf(strings.ToUpper(b.String()))
}
