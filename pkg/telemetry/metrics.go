package telemetry

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Histogram buckets.
var (
	// secondsBuckets span a fast tool call to a long model answer.
	secondsBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
	// genAIDurationBuckets are the GenAI conventions' advice for
	// gen_ai.client.operation.duration and time to first chunk.
	genAIDurationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
	// tokenBuckets are the GenAI conventions' advice for gen_ai.client.token.usage.
	tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
)

// genaiLatencyLabels label the GenAI latency histograms: the conventions'
// attributes, and agentcore.protocol (gen_ai_provider_name says openai for
// both the chat and the responses protocol).
var genaiLatencyLabels = []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "agentcore_protocol", "error_type"}

// Label values of a run's end.
const (
	kindSend    = "send"
	kindCompact = "compact"
)

// metrics are every metric of a server, registered in its own registry.
// docs/observability.md lists them in its metrics table; keep the two
// together.
type metrics struct {
	runsStarted *prometheus.CounterVec   // kind
	runsEnded   *prometheus.CounterVec   // kind, reason, error_kind
	runsActive  prometheus.Gauge         //
	runsResumed prometheus.Counter       //
	runDuration *prometheus.HistogramVec // kind

	modelRequests *prometheus.CounterVec   // protocol, outcome
	modelRetries  *prometheus.CounterVec   // protocol, kind
	fallbacks     *prometheus.CounterVec   // from_protocol, to_protocol, kind
	genaiDuration *prometheus.HistogramVec // gen_ai_operation_name, gen_ai_provider_name, gen_ai_request_model, agentcore_protocol, error_type
	genaiFirst    *prometheus.HistogramVec // the same
	genaiTokens   *prometheus.HistogramVec // gen_ai_operation_name, gen_ai_provider_name, gen_ai_request_model, gen_ai_token_type
	tokens        *prometheus.CounterVec   // type

	toolCalls    *prometheus.CounterVec   // tool, outcome
	toolDuration *prometheus.HistogramVec // tool

	pluginsAlive   *prometheus.GaugeVec   // plugin
	pluginsStarted *prometheus.CounterVec // plugin
	pluginsReused  *prometheus.CounterVec // plugin
	pluginsKilled  *prometheus.CounterVec // plugin

	permissions *prometheus.CounterVec // decision
	limitHits   *prometheus.CounterVec // limit
	streams     prometheus.Gauge       //

	agentEvictions *prometheus.CounterVec // cause
	agentReloads   prometheus.Counter     //

	childRuns   prometheus.Counter     //
	runCost     prometheus.Counter     //
	budgetStops *prometheus.CounterVec // limit

	// The series a step moves, looked up once per label set: hashing the
	// label values is most of a metric update's cost.
	tokenSeries [5]prometheus.Counter // by tokenTypes
	models      memo[modelKey, *modelSeries]
	tools       memo[toolKey, *toolSeries]
}

// tokenTypes are the type label values of agentcore_tokens_total, in the
// order of metrics.tokenSeries.
var tokenTypes = [5]string{"input", "output", "cache_read", "cache_write", "reasoning"}

// modelKey is the label set of a model request's series.
type modelKey struct{ protocol, model, outcome string }

// modelSeries are the series one model request moves.
type modelSeries struct {
	requests                prometheus.Counter
	duration, first         prometheus.Observer
	inputUsage, outputUsage prometheus.Observer
}

// model returns the series of a model request's label set.
func (m *metrics) model(k modelKey) *modelSeries { return m.models.get(k, m.newModelSeries) }

func (m *metrics) newModelSeries(k modelKey) *modelSeries {
	provider, errType := providerName(k.protocol), ""
	if k.outcome != "ok" {
		errType = k.outcome
	}
	return &modelSeries{
		requests:    m.modelRequests.WithLabelValues(k.protocol, k.outcome),
		duration:    m.genaiDuration.WithLabelValues("chat", provider, k.model, k.protocol, errType),
		first:       m.genaiFirst.WithLabelValues("chat", provider, k.model, k.protocol, errType),
		inputUsage:  m.genaiTokens.WithLabelValues("chat", provider, k.model, "input"),
		outputUsage: m.genaiTokens.WithLabelValues("chat", provider, k.model, "output"),
	}
}

// toolKey is the label set of a tool call's series.
type toolKey struct{ tool, outcome string }

// toolSeries are the series one tool call moves.
type toolSeries struct {
	calls    prometheus.Counter
	duration prometheus.Observer
}

// tool returns the series of a tool call's label set.
func (m *metrics) tool(k toolKey) *toolSeries { return m.tools.get(k, m.newToolSeries) }

func (m *metrics) newToolSeries(k toolKey) *toolSeries {
	return &toolSeries{calls: m.toolCalls.WithLabelValues(k.tool, k.outcome), duration: m.toolDuration.WithLabelValues(k.tool)}
}

