package tool

import (
	"context"
	"os"
	"os/exec"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// withTraceContext returns ctx carrying the caller's span, read from a
// call's W3C trace context fields, as a remote span context: spans a tool
// starts from ctx with any OpenTelemetry tracer become its children.
func withTraceContext(ctx context.Context, fields map[string]string) context.Context {
	if len(fields) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(fields))
}

// TraceContext returns the W3C trace context of the span in ctx, the
// fields "traceparent" and (when set) "tracestate", or nil when ctx holds no
// span. In a handler, ctx holds the host's span of the call (execute_tool)
// when the host traces; a tool that started its own span from ctx gets that
// span's. Use it to pass the trace on by hand (an HTTP header, a message);
// a Go tool with an OpenTelemetry SDK needs nothing: it starts spans from
// the handler's ctx and they join the host's trace.
func TraceContext(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	m := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, m)
	return m
}

// traceEnv names the environment variables of the W3C fields, the
// OpenTelemetry convention for passing a trace context to a process.
var traceEnv = [...]struct{ field, env string }{{"traceparent", "TRACEPARENT"}, {"tracestate", "TRACESTATE"}}

// setTraceEnv puts ctx's trace context in cmd's environment, replacing the
// variables when the environment has them already. Without a trace
// context the environment is left as it is.
func setTraceEnv(ctx context.Context, cmd *exec.Cmd) {
	tc := TraceContext(ctx)
	if tc == nil {
		return
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+len(traceEnv))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name != traceEnv[0].env && name != traceEnv[1].env {
			out = append(out, kv)
		}
	}
	for _, f := range traceEnv {
		if v := tc[f.field]; v != "" {
			out = append(out, f.env+"="+v)
		}
	}
	cmd.Env = out
}
