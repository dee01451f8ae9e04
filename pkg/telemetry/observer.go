package telemetry

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Span attributes: the GenAI semantic conventions' where they have one,
// agentcore.* for the rest.
const (
	attrOperation        = attribute.Key("gen_ai.operation.name")
	attrProvider         = attribute.Key("gen_ai.provider.name")
	attrRequestModel     = attribute.Key("gen_ai.request.model")
	attrResponseModel    = attribute.Key("gen_ai.response.model")
	attrFinishReasons    = attribute.Key("gen_ai.response.finish_reasons")
	attrFirstChunk       = attribute.Key("gen_ai.response.time_to_first_chunk")
	attrInputTokens      = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens     = attribute.Key("gen_ai.usage.output_tokens")
	attrCacheReadTokens  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	attrCacheWriteTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	attrReasoningTokens  = attribute.Key("gen_ai.usage.reasoning.output_tokens")
	attrAgentID          = attribute.Key("gen_ai.agent.id")
	attrAgentName        = attribute.Key("gen_ai.agent.name")
	attrConversationID   = attribute.Key("gen_ai.conversation.id")
	attrToolName         = attribute.Key("gen_ai.tool.name")
	attrToolCallID       = attribute.Key("gen_ai.tool.call.id")
	attrToolType         = attribute.Key("gen_ai.tool.type")
	attrToolArguments    = attribute.Key("gen_ai.tool.call.arguments")
	attrToolResult       = attribute.Key("gen_ai.tool.call.result")
	attrSystem           = attribute.Key("gen_ai.system_instructions")
	attrInputMessages    = attribute.Key("gen_ai.input.messages")
	attrOutputMessages   = attribute.Key("gen_ai.output.messages")
	attrErrorType        = attribute.Key("error.type")

	attrRunID = attribute.Key("agentcore.run.id")
	// What a run spent at the configured prices, and what its run tree
	// (the run and its child runs) spent.
	attrCost          = attribute.Key("agentcore.run.cost")
	attrTreeRequests  = attribute.Key("agentcore.run.tree.model_requests")
	attrTreeToolCalls = attribute.Key("agentcore.run.tree.tool_calls")
	attrTreeInput     = attribute.Key("agentcore.run.tree.input_tokens")
	attrTreeOutput    = attribute.Key("agentcore.run.tree.output_tokens")
	attrTreeCost      = attribute.Key("agentcore.run.tree.cost")
	attrChildRuns     = attribute.Key("agentcore.run.child_runs")
	attrReason        = attribute.Key("agentcore.run.reason")
	attrSteps         = attribute.Key("agentcore.run.steps")
	attrToolCalls     = attribute.Key("agentcore.run.tool_calls")
	attrStep          = attribute.Key("agentcore.step")
	attrProtocol      = attribute.Key("agentcore.protocol")
	attrCompaction    = attribute.Key("agentcore.compaction")
	attrSampling      = attribute.Key("agentcore.sampling")
	// A request to a fallback model: its place in the list (1 for the
	// first), the model whose request failed and that error's kind; on a
	// run, how many of its requests went to a fallback.
	attrFallback     = attribute.Key("agentcore.fallback.index")
	attrFallbackFrom = attribute.Key("agentcore.fallback.from_model")
	attrFallbackKind = attribute.Key("agentcore.fallback.kind")
	attrRunFallbacks = attribute.Key("agentcore.run.fallbacks")
	attrAttempt      = attribute.Key("agentcore.retry.attempt")
	attrDelay        = attribute.Key("agentcore.retry.delay_ms")
	attrStatus       = attribute.Key("http.response.status_code")
	attrDecision     = attribute.Key("agentcore.permission.decision")
)

// providerName is gen_ai.provider.name for a wire protocol: the provider
// whose API the protocol is (an OpenAI-compatible gateway speaks "openai").
func providerName(protocol string) string {
	switch protocol {
	case "chat", "responses":
		return "openai"
	case "anthropic":
		return "anthropic"
	case "gemini":
		return "gcp.gemini"
	case "":
		return "_OTHER" // a caller's own eino model
	}
	return protocol
}

// errorKind names why a run or request failed: the model layer's error
// kind, "invalid" for a rejected request, "internal" for anything else.
func errorKind(err error) string {
	var le *llm.Error
	var ve *agent.ValidationError
	switch {
	case errors.As(err, &le):
		return string(le.Kind)
	case errors.As(err, &ve):
		return "invalid"
	}
	return "internal"
}

