package provider

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// injectTrace sets the W3C trace context of the span in ctx (traceparent,
// tracestate) on a model request's header, replacing any the config set, so
// that a gateway or provider that traces joins the agent's trace. Without a
// span in ctx (the server is not tracing) the header is left as it is.
func injectTrace(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}
