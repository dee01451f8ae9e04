package server

import (
	"context"
	"crypto/subtle"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// servicePrefix is the full method prefix of AgentService: only its methods
// need the bearer token; health checks and reflection stay open for probes
// and tools such as grpcurl.
const servicePrefix = "/agentcore.v1.AgentService/"

// guard checks the bearer token, logs each call and keeps secrets out of
// the errors it returns.
type guard struct {
	token      []byte
	secrets    *secrets
	log        hclog.Logger
	maxMessage int       // -max-message-bytes: no response is larger
	codec      utf8Codec // its notes of requests with invalid UTF-8
}

func (g *guard) authorize(ctx context.Context, method string) error {
	if len(g.token) == 0 || !strings.HasPrefix(method, servicePrefix) {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		scheme, tok, ok := strings.Cut(v, " ")
		if ok && strings.EqualFold(scheme, "bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), g.token) == 1 {
			return nil
		}
	}
	return failure(codes.Unauthenticated, ReasonUnauthenticated, "missing or wrong bearer token (metadata authorization: Bearer TOKEN)")
}

func (g *guard) finish(method string, start time.Time, err error) error {
	err = g.secrets.redactStatus(toStatus(err))
	if g.log.IsDebug() {
		g.log.Debug("call", "method", method, "code", status.Code(err).String(), "duration", time.Since(start))
	}
	return err
}

// Unary is the unary interceptor.
func (g *guard) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	bad := g.codec.take(req) // always: the note is forgotten whatever happens
	if err := g.authorize(ctx, info.FullMethod); err != nil {
		return nil, g.finish(info.FullMethod, start, err)
	}
	if bad != nil {
		return nil, g.finish(info.FullMethod, start, bad)
	}
	resp, err := handler(ctx, req)
	if m, ok := resp.(proto.Message); ok && err == nil && g.maxMessage > 0 {
		resp = fitMessage(m, g.maxMessage-messageRoom)
	}
	return resp, g.finish(info.FullMethod, start, err)
}

// Stream is the stream interceptor.
func (g *guard) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	if err := g.authorize(ss.Context(), info.FullMethod); err != nil {
		return g.finish(info.FullMethod, start, err)
	}
	return g.finish(info.FullMethod, start, handler(srv, checkedStream{ServerStream: ss, codec: g.codec}))
}

// checkedStream fails a received message that held invalid UTF-8.
type checkedStream struct {
	grpc.ServerStream
	codec utf8Codec
}

func (s checkedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return s.codec.take(m)
}