// reasonLabel is a run's end reason as a label value: no_tool, tool_stop, step_limit.
func reasonLabel(r agentv1.EndReason) string {
	return strings.ToLower(strings.TrimPrefix(r.String(), "END_REASON_"))
}

// RunStarted opens the run's span (invoke_agent, or compact for a manual
// compaction) and counts the run.
func (t *Telemetry) RunStarted(ctx context.Context, r *agent.RunInfo) context.Context {
	kind := kindSend
	if r.Compaction {
		kind = kindCompact
	}
	t.metrics.runsStarted.WithLabelValues(kind).Inc()
	t.metrics.runsActive.Inc()
	if r.Attempt > 0 {
		t.metrics.runsResumed.Inc()
	}
	if !t.tracing {
		return ctx
	}
	// The run's attributes go in at its end, in one call (see ModelStarted);
	// the span starts now: the engine takes r.Start just before calling.
	ctx, span := t.tracer.Start(ctx, runOperation(r)+" "+r.AgentID, t.internalStart...)
	if r.Attempt > 0 {
		span.AddEvent("agentcore.run.resumed", trace.WithAttributes(
			attribute.String("agentcore.run.id", r.RunID), attribute.Int("agentcore.run.attempt", r.Attempt)))
	}
	return ctx
}

// runOperation is gen_ai.operation.name of a run's span: invoke_agent, or
// compact for a manual compaction.
func runOperation(r *agent.RunInfo) string {
	if r.Compaction {
		return "compact"
	}
	return "invoke_agent"
}

// RunEnded closes the run's span, counts its end and writes its log line.
func (t *Telemetry) RunEnded(ctx context.Context, run *agent.RunInfo, res *agent.Result, err error) {
	elapsed := time.Since(run.Start)
	kind, reason, ekind := kindSend, "", ""
	if run.Compaction {
		kind = kindCompact
	}
	switch {
	case err != nil:
		reason, ekind = "error", errorKind(err)
	case res != nil:
		reason = reasonLabel(res.Reason)
	default:
		reason = "compacted"
	}
	t.metrics.runsActive.Dec()
	t.metrics.runsEnded.WithLabelValues(kind, reason, ekind).Inc()
	t.metrics.runDuration.WithLabelValues(kind).Observe(elapsed.Seconds())
	var own, tree *agentv1.RunUsage
	if run.Budget != nil {
		own, tree = run.Budget.RunUsage()
		if own.GetCost() > 0 {
			t.metrics.runCost.Add(own.GetCost())
		}
		if run.Budget.Child() {
			t.metrics.childRuns.Inc()
		}
	}
	if res != nil && res.Exceeded != nil {
		t.metrics.budgetStops.WithLabelValues(strings.ToLower(strings.TrimPrefix(res.Exceeded.Limit.String(), "BUDGET_LIMIT_"))).Inc()
	}

	usage := run.Usage
	fields := make([]any, 0, 24)
	fields = append(fields, "agent", run.AgentID, "run", run.RunID)
	if run.Compaction {
		fields = append(fields, "kind", kind)
	}
	if err != nil {
		fields = append(fields, "error_kind", ekind, "error", err.Error())
	} else {
		fields = append(fields, "reason", reason)
	}
	if run.Fallbacks > 0 {
		fields = append(fields, "fallbacks", run.Fallbacks)
	}
	fields = append(fields, "steps", run.Steps, "tool_calls", run.ToolCalls,
		"input_tokens", usage.GetInputTokens(), "output_tokens", usage.GetOutputTokens())
	if n := usage.GetCacheReadTokens(); n > 0 {
		fields = append(fields, "cache_read_tokens", n)
	}
	if n := usage.GetCacheWriteTokens(); n > 0 {
		fields = append(fields, "cache_write_tokens", n)
	}
	if c := own.GetCost(); c > 0 {
		fields = append(fields, "cost", c)
	}
	if n := tree.GetChildRuns(); n > 0 {
		fields = append(fields, "child_runs", n, "tree_model_requests", tree.GetModelRequests(), "tree_tool_calls", tree.GetToolCalls(),
			"tree_input_tokens", tree.GetInputTokens(), "tree_output_tokens", tree.GetOutputTokens())
		if c := tree.GetCost(); c > 0 {
			fields = append(fields, "tree_cost", c)
		}
	}
	fields = append(fields, "duration", elapsed)
	span := trace.SpanFromContext(ctx)
	if sc := span.SpanContext(); sc.IsValid() {
		fields = append(fields, "trace_id", sc.TraceID().String())
	}
	t.log.Info("run ended", fields...)

	if !t.tracing {
		return
	}
	if !span.IsRecording() {
		span.End()
		return
	}
	buf := t.attrBuf(18 + usageCount(usage))
	attrs := append(*buf,
		attrOperation.String(runOperation(run)),
		attrAgentID.String(run.AgentID),
		attrAgentName.String(run.AgentID),
		attrConversationID.String(run.AgentID),
		attrRunID.String(run.RunID),
		attrProvider.String(providerName(run.Protocol)),
		attrRequestModel.String(run.Model),
	)
	attrs = append(appendUsage(attrs, usage), attrSteps.Int(run.Steps), attrToolCalls.Int(run.ToolCalls))
	if tree != nil {
		attrs = append(attrs, attrCost.Float64(own.GetCost()), attrTreeRequests.Int64(tree.GetModelRequests()), attrTreeToolCalls.Int64(tree.GetToolCalls()),
			attrTreeInput.Int64(tree.GetInputTokens()), attrTreeOutput.Int64(tree.GetOutputTokens()), attrTreeCost.Float64(tree.GetCost()),
			attrChildRuns.Int64(tree.GetChildRuns()))
	}
	if run.Fallbacks > 0 {
		attrs = append(attrs, attrRunFallbacks.Int(run.Fallbacks))
	}
	if err == nil {
		attrs = append(attrs, attrReason.String(reason))
	}
	*buf = attrs
	t.setAttrs(span, buf)
	if err != nil {
		t.fail(span, ekind, err)
	}
	span.End()
}

