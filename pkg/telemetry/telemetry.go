// Package telemetry is agent-server's observability: OpenTelemetry traces on
// the GenAI semantic conventions, Prometheus metrics, and the one log line
// per run. It is the only package that knows the OpenTelemetry SDK, its
// exporters and the Prometheus client; the engine below it knows only two
// small interfaces it calls at the edges of its work.
//
// # How it hooks in
//
// pkg/agent calls an [agent.Observer] when a run starts and ends, around
// each model request (retries included) and each tool call, and when a
// permission request is answered. [Telemetry] implements it: it opens and
// closes spans, moves metrics and logs. The Started methods return the
// context the work runs under, so the span travels with it: pkg/llm sends
// the model request's span as a W3C traceparent header, pkg/tool puts the
// tool call's span in the plugin call (ExecuteRequest.trace_context), where
// sdk/tool hands it to the tool's handler and to the commands it runs
// (TRACEPARENT). pkg/tool calls a [tool.ProcessObserver] when plugin
// processes start, are reused, killed and end. pkg/server adds
// [Telemetry.ServerOptions] to its gRPC server: RPC spans (continuing a
// client's traceparent from the request metadata) and stream counts.
//
// Without this package (a Go program embedding pkg/agent) the engine uses
// agent.NopObserver and pays nothing.
//
// # The span tree
//
//	agentcore.v1.AgentService/Send           (server, from the client's traceparent)
//	└─ invoke_agent {agent id}               (one per run)
//	   ├─ chat {model}                       (one per model request; retries are events)
//	   ├─ execute_tool {tool}                (one per tool call)
//	   │  ├─ chat {model}                    (a sampling request of the call: agentcore.sampling = true)
//	   │  └─ the plugin's own spans          (a Go tool's, started from the handler's ctx)
//	   ├─ chat {compaction model}            (agentcore.compaction = true)
//	   └─ chat {model} …
//
// Message content (system prompt, messages, tool arguments and results)
// goes into spans only when Config.TraceContent is set (-trace-content).
//
// # Turning it on
//
// Traces follow the standard OpenTelemetry environment variables and are off
// unless OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_TRACES_EXPORTER is set (OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none keep them off). OTEL_EXPORTER_OTLP_PROTOCOL (or
// its _TRACES_ form) picks grpc or http/protobuf (the default); the
// exporters read the endpoint, headers, TLS and timeouts; the SDK reads
// OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES. Ended spans reach the SDK's batch processor in
// bursts, at the end of the outermost span or within 100 ms (see
// coalescer), so that a step does not wake its goroutine twice. Metrics live in a registry of their own (never
// the global one) that [Telemetry.Handler] serves as /metrics; with tracing
// and metrics both off a run costs a handful of interface calls.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/tool"
)

// instrumentation names the tracer of this package.
const instrumentation = "github.com/agentcore/agentcore/pkg/telemetry"

// Config configures Telemetry.
type Config struct {
	// Getenv reads the OTEL_* variables that decide whether to trace and with
	// which exporter (nil: no variable is set, tracing stays off). The SDK
	// and exporters read their other variables from the process environment.
	Getenv func(string) string
	// Headers, when set, are sent with every span export instead of those
	// of OTEL_EXPORTER_OTLP_TRACES_HEADERS or OTEL_EXPORTER_OTLP_HEADERS:
	// agent-server keeps those variables (backends' API keys) out of its
	// environment and passes their values here.
	Headers map[string]string
	// ServiceName is service.name unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise. Default "agent-server".
	ServiceName string
	// TraceContent puts message content in spans: the system prompt and
	// messages of model requests, their answers, tool arguments and results.
	TraceContent bool
	// Logger receives the per-run line (INFO), model failures (WARN) and
	// tool calls (DEBUG); nil discards.
	Logger hclog.Logger
	// Redact removes secrets from the text that goes into spans (error
	// messages, content); nil leaves text as it is.
	Redact func(string) string
	// TracerProvider, when set, is used instead of one built from the
	// environment (tests, programs that set up OpenTelemetry themselves).
	// Telemetry does not shut it down.
	TracerProvider trace.TracerProvider
}

