package telemetry

import (
	"context"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// ServerOptions are the gRPC server options of telemetry: with tracing, a
// stats handler that makes a server span per RPC, continuing the client's
// trace from the W3C traceparent in the request metadata (health checks and
// reflection are not traced); always, interceptors that count open streams
// and the calls refused at a limit (an error whose ErrorInfo reason ends in
// _LIMIT). Put them before interceptors that may refuse a call, so that
// their refusals are counted too.
func (t *Telemetry) ServerOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(t.unary),
		grpc.ChainStreamInterceptor(t.stream),
	}
	if t.tracing {
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(t.tp),
			otelgrpc.WithPropagators(t.prop),
			otelgrpc.WithMeterProvider(noop.NewMeterProvider()), // metrics are Prometheus's here
			otelgrpc.WithFilter(traced),
		)))
	}
	return opts
}

// traced says which RPCs get a span: not health checks and reflection.
func traced(info *stats.RPCTagInfo) bool {
	m := info.FullMethodName
	return !strings.HasPrefix(m, "/grpc.health.") && !strings.HasPrefix(m, "/grpc.reflection.")
}

func (t *Telemetry) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	t.countLimit(err)
	return resp, err
}

func (t *Telemetry) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	t.metrics.streams.Inc()
	defer t.metrics.streams.Dec()
	err := handler(srv, ss)
	t.countLimit(err)
	return err
}

// countLimit counts err when it is a refusal at a limit: its ErrorInfo
// reason SESSION_LIMIT becomes limit "sessions", RUN_LIMIT "runs", any
// other NAME_LIMIT "name".
func (t *Telemetry) countLimit(err error) {
	if err == nil {
		return
	}
	st, ok := status.FromError(err)
	if !ok {
		return
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok {
			continue
		}
		if name, ok := strings.CutSuffix(info.GetReason(), "_LIMIT"); ok && name != "" {
			name = strings.ToLower(name)
			switch name {
			case "session", "run":
				name += "s"
			}
			t.LimitHit(name)
		}
	}
}
