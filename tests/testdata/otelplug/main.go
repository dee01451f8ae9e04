// Command otelplug is the end-to-end tests' plugin for telemetry. Its
// traced tool makes a span of its own with its own OpenTelemetry SDK, as a
// Go tool author would: exported over OTLP to the endpoint it inherits
// from agent-server's environment, started from the handler's context so
// that it joins the host's trace under execute_tool. crash dies, hang
// blocks until its call is stopped, slow outlasts its timeout, hog grows
// past its memory limit.
package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcore/agentcore/sdk/tool"
)

type empty struct{}

func main() {
	var tracer trace.Tracer
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
		exp, err := otlptracegrpc.New(context.Background())
		if err != nil {
			panic(err)
		}
		// A syncer exports each span as it ends: before the call's result.
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
			sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("otelplug"))))
		tracer = tp.Tracer("otelplug")
	}
	tool.Serve(
		tool.New("traced", "Does traced work and reports the TRACEPARENT its command saw.", func(ctx context.Context, _ empty, _ tool.Emit) (any, error) {
			if tracer == nil {
				return nil, errors.New("no OTLP endpoint in the environment")
			}
			ctx, span := tracer.Start(ctx, "plugin.work")
			defer span.End()
			var out bytes.Buffer
			cmd := exec.Command("sh", "-c", `printf %s "$TRACEPARENT"`)
			cmd.Stdout = &out
			if err := tool.Run(ctx, cmd); err != nil {
				return nil, err
			}
			return map[string]string{"traceparent": out.String(), "span": span.SpanContext().SpanID().String()}, nil
		}),
		tool.New("crash", "Dies.", func(context.Context, empty, tool.Emit) (any, error) {
			os.Exit(3)
			return nil, nil
		}),
		tool.New("hang", "Says it runs, then blocks until the call is stopped.", func(ctx context.Context, _ empty, emit tool.Emit) (any, error) {
			emit("hanging")
			<-ctx.Done()
			return nil, ctx.Err()
		}),
		tool.New("slow", "Blocks past its timeout.", func(ctx context.Context, _ empty, _ tool.Emit) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, tool.Timeout(300*time.Millisecond)),
		tool.New("hog", "Takes memory until it is killed.", func(ctx context.Context, _ empty, emit tool.Emit) (any, error) {
			var held [][]byte
			for ctx.Err() == nil {
				b := make([]byte, 8<<20)
				for i := range b {
					b[i] = byte(i) // touched: resident, charged to the call
				}
				held = append(held, b)
				emit("holding another 8 MiB")
			}
			return len(held), ctx.Err()
		}, tool.WithLimits(tool.Limits{MemoryBytes: 64 << 20})),
	)
}