func newMetrics(reg *prometheus.Registry) *metrics {
	registered := factory{reg}
	out := &metrics{
		runsStarted: registered.counter("agentcore_runs_started_total", "Runs started: sends (kind=send) and manual compactions (kind=compact).", "kind"),
		runsEnded: registered.counter("agentcore_runs_ended_total",
			"Runs ended, by why: reason no_tool, tool_stop, step_limit or compacted; or reason error with the error kind (aborted, auth, limit, timeout, server, network, request, unknown, invalid, internal).",
			"kind", "reason", "error_kind"),
		runsActive:  registered.gauge("agentcore_runs_active", "Runs running now."),
		runsResumed: registered.counter("agentcore_runs_resumed_total", "Runs resumed after a crash cut them off (on_interrupt resume), each attempt counted; they count in runs started too.").WithLabelValues(),
		runDuration: registered.histogram("agentcore_run_duration_seconds", "How long runs took, from taking the agent to the end.", secondsBuckets, "kind"),

		modelRequests: registered.counter("agentcore_model_requests_total",
			"Model requests (retries inside one request not counted apart), by protocol and outcome (ok or the error kind).", "protocol", "outcome"),
		modelRetries: registered.counter("agentcore_model_retries_total", "Model request attempts retried, by the error kind that was retried.", "protocol", "kind"),
		fallbacks: registered.counter("agentcore_model_fallbacks_total",
			"Rounds handed on to a fallback model (config.fallback), by the protocol of the model that failed, the fallback's, and the error kind that handed it on.",
			"from_protocol", "to_protocol", "kind"),
		genaiDuration: registered.histogram("gen_ai_client_operation_duration_seconds",
			"GenAI conventions: duration of a model request (gen_ai.client.operation.duration), retries included, by protocol (chat, responses, anthropic, gemini) and error type (empty when it succeeded).",
			genAIDurationBuckets, genaiLatencyLabels...),
		genaiFirst: registered.histogram("gen_ai_client_operation_time_to_first_chunk_seconds",
			"GenAI conventions: time from a model request to its first streamed piece (gen_ai.client.operation.time_to_first_chunk, time to first token), by protocol and error type, for requests that streamed something.",
			genAIDurationBuckets, genaiLatencyLabels...),
		genaiTokens: registered.histogram("gen_ai_client_token_usage",
			"GenAI conventions: tokens of one model request (gen_ai.client.token.usage), by type input or output.", tokenBuckets,
			"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_token_type"),
		tokens: registered.counter("agentcore_tokens_total",
			"Tokens of model responses, by type: input, output, cache_read, cache_write, reasoning (cache and reasoning tokens are part of input and output).", "type"),

		toolCalls:    registered.counter("agentcore_tool_calls_total", "Tool calls of runs and ExecuteTool, by tool and outcome: ok, error, crash, timeout, killed, limit.", "tool", "outcome"),
		toolDuration: registered.histogram("agentcore_tool_call_duration_seconds", "How long tool calls ran, queueing excluded.", secondsBuckets, "tool"),

		pluginsAlive:   registered.gaugeVec("agentcore_plugin_processes", "Plugin processes alive now (busy or idle), by plugin.", "plugin"),
		pluginsStarted: registered.counter("agentcore_plugin_starts_total", "Plugin processes started (cold starts), by plugin.", "plugin"),
		pluginsReused:  registered.counter("agentcore_plugin_reuses_total", "Calls that took an idle plugin process (warm starts), by plugin.", "plugin"),
		pluginsKilled:  registered.counter("agentcore_plugin_kills_total", "Plugin processes killed to stop their call (timeout, stopped run, client gone), by plugin.", "plugin"),

		permissions: registered.counter("agentcore_permission_requests_total", "Permission requests, by decision: allow, deny, unanswered (the run stopped first).", "decision"),
		limitHits: registered.counter("agentcore_limit_hits_total",
			"Requests refused or calls killed at a limit, by limit: sessions, runs, history (server limits), tool (a tool's resource limit), and any other *_LIMIT reason.", "limit"),
		streams: registered.gauge("agentcore_grpc_streams_active", "gRPC streams open now (Send, Compact, ExecuteTool)."),

		agentEvictions: registered.counter("agentcore_agent_evictions_total",
			"Idle agents dropped from memory (the store keeps them), by cause: count (-max-loaded-agents) or memory (-agent-memory).", "cause"),
		agentReloads: registered.counterOne("agentcore_agent_reloads_total", "Agents loaded from the store again after this server dropped them from memory."),

		childRuns: registered.counterOne("agentcore_child_runs_total", "Child runs (agents called as tools) that ended."),
		runCost:   registered.counterOne("agentcore_run_cost_total", "Cost of the runs' model responses at the configured prices (per million tokens), in their currency."),
		budgetStops: registered.counter("agentcore_budget_exceeded_total",
			"Runs ended by a limit of their run tree's budget, by limit: input_tokens, output_tokens, model_requests, tool_calls, wall_time, cost.", "limit"),
	}
	for i, typ := range tokenTypes {
		out.tokenSeries[i] = out.tokens.WithLabelValues(typ)
	}
	for _, cause := range []string{"count", "memory"} {
		out.agentEvictions.WithLabelValues(cause) // at 0 from the start
	}
	build := registered.gaugeVec("agentcore_build_info", "The running binary: its version and Go version; the value is 1.", "version", "go_version")
	goVersion := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	build.WithLabelValues(Version(), goVersion).Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return out
}

// factory makes metrics registered in one registry.
type factory struct{ reg *prometheus.Registry }

func (f factory) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) counterOne(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	return g
}

func (f factory) histogram(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

// GaugeFunc registers a gauge whose value fn reports at each scrape, e.g.
// the number of agents a server holds (agentcore_agents).
func (t *Telemetry) GaugeFunc(name, help string, fn func() float64) {
	t.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// AgentEvicted counts an idle agent dropped from memory, by cause: count
// or memory.
func (t *Telemetry) AgentEvicted(cause string) {
	t.metrics.agentEvictions.WithLabelValues(cause).Inc()
}

// AgentReloaded counts an agent loaded from the store again after it was
// dropped from memory.
func (t *Telemetry) AgentReloaded() { t.metrics.agentReloads.Inc() }

// LimitHit counts one request refused or call killed at a limit: the
// hook for limits enforced outside this package's view (the server's
// limits on sessions, runs and history, a tool process's resources, result
// and message sizes). name is the limit in lower case, e.g. "sessions",
// "tool_memory", "result_bytes".
func (t *Telemetry) LimitHit(name string) {
	t.metrics.limitHits.WithLabelValues(name).Inc()
}