// Telemetry holds the tracer and the metrics of one server. It implements
// agent.Observer and tool.ProcessObserver; it is safe for concurrent use.
type Telemetry struct {
	log     hclog.Logger
	content bool
	redact  func(string) string

	tracing bool // spans are made; false keeps the hot path free of them
	tp      trace.TracerProvider
	tracer  trace.Tracer
	// The start options of chat and execute_tool spans, made once: the
	// span starts now (the engine takes its Start just before calling),
	// its attributes come at its end.
	clientStart, internalStart []trace.SpanStartOption
	// attrs holds the slices a span's end attributes are built in, when
	// the tracer provider is the SDK's: its SetAttributes copies them into
	// the span's own slice, so that the caller's is garbage at once. Other
	// providers get a new slice each time (nothing says they copy).
	attrs     sync.Pool // *[]attribute.KeyValue
	poolAttrs bool
	prop      propagation.TextMapPropagator
	shutdown  func(context.Context) error // the SDK provider's, when built here

	reg     *prometheus.Registry
	metrics *metrics

	// strings keeps span names and finish-reason attributes made once
	// (a few hundred at most: past that they are made each time).
	strings *spanStrings
}

var (
	_ agent.Observer       = (*Telemetry)(nil)
	_ tool.ProcessObserver = (*Telemetry)(nil)
)

// New sets up tracing from the environment (see the package doc) and the
// metrics registry. Call Shutdown to flush the spans still buffered.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "agent-server"
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	t := &Telemetry{
		log:      cfg.Logger,
		content:  cfg.TraceContent,
		redact:   cfg.Redact,
		prop:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		shutdown: func(context.Context) error { return nil },
		strings:  newSpanStrings(),
	}
	switch {
	case cfg.TracerProvider != nil:
		t.tp, t.tracing = cfg.TracerProvider, true
		_, t.poolAttrs = cfg.TracerProvider.(*sdktrace.TracerProvider)
	default:
		tp, err := newTracerProvider(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if tp != nil {
			t.tp, t.tracing, t.shutdown, t.poolAttrs = tp, true, tp.Shutdown, true
		}
	}
	if !t.tracing {
		t.tp = noop.NewTracerProvider()
	}
	t.tracer = t.tp.Tracer(instrumentation, trace.WithInstrumentationVersion(Version()))
	t.clientStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	t.internalStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	t.reg = prometheus.NewRegistry()
	t.metrics = newMetrics(t.reg)
	return t, nil
}

// Tracing reports whether spans are recorded and exported.
func (t *Telemetry) Tracing() bool { return t.tracing }

// TracerProvider returns the provider of the server's spans (a no-op one
// when tracing is off), for spans made outside the engine (webhooks).
func (t *Telemetry) TracerProvider() trace.TracerProvider { return t.tp }

// Registry returns the Prometheus registry holding every metric.
func (t *Telemetry) Registry() *prometheus.Registry { return t.reg }

// Shutdown flushes the spans still buffered and stops the exporter. It
// returns ctx's error when the flush does not finish in time.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if err := t.shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: flushing spans: %w", err)
	}
	return nil
}

// ErrorHandler returns an OpenTelemetry error handler that logs to log at
// warn level, for otel.SetErrorHandler in a main package: export failures
// then reach the server's log in its format instead of the SDK's default
// logger.
func ErrorHandler(log hclog.Logger) otel.ErrorHandler {
	return otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry", "error", err)
	})
}

// Version returns the version of the running binary from its build info:
// the module version (e.g. v1.2.3 when built with go install …@v1.2.3, or
// "(devel)"), with the VCS revision and "-dirty" when the build recorded
// them.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionOf(bi)
}

// versionOf is Version for the build info bi.
func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	// A pseudo-version (v0.0.0-20240102030405-0123456789ab) names the
	// revision already.
	if rev != "" && !strings.Contains(v, rev[:min(12, len(rev))]) {
		v += " " + rev[:min(12, len(rev))]
		if modified == "true" {
			v += "-dirty"
		}
	}
	return v
}

// VersionLine is what -version prints: the program, its version, the Go
// version and platform it was built with.
func VersionLine(program string) string {
	goVersion := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	return fmt.Sprintf("%s %s (%s %s/%s)", program, Version(), goVersion, runtime.GOOS, runtime.GOARCH)
}

// errUnsupported is the error of an OTEL_TRACES_EXPORTER or protocol this
// server cannot use.
var errUnsupported = errors.New("unsupported")
