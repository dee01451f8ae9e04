package server

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/redact"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// servicePrefix is the full method prefix of AgentService: only its methods
// need a credential; health checks stay open for probes, and reflection
// unless it is set to auth.
const servicePrefix = "/agentcore.v1.AgentService/"

// reflectionPrefixes are the methods of gRPC server reflection (v1 and v1alpha).
var reflectionPrefixes = []string{"/grpc.reflection.v1.ServerReflection/", "/grpc.reflection.v1alpha.ServerReflection/"}

// audited are the state-changing methods, each of which writes an audit
// line: tenant, agent, run, outcome and duration, never a secret or content.
var audited = map[string]bool{
	"CreateAgent": true, "UpdateAgent": true, "DeleteAgent": true, "SetHistory": true,
	"Send": true, "Stop": true, "Compact": true, "ExecuteTool": true, "ReloadTools": true,
}

// guard authenticates each call and puts its tenant in the context, writes
// the audit log, and keeps server-held secrets out of every response and
// error.
type guard struct {
	auth *auth.Authenticator
	// reflectionAuth makes reflection need a credential too.
	reflectionAuth bool
	secrets        *redact.Secrets
	log            hclog.Logger
	audit          hclog.Logger
	maxMessage     int       // -max-message-bytes: no response is larger
	codec          utf8Codec // its notes of requests with invalid UTF-8
}

// authorize returns the context handlers get: with the caller's tenant for
// every AgentService method (and reflection when it needs a credential).
func (g *guard) authorize(ctx context.Context, method string) (context.Context, error) {
	if !strings.HasPrefix(method, servicePrefix) && !(g.reflectionAuth && isReflection(method)) {
		return ctx, nil
	}
	t, err := g.auth.Authenticate(ctx)
	if err != nil {
		return ctx, failure(codes.Unauthenticated, agentv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED, "%v", err)
	}
	return auth.NewContext(ctx, t), nil
}

func isReflection(method string) bool {
	for _, p := range reflectionPrefixes {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

func (g *guard) finish(method string, start time.Time, err error) error {
	err = g.secrets.RedactStatus(toStatus(err))
	if g.log.IsDebug() {
		g.log.Debug("call", "method", method, "code", status.Code(err).String(), "duration", time.Since(start))
	}
	return err
}

// Unary is the unary interceptor.
func (g *guard) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	rec := g.record(ctx, info.FullMethod, start)
	bad := g.codec.take(req) // always: the note is forgotten whatever happens
	ctx, err := g.authorize(ctx, info.FullMethod)
	if err == nil {
		err = bad
	}
	var resp any
	if err == nil {
		rec.tenantFrom(ctx)
		rec.request(req)
		resp, err = handler(ctx, req)
		rec.response(resp)
		// Server-held secrets are kept out by the codec (utf8Codec.Marshal).
		if m, ok := resp.(proto.Message); ok && err == nil && g.maxMessage > 0 {
			resp = fitMessage(m, g.maxMessage-messageRoom)
		}
	}
	err = g.finish(info.FullMethod, start, err)
	rec.done("", err)
	return resp, err
}

// Stream is the stream interceptor.
func (g *guard) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	rec := g.record(ss.Context(), info.FullMethod, start)
	ctx, err := g.authorize(ss.Context(), info.FullMethod)
	if err == nil {
		rec.tenantFrom(ctx)
		err = handler(srv, &guardedStream{ServerStream: ss, ctx: ctx, g: g, rec: rec})
	}
	err = g.finish(info.FullMethod, start, err)
	phase := ""
	if rec != nil && rec.method == "Send" {
		phase = "ended"
	}
	rec.done(phase, err)
	return err
}

// guardedStream carries the tenant in its context and notes what the audit
// line needs (the codec redacts every message it sends).
type guardedStream struct {
	grpc.ServerStream
	ctx context.Context
	g   *guard
	rec *auditRecord // nil for calls that are not audited
}

func (s *guardedStream) Context() context.Context { return s.ctx }