// ModelStarted opens the request's chat span. Its attributes are set when
// it ends, in one call with the response's: the SDK copies an attribute
// given at the start into the start options, into the span, and again
// when the span grows for the end's attributes; one given at the end it
// copies once. The samplers OTEL_TRACES_SAMPLER names read a span's name
// and parent, never its attributes. Content (-trace-content) goes in as
// the span starts, the messages being the request's, and only when the
// span records: an unsampled request does not encode the conversation.
func (t *Telemetry) ModelStarted(ctx context.Context, m *agent.ModelCall) context.Context {
	if f := m.Fallback; f != nil {
		t.metrics.fallbacks.WithLabelValues(f.FromProtocol, m.Protocol, string(f.Kind)).Inc()
	}
	if !t.tracing {
		return ctx
	}
	ctx, span := t.tracer.Start(ctx, t.strings.chat.get(m.Model, chatName), t.clientStart...)
	if t.content && span.IsRecording() {
		span.SetAttributes(attrSystem.String(t.redact(systemJSON(m.System))), attrInputMessages.String(t.redact(messagesJSON(m.Messages))))
	}
	return ctx
}

// ModelRetried adds a retry event to the chat span and counts it.
func (t *Telemetry) ModelRetried(ctx context.Context, m *agent.ModelCall, r llm.Retry) {
	kind := "unknown"
	status := 0
	if r.Err != nil {
		kind, status = string(r.Err.Kind), r.Err.Status
	}
	t.metrics.modelRetries.WithLabelValues(m.Protocol, kind).Inc()
	if !t.tracing {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attrAttempt.Int(r.Attempt), attrErrorType.String(kind), attrDelay.Int64(r.Delay.Milliseconds())}
	if status > 0 {
		attrs = append(attrs, attrStatus.Int(status))
	}
	span.AddEvent("retry", trace.WithAttributes(attrs...))
}

