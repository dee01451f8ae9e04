package tool

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceContext returns the W3C trace context of the span in ctx as the
// fields of ExecuteRequest.trace_context ("traceparent", "tracestate"), so
// that the plugin's own spans join the caller's trace; nil when ctx holds
// no span (the host is not tracing).
func traceContext(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	m := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, m)
	return m
}
