// Package interceptor is the gRPC interceptor chain of AgentService and its
// wire codec. Each concern has its file:
//
//   - drain.go: the shutdown drain, first in the chain: once closed it
//     refuses every call but the health service's, and counts those
//     running so that a graceful stop can wait for them.
//   - auth.go: authentication; the caller's tenant goes into the context
//     the handlers get (auth.NewContext).
//   - audit.go: the audit line of each state-changing call.
//   - bounds.go: no response or event larger than -max-message-bytes.
//   - codec.go: invalid UTF-8 named by its field, server-held secrets kept
//     out of every message sent, frozen encodings.
//
// The guard (New) runs authentication, audit, the UTF-8 check, the bound
// and the mapping of errors to statuses (secrets kept out) in one
// interceptor, in that order, rather than as five chained ones: the audit
// line needs the tenant that authentication finds and the status the call
// ends with, and a call then crosses one wrapped stream, not five.
package interceptor

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/auth"
	"github.com/agentcore/agentcore/pkg/redact"
)

// Options configure the guard.
type Options struct {
	// Auth authenticates every AgentService call. Required.
	Auth *auth.Authenticator
	// ReflectionAuth makes reflection need a credential too.
	ReflectionAuth bool
	// Secrets are kept out of every response and error. Required.
	Secrets *redact.Secrets
	// Log gets a debug line per call; Audit the audit lines. Required.
	Log, Audit hclog.Logger
	// MaxMessageBytes bounds every unary response (-max-message-bytes);
	// 0: no bound.
	MaxMessageBytes int
	// Status maps the error a handler returns to the status the call ends
	// with (statuses pass unchanged). Required.
	Status func(error) error
	// Frozen holds the encodings the codec sends as they are; nil: none.
	Frozen *Frozen
}

// New returns the server options of the guard: its unary and stream
// interceptors and the codec.
func New(o Options) []grpc.ServerOption {
	g := &guard{opts: o, codec: NewCodec(o.Secrets, o.Frozen)}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(g.unary), grpc.ChainStreamInterceptor(g.stream), grpc.ForceServerCodecV2(g.codec)}
}

// guard authenticates each call and puts its tenant in the context, writes
// the audit log, and keeps server-held secrets out of every response and
// error.
type guard struct {
	opts  Options
	codec Codec // its notes of requests with invalid UTF-8
}

// finish maps a call's error to its status, secrets kept out, and writes
// the call's debug line.
func (g *guard) finish(method string, start time.Time, err error) error {
	err = g.opts.Secrets.RedactStatus(g.opts.Status(err))
	if g.opts.Log.IsDebug() {
		g.opts.Log.Debug("call", "method", method, "code", status.Code(err).String(), "duration", time.Since(start))
	}
	return err
}

func (g *guard) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
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
		// Server-held secrets are kept out by the codec (Codec.Marshal).
		if m, ok := resp.(proto.Message); ok && err == nil && g.opts.MaxMessageBytes > 0 {
			resp = FitMessage(m, g.opts.MaxMessageBytes-MessageRoom)
		}
	}
	err = g.finish(info.FullMethod, start, err)
	rec.done("", err)
	return resp, err
}

func (g *guard) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
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

// RecvMsg also fails a message that held invalid UTF-8 (see Codec).
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