// ModelEnded closes the chat span and moves the model metrics.
func (t *Telemetry) ModelEnded(ctx context.Context, call *agent.ModelCall, out *llm.Result, err error) {
	elapsed := time.Since(call.Start)
	outcome := "ok"
	if err != nil {
		outcome = errorKind(err)
	}
	series := t.metrics.model(modelKey{call.Protocol, call.Model, outcome})
	series.requests.Inc()
	series.duration.Observe(elapsed.Seconds())
	if !call.FirstDelta.IsZero() {
		series.first.Observe(call.FirstDelta.Sub(call.Start).Seconds())
	}
	var usage *agentv1.Usage
	if out != nil {
		usage = out.Usage
	}
	if usage != nil {
		series.inputUsage.Observe(float64(usage.GetInputTokens()))
		series.outputUsage.Observe(float64(usage.GetOutputTokens()))
		t.addTokens(usage)
	}
	if err != nil && outcome != string(llm.KindAborted) {
		t.log.Warn("model request failed", "agent", call.Run.AgentID, "run", call.Run.RunID, "protocol", call.Protocol,
			"model", call.Model, "kind", outcome, "duration", elapsed, "error", err.Error())
	}
	if !t.tracing {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() { // not sampled: no attributes to build
		span.End()
		return
	}
	// One SetAttributes: the SDK grows the span's attributes to hold them,
	// once.
	n := 5 + usageCount(usage)
	if call.Compaction {
		n++
	}
	if call.SamplingFor != "" {
		n += 2
	}
	if call.Fallback != nil {
		n += 3
	}
	if !call.FirstDelta.IsZero() {
		n++
	}
	if out != nil {
		n += 3 // response model, finish reasons, content
	}
	buf := t.attrBuf(n)
	attrs := append(*buf,
		attrOperation.String("chat"),
		attrProvider.String(providerName(call.Protocol)),
		attrRequestModel.String(call.Model),
		attrProtocol.String(call.Protocol),
		attrStep.Int(call.Step),
	)
	if call.Compaction {
		attrs = append(attrs, attrCompaction.Bool(true))
	}
	if call.SamplingFor != "" { // a tool's sampling request: the call that asked
		attrs = append(attrs, attrSampling.Bool(true), attrToolCallID.String(call.SamplingFor))
	}
	if f := call.Fallback; f != nil {
		attrs = append(attrs, attrFallback.Int(f.Index), attrFallbackFrom.String(f.FromModel), attrFallbackKind.String(string(f.Kind)))
	}
	attrs = appendUsage(attrs, usage)
	if out != nil {
		if out.ResponseModel != "" {
			attrs = append(attrs, attrResponseModel.String(out.ResponseModel))
		}
		if out.FinishReason != "" {
			attrs = append(attrs, t.strings.reasons.get(out.FinishReason, finishReasons))
		}
		if t.content {
			attrs = append(attrs, attrOutputMessages.String(t.redact(outputJSON(out))))
		}
	}
	if !call.FirstDelta.IsZero() {
		attrs = append(attrs, attrFirstChunk.Float64(call.FirstDelta.Sub(call.Start).Seconds()))
	}
	*buf = attrs
	t.setAttrs(span, buf)
	if err != nil {
		t.fail(span, outcome, err)
	}
	span.End()
}

// addTokens counts a response's tokens by type.
func (t *Telemetry) addTokens(u *agentv1.Usage) {
	for i, n := range [len(tokenTypes)]int64{
		u.GetInputTokens(), u.GetOutputTokens(), u.GetCacheReadTokens(), u.GetCacheWriteTokens(), u.GetReasoningTokens(),
	} {
		if n > 0 {
			t.metrics.tokenSeries[i].Add(float64(n))
		}
	}
}

// ToolStarted opens the call's execute_tool span; its attributes are set
// when it ends (see ModelStarted).
func (t *Telemetry) ToolStarted(ctx context.Context, call *agent.ToolCall) context.Context {
	if !t.tracing {
		return ctx
	}
	ctx, _ = t.tracer.Start(ctx, t.strings.tool.get(call.Name, toolName), t.internalStart...)
	return ctx
}

// ToolEnded closes the execute_tool span and moves the tool metrics.
func (t *Telemetry) ToolEnded(ctx context.Context, call *agent.ToolCall, res tool.Result) {
	name := call.Name
	if !call.Known {
		name = "_unknown" // a name the model made up: not a label value of its own
	}
	outcome := string(res.Outcome)
	if outcome == "" {
		outcome = string(tool.OutcomeOK)
	}
	series := t.metrics.tool(toolKey{name, outcome})
	series.calls.Inc()
	series.duration.Observe(res.Duration.Seconds())
	if res.Outcome == tool.OutcomeLimit {
		t.LimitHit("tool")
	}
	if t.log.IsDebug() {
		fields := []any{"tool", call.Name, "call", call.ID, "outcome", outcome, "duration", res.Duration}
		if call.Run != nil {
			fields = append(fields, "agent", call.Run.AgentID, "run", call.Run.RunID)
		}
		t.log.Debug("tool call", fields...)
	}
	if !t.tracing {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		span.End()
		return
	}
	n := 6 // operation, name, call id, type, step, error.type
	if t.content {
		n += 2
	}
	buf := t.attrBuf(n)
	attrs := append(*buf,
		attrOperation.String("execute_tool"),
		attrToolName.String(call.Name),
		attrToolCallID.String(call.ID),
		attrToolType.String("function"),
	)
	if call.Run != nil {
		attrs = append(attrs, attrStep.Int(call.Step))
	}
	if t.content {
		attrs = append(attrs, attrToolArguments.String(t.redact(call.Arguments)), attrToolResult.String(t.redact(tool.OutputText(res.Output))))
	}
	if outcome != string(tool.OutcomeOK) {
		attrs = append(attrs, attrErrorType.String(outcome))
		span.SetStatus(codes.Error, "tool call "+outcome)
	}
	*buf = attrs
	t.setAttrs(span, buf)
	span.End()
}

// PermissionDecided counts the decision and records it on the run's span.
func (t *Telemetry) PermissionDecided(ctx context.Context, call *agent.ToolCall, d agent.Decision, notRun bool) {
	decision := "deny"
	switch {
	case notRun:
		decision = "unanswered"
	case d.Allow:
		decision = "allow"
	}
	t.metrics.permissions.WithLabelValues(decision).Inc()
	if !t.tracing {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.AddEvent("permission", trace.WithAttributes(
		attrToolName.String(call.Name), attrToolCallID.String(call.ID), attrDecision.String(decision)))
}

// ProcessStarted counts a cold start.
func (t *Telemetry) ProcessStarted(plugin string) {
	t.metrics.pluginsStarted.WithLabelValues(plugin).Inc()
	t.metrics.pluginsAlive.WithLabelValues(plugin).Inc()
}

// ProcessReused counts a warm start.
func (t *Telemetry) ProcessReused(plugin string) {
	t.metrics.pluginsReused.WithLabelValues(plugin).Inc()
}

// ProcessKilled counts a process killed to stop its call.
func (t *Telemetry) ProcessKilled(plugin string) {
	t.metrics.pluginsKilled.WithLabelValues(plugin).Inc()
}

// ProcessEnded counts a process gone.
func (t *Telemetry) ProcessEnded(plugin string) { t.metrics.pluginsAlive.WithLabelValues(plugin).Dec() }

// usageCount is how many GenAI usage attributes appendUsage adds for u.
func usageCount(u *agentv1.Usage) int {
	if u == nil {
		return 0
	}
	n := 2
	for _, v := range [...]int64{u.GetCacheReadTokens(), u.GetCacheWriteTokens(), u.GetReasoningTokens()} {
		if v > 0 {
			n++
		}
	}
	return n
}

// appendUsage appends the GenAI usage attributes of u (none for nil).
func appendUsage(attrs []attribute.KeyValue, u *agentv1.Usage) []attribute.KeyValue {
	if u == nil {
		return attrs
	}
	attrs = append(attrs, attrInputTokens.Int64(u.GetInputTokens()), attrOutputTokens.Int64(u.GetOutputTokens()))
	if n := u.GetCacheReadTokens(); n > 0 {
		attrs = append(attrs, attrCacheReadTokens.Int64(n))
	}
	if n := u.GetCacheWriteTokens(); n > 0 {
		attrs = append(attrs, attrCacheWriteTokens.Int64(n))
	}
	if n := u.GetReasoningTokens(); n > 0 {
		attrs = append(attrs, attrReasoningTokens.Int64(n))
	}
	return attrs
}

// attrBuf returns an empty attribute slice with room for n, from the pool
// when the SDK copies what it is given (see Telemetry.attrs).
func (t *Telemetry) attrBuf(n int) *[]attribute.KeyValue {
	if t.poolAttrs {
		if p, _ := t.attrs.Get().(*[]attribute.KeyValue); p != nil {
			if cap(*p) >= n {
				return p
			}
		}
	}
	if !t.poolAttrs {
		a := make([]attribute.KeyValue, 0, n)
		return &a
	}
	a := make([]attribute.KeyValue, 0, max(n, attrBufSize))
	return &a
}

// attrBufSize is the room of a pooled attribute slice: a chat span's
// attributes with every usage type, or a run's.
const attrBufSize = 16

// setAttrs sets the attributes in *p on span and gives the slice back to
// the pool, cleared so that it keeps no strings (content) alive.
func (t *Telemetry) setAttrs(span trace.Span, p *[]attribute.KeyValue) {
	span.SetAttributes(*p...)
	if t.poolAttrs {
		clear(*p)
		*p = (*p)[:0]
		t.attrs.Put(p)
	}
}

// fail marks span failed with error.type kind. A stopped run (aborted) is
// not an error of the service: it gets error.type but no error status.
func (t *Telemetry) fail(span trace.Span, kind string, err error) {
	span.SetAttributes(attrErrorType.String(kind))
	if kind != string(llm.KindAborted) {
		span.SetStatus(codes.Error, t.redact(err.Error()))
	}
}