// RecvMsg also fails a message that held invalid UTF-8 (see utf8Codec).
func (s *guardedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		err = s.g.codec.take(m)
	}
	if err == nil {
		s.rec.request(m)
	}
	return err
}

func (s *guardedStream) SendMsg(m any) error {
	s.rec.response(m)
	return s.ServerStream.SendMsg(m) // the codec keeps server-held secrets out
}

// auditRecord collects one audited call's line. Its methods do nothing on
// a nil record.
type auditRecord struct {
	log    hclog.Logger
	method string
	start  time.Time
	peer   string

	mu      sync.Mutex
	tenant  string
	agent   string
	run     string
	tool    string
	started bool // a send's "started" line is written
}

// record starts the audit record of a call, or returns nil when the method is not audited.
func (g *guard) record(ctx context.Context, fullMethod string, start time.Time) *auditRecord {
	name, ok := strings.CutPrefix(fullMethod, servicePrefix)
	if !ok || !audited[name] {
		return nil
	}
	r := &auditRecord{log: g.audit, method: name, start: start, tenant: "-"}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.peer = p.Addr.String()
	}
	return r
}

func (r *auditRecord) tenantFrom(ctx context.Context) {
	if r == nil {
		return
	}
	if t, ok := auth.FromContext(ctx); ok {
		r.mu.Lock()
		r.tenant = t.Name()
		r.mu.Unlock()
	}
}

// request notes the agent (and tool) a request names.
func (r *auditRecord) request(m any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agent != "" || r.tool != "" {
		return
	}
	switch req := m.(type) {
	case *agentv1.SendRequest:
		r.agent = req.GetStart().GetAgentId()
	case *agentv1.UpdateAgentRequest:
		r.agent = req.GetAgent().GetId()
	case *agentv1.CreateAgentRequest:
		r.agent = req.GetAgentId()
		if r.agent == "" {
			r.agent = req.GetAgent().GetId()
		}
	case *agentv1.ExecuteToolRequest:
		r.tool = req.GetName()
	case interface{ GetAgentId() string }:
		r.agent = req.GetAgentId()
	}
}

// response notes the agent a CreateAgent made and the run a send started,
// writing the send's "started" line.
func (r *auditRecord) response(m any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch resp := m.(type) {
	case *agentv1.CreateAgentResponse:
		if id := resp.GetAgent().GetId(); id != "" {
			r.agent = id
		}
	case *agentv1.SendResponse:
		if r.started {
			return
		}
		if resp.GetEvent().GetRunId() != "" {
			r.run = resp.GetEvent().GetRunId()
			r.started = true
			r.log.Info("audit", "call", r.method, "phase", "started", "tenant", r.tenant, "agent", r.agent, "run", r.run, "peer", r.peer)
		}
	}
}

// auditArgs is the most key/value items a call's line holds.
const auditArgs = 20

// done writes the call's line with its outcome.
func (r *auditRecord) done(phase string, err error) {
	if r == nil {
		return
	}
	code, reason := codes.OK, ""
	if err != nil { // a call that succeeded needs no status made
		st := status.Convert(err)
		code = st.Code()
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				reason = info.GetReason()
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	args := make([]any, 0, auditArgs) // one allocation, not one per growth
	args = append(args, "call", r.method)
	if phase != "" {
		args = append(args, "phase", phase)
	}
	args = append(args, "tenant", r.tenant, "agent", r.agent, "run", r.run)
	if r.tool != "" {
		args = append(args, "tool", r.tool)
	}
	args = append(args, "outcome", code.String())
	if reason != "" {
		args = append(args, "reason", reason)
	}
	args = append(args, "duration", time.Since(r.start), "peer", r.peer)
	r.log.Info("audit", args...)
}

// interceptors returns the guard as unary and stream interceptors.
func (g *guard) interceptors() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(g.Unary), grpc.ChainStreamInterceptor(g.Stream), grpc.ForceServerCodecV2(g.codec)}
}
