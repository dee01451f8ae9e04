package webhook

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// metrics are a Sender's series (docs/observability.md lists them).
type metrics struct {
	attempts   *prometheus.CounterVec   // type, outcome
	deliveries *prometheus.CounterVec   // type, outcome
	duration   *prometheus.HistogramVec // type
	pending    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentcore_webhook_attempts_total",
			Help: "Webhook HTTP attempts, by event type and outcome (2xx, 3xx, 4xx, 5xx, timeout, error)."},
			[]string{"type", "outcome"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "agentcore_webhook_deliveries_total",
			Help: "Webhook messages finished, by event type and outcome: delivered, failed (attempts or time ran out), refused (URL not allowed, or too many pending), dropped (the server stopped)."},
			[]string{"type", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "agentcore_webhook_attempt_duration_seconds",
			Help:    "Time of one webhook HTTP attempt, until the answer's headers.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}}, []string{"type"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: "agentcore_webhook_pending",
			Help: "Webhook messages waiting for an attempt or being tried."}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.attempts, err = register(reg, m.attempts)
	if err != nil {
		return nil, err
	}
	if m.deliveries, err = register(reg, m.deliveries); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	if m.pending, err = register(reg, m.pending); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector of the same name another
// Sender registered there first.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if prev, ok := are.ExistingCollector.(C); ok {
			return prev, nil
		}
	}
	return c, err
}

func (m *metrics) attempted(typ, outcome string, d time.Duration) {
	m.attempts.WithLabelValues(typ, outcome).Inc()
	m.duration.WithLabelValues(typ).Observe(d.Seconds())
}

func (m *metrics) delivered(typ, outcome string) { m.deliveries.WithLabelValues(typ, outcome).Inc() }

// outcomeOf is an attempt's outcome label.
func outcomeOf(status int, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case err != nil:
		return "error"
	}
	return strconv.Itoa(status/100) + "xx"
}

// tracerOf is the tracer of the attempts' spans.
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return tp.Tracer("github.com/agentcore/agentcore/pkg/webhook")
}

// startSpan starts the client span of one attempt.
func (s *Sender) startSpan(ctx context.Context, m Message, attempt int) (context.Context, trace.Span) {
	return s.tracer.Start(ctx, "webhook "+m.Type, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("http.request.method", "POST"),
		attribute.String("server.address", hostOf(m.URL)),
		attribute.String("agentcore.webhook.id", m.ID),
		attribute.String("agentcore.webhook.type", m.Type),
		attribute.Int("agentcore.webhook.attempt", attempt),
	))
}

// endSpan ends an attempt's span with its answer.
func endSpan(sp trace.Span, status int, err error) {
	switch {
	case err != nil:
		sp.RecordError(err)
		sp.SetStatus(codes.Error, err.Error())
	default:
		sp.SetAttributes(attribute.Int("http.response.status_code", status))
		if status/100 != 2 {
			sp.SetStatus(codes.Error, "HTTP "+strconv.Itoa(status))
		}
	}
	sp.End()
}
