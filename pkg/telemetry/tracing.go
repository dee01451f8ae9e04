package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// newTracerProvider builds the SDK tracer provider the OTEL_* variables ask
// for, or returns nil when they ask for none (see the package doc).
func newTracerProvider(ctx context.Context, cfg Config) (*sdktrace.TracerProvider, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	switch exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exp {
	case "none":
		return nil, nil
	case "":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %q: %w (want otlp or none)", exp, errUnsupported)
	}
	protocol := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if protocol == "" {
		protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	var (
		exporter sdktrace.SpanExporter
		err      error
	)
	switch protocol {
	case "grpc":
		var opts []otlptracegrpc.Option
		if cfg.Headers != nil {
			opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		exporter, err = otlptracegrpc.New(ctx, opts...)
	case "", "http/protobuf":
		var opts []otlptracehttp.Option
		if cfg.Headers != nil {
			opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
		}
		exporter, err = otlptracehttp.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: %w (want grpc or http/protobuf)", protocol, errUnsupported)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
	}
	// Later detectors win: the environment over the defaults.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(Version())),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanProcessor(exporter)), sdktrace.WithResource(res)), nil
}

// spanProcessor is the span processor in front of exporter: the SDK's
// batch processor (OTEL_BSP_*), handed spans in bursts by a coalescer.
func spanProcessor(exporter sdktrace.SpanExporter) sdktrace.SpanProcessor {
	return newCoalescer(sdktrace.NewBatchSpanProcessor(exporter))
}
