package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/internal/syncbuf"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a session observed by a Telemetry, asking the fake model, with
// in-process tools: lookup (returns its argument, noting the span it ran
// under) and broken (fails).
type rig struct {
	tel   *Telemetry
	spans *tracetest.InMemoryExporter // nil without tracing
	model *fakemodel.Server
	sess  *agent.Session
	logs  *syncbuf.Buffer

	redactions atomic.Int64 // calls of the Redact hook (content and error messages for spans)

	mu         sync.Mutex
	toolSpan   trace.SpanContext // the span in the lookup tool's context
	headers    []http.Header     // the model requests' headers
	scriptStep func(step int, req *fakemodel.Request) fakemodel.Turn
}

func newRig(t *testing.T, tracing, content bool) *rig {
	t.Helper()
	var sampler sdktrace.Sampler
	if tracing {
		sampler = sdktrace.AlwaysSample()
	}
	return newSampledRig(t, sampler, content)
}

// newSampledRig is newRig tracing with sampler (nil: not tracing).
func newSampledRig(t *testing.T, sampler sdktrace.Sampler, content bool) *rig {
	t.Helper()
	r := &rig{logs: &syncbuf.Buffer{}}
	cfg := Config{
		TraceContent: content,
		Logger:       hclog.New(&hclog.LoggerOptions{JSONFormat: true, Output: r.logs, Level: hclog.Debug}),
		Redact: func(s string) string {
			r.redactions.Add(1)
			return strings.ReplaceAll(s, "sk-secret", "[redacted]")
		},
	}
	if sampler != nil {
		r.spans = tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans), sdktrace.WithSampler(sampler))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		cfg.TracerProvider = tp
	}
	tel, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.tel = tel
	r.model = fakemodel.StartTB(t)
	r.model.Handle(func(req *fakemodel.Request) fakemodel.Turn {
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		fn := r.scriptStep
		r.mu.Unlock()
		steps := 0
		msgs, _ := req.JSON()["messages"].([]any)
		for _, m := range msgs {
			if mm, _ := m.(map[string]any); mm["role"] == "assistant" {
				steps++
			}
		}
		return fn(steps, req)
	})
	lookup, err := tool.InProcess(tool.Spec{Name: "lookup", Description: "Looks up.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		func(ctx context.Context, in json.RawMessage, _ func(string)) (tool.Result, error) {
			r.mu.Lock()
			r.toolSpan = trace.SpanContextFromContext(ctx)
			r.mu.Unlock()
			return tool.Result{Output: tool.TextOutput("found " + string(in))}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	broken, err := tool.InProcess(tool.Spec{Name: "broken", Description: "Fails."},
		func(context.Context, json.RawMessage, func(string)) (tool.Result, error) {
			return tool.Result{}, errors.New("out of order")
		})
	if err != nil {
		t.Fatal(err)
	}
	r.sess, err = agent.New(agent.Options{
		ID: "writer",
		Config: &agentv1.AgentConfig{
			BaseUrl: proto.String(r.model.URL), Model: proto.String("fake-model"), ApiKey: proto.String("sk-secret"),
			System: proto.String("Be brief."), RetryMaxDelay: nil,
		},
		Tools:    tool.Merge(lookup, broken),
		LLM:      llm.NewClient(llm.Options{Sleep: func(context.Context, time.Duration) error { return nil }}),
		Observer: tel,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) script(fn func(step int, req *fakemodel.Request) fakemodel.Turn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scriptStep = fn
}

// twoSteps calls lookup, then answers.
func twoSteps(step int, _ *fakemodel.Request) fakemodel.Turn {
	if step == 0 {
		return fakemodel.Turn{
			ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"sk-secret"}`}},
			Usage:     &fakemodel.Usage{Input: 100, Output: 10, CacheRead: 40},
		}
	}
	return fakemodel.Turn{TextChunks: []string{"Found ", "it."}, Usage: &fakemodel.Usage{Input: 130, Output: 5, CacheWrite: 7}}
}

func (r *rig) send(t *testing.T, ctx context.Context, text string) (*agent.Result, error) {
	t.Helper()
	return r.sess.Send(ctx, agent.SendOptions{Input: []*agentv1.Part{history.Text(text)}})
}

// TestSpanTree pins the spans of a two-step run with a tool call: one
// invoke_agent under the caller's span, two chat spans and one
// execute_tool under it, with the GenAI attributes; the model requests
// carry their chat span's traceparent and the tool runs under its span.
func TestSpanTree(t *testing.T) {
	r := newRig(t, true, false)
	r.script(twoSteps)
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	res, err := r.send(t, ctx, "find it")
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 {
		t.Fatalf("steps = %d", res.Steps)
	}
	spans := r.spans.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		if s.SpanContext.TraceID() != parent.TraceID() {
			t.Errorf("span %s is in trace %s, not the caller's", s.Name, s.SpanContext.TraceID())
		}
		byName[s.Name] = append(byName[s.Name], s)
	}
	if len(spans) != 4 || len(byName["invoke_agent writer"]) != 1 || len(byName["chat fake-model"]) != 2 || len(byName["execute_tool lookup"]) != 1 {
		t.Fatalf("spans: %v", names(spans))
	}
	run := byName["invoke_agent writer"][0]
	if run.Parent.SpanID() != parent.SpanID() {
		t.Errorf("invoke_agent's parent = %s, want the caller's span", run.Parent.SpanID())
	}
	wantAttrs(t, run, map[attribute.Key]any{
		attrOperation: "invoke_agent", attrAgentID: "writer", attrProvider: "openai", attrRequestModel: "fake-model",
		attrReason: "no_tool", attrSteps: int64(2), attrToolCalls: int64(1),
		attrInputTokens: int64(230), attrOutputTokens: int64(15), attrCacheReadTokens: int64(40), attrCacheWriteTokens: int64(7),
	})
	for i, c := range byName["chat fake-model"] {
		if c.Parent.SpanID() != run.SpanContext.SpanID() || c.SpanKind != trace.SpanKindClient {
			t.Errorf("chat %d: parent %s kind %s", i, c.Parent.SpanID(), c.SpanKind)
		}
		// The model saw this span's traceparent.
		want := fmt.Sprintf("00-%s-%s-01", parent.TraceID(), c.SpanContext.SpanID())
		if got := r.headers[i].Get("Traceparent"); got != want {
			t.Errorf("request %d traceparent = %q, want %q", i, got, want)
		}
	}
	first, second := byName["chat fake-model"][0], byName["chat fake-model"][1]
	wantAttrs(t, first, map[attribute.Key]any{
		attrOperation: "chat", attrProvider: "openai", attrRequestModel: "fake-model", attrResponseModel: "fake-model", attrStep: int64(1),
		attrInputTokens: int64(100), attrOutputTokens: int64(10), attrCacheReadTokens: int64(40),
		attrFinishReasons: []string{"tool_calls"},
	})
	wantAttrs(t, second, map[attribute.Key]any{attrStep: int64(2), attrFinishReasons: []string{"stop"}, attrCacheWriteTokens: int64(7)})
	if !hasAttr(second, attrFirstChunk) {
		t.Errorf("streamed chat span lacks %s", attrFirstChunk)
	}
	for _, s := range []tracetest.SpanStub{first, second} {
		if hasAttr(s, attrInputMessages) || hasAttr(s, attrSystem) {
			t.Errorf("content in span %s without TraceContent", s.Name)
		}
	}
	ex := byName["execute_tool lookup"][0]
	if ex.Parent.SpanID() != run.SpanContext.SpanID() {
		t.Errorf("execute_tool's parent = %s, want invoke_agent", ex.Parent.SpanID())
	}
	wantAttrs(t, ex, map[attribute.Key]any{attrOperation: "execute_tool", attrToolName: "lookup", attrToolCallID: "call_1", attrToolType: "function"})
	if hasAttr(ex, attrErrorType) || hasAttr(ex, attrToolArguments) {
		t.Errorf("execute_tool attributes: %v", ex.Attributes)
	}
	if r.toolSpan.SpanID() != ex.SpanContext.SpanID() {
		t.Errorf("the tool ran under span %s, want execute_tool's %s", r.toolSpan.SpanID(), ex.SpanContext.SpanID())
	}
	// The run's log line names the trace.
	line := r.logLine(t, "run ended")
	if line["trace_id"] != parent.TraceID().String() || line["reason"] != "no_tool" || line["tool_calls"] != float64(1) ||
		line["steps"] != float64(2) || line["input_tokens"] != float64(230) {
		t.Errorf("log line: %v", line)
	}
}

// TestSpanErrorsAndContent pins error.type on a failed tool and a failed
// model request, retries as events, and content only with TraceContent,
// secrets redacted.
func TestSpanErrorsAndContent(t *testing.T) {
	r := newRig(t, true, true)
	attempts := 0
	r.script(func(step int, req *fakemodel.Request) fakemodel.Turn {
		switch {
		case step == 0:
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_b", Name: "broken", Arguments: `{}`}}}
		case attempts == 0:
			attempts++
			return fakemodel.Turn{Status: 503}
		}
		return fakemodel.Turn{Status: 401}
	})
	_, err := r.send(t, context.Background(), "use sk-secret")
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindAuth {
		t.Fatalf("err = %v, want an auth error", err)
	}
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range r.spans.GetSpans() {
		byName[s.Name] = append(byName[s.Name], s)
	}
	ex := byName["execute_tool broken"]
	if len(ex) != 1 {
		t.Fatalf("spans: %v", names(r.spans.GetSpans()))
	}
	wantAttrs(t, ex[0], map[attribute.Key]any{attrErrorType: "error", attrToolArguments: "{}"})
	if v, _ := attr(ex[0], attrToolResult); !strings.Contains(fmt.Sprint(v), "out of order") {
		t.Errorf("tool result = %v", v)
	}
	chats := byName["chat fake-model"]
	if len(chats) != 2 {
		t.Fatalf("chat spans: %d", len(chats))
	}
	failed := chats[1]
	wantAttrs(t, failed, map[attribute.Key]any{attrErrorType: "auth"})
	if failed.Status.Code.String() != "Error" || len(failed.Events) != 1 || failed.Events[0].Name != "retry" {
		t.Errorf("failed chat: status %v events %v", failed.Status, failed.Events)
	}
	in, _ := attr(chats[0], attrInputMessages)
	if s := fmt.Sprint(in); !strings.Contains(s, `"role":"user"`) || strings.Contains(s, "sk-secret") || !strings.Contains(s, "[redacted]") {
		t.Errorf("input messages = %s", s)
	}
	if s, _ := attr(chats[0], attrSystem); !strings.Contains(fmt.Sprint(s), "Be brief.") {
		t.Errorf("system instructions = %v", s)
	}
	run := byName["invoke_agent writer"][0]
	wantAttrs(t, run, map[attribute.Key]any{attrErrorType: "auth"})
	line := r.logLine(t, "run ended")
	if line["error_kind"] != "auth" || line["steps"] != float64(2) {
		t.Errorf("log line: %v", line)
	}
	if r.logLine(t, "model request failed")["kind"] != "auth" {
		t.Error("no WARN line for the failed model request")
	}
}

// TestUnsampledContent pins that -trace-content costs an unsampled run
// nothing: with the caller's trace not sampled (parentbased_always_on), no
// span records, so no message, argument or result is encoded for one (the
// Redact hook, which every content string goes through, is never called),
// and the model request still carries the trace context, not sampled.
func TestUnsampledContent(t *testing.T) {
	r := newSampledRig(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), true)
	r.script(twoSteps)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8}, Remote: true})
	res, err := r.send(t, trace.ContextWithRemoteSpanContext(context.Background(), parent), "find it")
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 {
		t.Fatalf("steps = %d", res.Steps)
	}
	if spans := r.spans.GetSpans(); len(spans) != 0 {
		t.Errorf("unsampled run exported spans: %v", names(spans))
	}
	if n := r.redactions.Load(); n != 0 {
		t.Errorf("Redact called %d times for spans that do not record", n)
	}
	r.mu.Lock()
	headers := r.headers
	r.mu.Unlock()
	if tp := headers[0].Get("Traceparent"); len(headers) != 2 || !strings.HasPrefix(tp, "00-"+parent.TraceID().String()+"-") || !strings.HasSuffix(tp, "-00") {
		t.Errorf("model request headers: %v", headers)
	}

	// The same agent sampled encodes its content: the count can move.
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}, TraceFlags: trace.FlagsSampled, Remote: true})
	if _, err := r.send(t, trace.ContextWithRemoteSpanContext(context.Background(), sampled), "again"); err != nil {
		t.Fatal(err)
	}
	if n := r.redactions.Load(); n == 0 || len(r.spans.GetSpans()) == 0 {
		t.Errorf("sampled run: %d redactions, spans %v", n, names(r.spans.GetSpans()))
	}
}

// TestMetricsWithoutTracing pins the metrics of runs when tracing is off
// (and that no span context reaches the model or the tool).
func TestMetricsWithoutTracing(t *testing.T) {
	r := newRig(t, false, false)
	before := scrape(t, r.tel)
	r.script(twoSteps)
	if _, err := r.send(t, context.Background(), "find it"); err != nil {
		t.Fatal(err)
	}
	r.script(func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: 401} })
	if _, err := r.send(t, context.Background(), "again"); err == nil {
		t.Fatal("no error")
	}
	diff := delta(before, scrape(t, r.tel))
	want := map[string]float64{
		`agentcore_runs_started_total{kind="send"}`:                                2,
		`agentcore_runs_ended_total{error_kind="",kind="send",reason="no_tool"}`:   1,
		`agentcore_runs_ended_total{error_kind="auth",kind="send",reason="error"}`: 1,
		`agentcore_model_requests_total{outcome="ok",protocol="chat"}`:             2,
		`agentcore_model_requests_total{outcome="auth",protocol="chat"}`:           1,
		`agentcore_tool_calls_total{outcome="ok",tool="lookup"}`:                   1,
		`agentcore_tokens_total{type="input"}`:                                     230,
		`agentcore_tokens_total{type="output"}`:                                    15,
		`agentcore_tokens_total{type="cache_read"}`:                                40,
		`agentcore_tokens_total{type="cache_write"}`:                               7,
		`agentcore_tool_call_duration_seconds_count{tool="lookup"}`:                1,
		`agentcore_run_duration_seconds_count{kind="send"}`:                        2,
		`gen_ai_client_token_usage_count{gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model",gen_ai_token_type="input"}`:                                         2,
		`gen_ai_client_operation_duration_seconds_count{agentcore_protocol="chat",error_type="auth",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`:        1,
		`gen_ai_client_operation_duration_seconds_count{agentcore_protocol="chat",error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`:            2,
		`gen_ai_client_operation_time_to_first_chunk_seconds_count{agentcore_protocol="chat",error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`: 2,
		// The refused request streamed nothing: no time to first chunk.
		`gen_ai_client_operation_time_to_first_chunk_seconds_count{agentcore_protocol="chat",error_type="auth",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`: 0,
	}
	for k, v := range want {
		if diff[k] != v {
			t.Errorf("%s moved by %v, want %v", k, diff[k], v)
		}
	}
	if got := scrape(t, r.tel)["agentcore_runs_active"]; got != 0 {
		t.Errorf("runs active = %v after the runs", got)
	}
	if r.toolSpan.IsValid() || r.headers[0].Get("Traceparent") != "" {
		t.Error("a span context travelled without tracing")
	}
	if _, ok := r.logLine(t, "run ended")["trace_id"]; ok {
		t.Error("trace_id logged without tracing")
	}
}

// TestVersion pins the version -version prints (and agentcore_build_info
// carries) for the builds a binary comes from.
func TestVersion(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	settings := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	cases := []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"go build, no VCS stamp", "", nil, "(devel)"},
		{"go build in a clean checkout", "(devel)", settings("false"), "(devel) 0123456789ab"},
		{"go build with changes", "(devel)", settings("true"), "(devel) 0123456789ab-dirty"},
		{"go install of a tag", "v1.4.0", nil, "v1.4.0"},
		{"a tag built in its checkout", "v1.4.0", settings("false"), "v1.4.0 0123456789ab"},
		{"a pseudo-version names the revision", "v0.0.0-20260102030405-0123456789ab", settings("false"), "v0.0.0-20260102030405-0123456789ab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Version: c.version}, Settings: c.settings}
			if got := versionOf(bi); got != c.want {
				t.Errorf("versionOf = %q, want %q", got, c.want)
			}
		})
	}
	line := VersionLine("agent-server")
	if want := "agent-server " + Version() + " (" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"; line != want {
		t.Errorf("VersionLine = %q, want %q", line, want)
	}
}

// TestTracerProviderFromEnv pins when tracing turns on.
func TestTracerProviderFromEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		tracing bool
		err     string
	}{
		{"nothing set", nil, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true, ""},
		{"traces endpoint over grpc", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, ""},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, ""},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER"},
		{"unknown protocol", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel, err := New(context.Background(), Config{Getenv: func(k string) string { return tc.env[k] }})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_ = tel.Shutdown(ctx)
			}()
			if tel.Tracing() != tc.tracing {
				t.Errorf("tracing = %v, want %v", tel.Tracing(), tc.tracing)
			}
		})
	}
}

// TestHandler pins the HTTP side: /metrics in the text format, pprof only
// when asked.
func TestHandler(t *testing.T) {
	tel, err := New(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pprof bool
		path  string
		code  int
	}{
		{false, "/metrics", 200}, {false, "/debug/pprof/", 404}, {true, "/debug/pprof/", 200}, {true, "/nope", 404},
	} {
		rec := httptest.NewRecorder()
		tel.Handler(tc.pprof).ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.code {
			t.Errorf("pprof=%v GET %s = %d, want %d", tc.pprof, tc.path, rec.Code, tc.code)
		}
		if tc.path == "/metrics" && !strings.Contains(rec.Body.String(), "agentcore_build_info{") {
			t.Errorf("/metrics lacks agentcore_build_info:\n%s", rec.Body.String())
		}
	}
}

// scrape reads the registry as Prometheus would and returns every sample
// by its series name with sorted labels.
func scrape(t *testing.T, tel *Telemetry) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	tel.Handler(false).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return ParseMetrics(t, rec.Body)
}

// delta is after minus before, for every series of after.
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}

// ParseMetrics parses the Prometheus text format with its own parser.
func ParseMetrics(t testing.TB, r interface{ Read([]byte) (int, error) }) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[strings.Replace(key, name, name+"_count", 1)] = float64(m.GetHistogram().GetSampleCount())
				out[strings.Replace(key, name, name+"_sum", 1)] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func attr(s tracetest.SpanStub, k attribute.Key) (any, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == k {
			return kv.Value.AsInterface(), true
		}
	}
	return nil, false
}

func hasAttr(s tracetest.SpanStub, k attribute.Key) bool {
	_, ok := attr(s, k)
	return ok
}

func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[attribute.Key]any) {
	t.Helper()
	for k, v := range want {
		got, ok := attr(s, k)
		if !ok {
			t.Errorf("span %s lacks %s", s.Name, k)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("span %s: %s = %v, want %v", s.Name, k, got, v)
		}
	}
}

// logLine returns the last JSON log line with message msg.
func (r *rig) logLine(t *testing.T, msg string) map[string]any {
	t.Helper()
	var found map[string]any
	for _, line := range strings.Split(r.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["@message"] == msg {
			found = rec
		}
	}
	if found == nil {
		t.Fatalf("no %q line in:\n%s", msg, r.logs.String())
	}
	return found
}

// TestLimitHits pins the limit counter: a refusal whose ErrorInfo reason
// ends in _LIMIT counts under its name, other errors do not, and LimitHit
// is the hook for limits enforced elsewhere.
func TestLimitHits(t *testing.T) {
	tel, err := New(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(reason string) error {
		st, err := status.New(codes.ResourceExhausted, "no").WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: "agentcore"})
		if err != nil {
			t.Fatal(err)
		}
		return st.Err()
	}
	before := scrape(t, tel)
	for _, reason := range []string{"SESSION_LIMIT", "RUN_LIMIT", "HISTORY_LIMIT", "AGENT_BUSY"} {
		_, _ = tel.unary(context.Background(), nil, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) {
			return nil, refuse(reason)
		})
	}
	_ = tel.stream(nil, nil, &grpc.StreamServerInfo{}, func(any, grpc.ServerStream) error { return refuse("RUN_LIMIT") })
	tel.LimitHit("tool_memory")
	diff := delta(before, scrape(t, tel))
	for k, v := range map[string]float64{
		`agentcore_limit_hits_total{limit="sessions"}`:    1,
		`agentcore_limit_hits_total{limit="runs"}`:        2,
		`agentcore_limit_hits_total{limit="history"}`:     1,
		`agentcore_limit_hits_total{limit="tool_memory"}`: 1,
		`agentcore_limit_hits_total{limit="agent_busy"}`:  0,
		`agentcore_grpc_streams_active`:                   0,
	} {
		if diff[k] != v {
			t.Errorf("%s moved by %v, want %v", k, diff[k], v)
		}
	}
}

// TestExportHeaders: Config.Headers go with every span export, in place of
// the environment's (agent-server's OTLP header variables, kept out of its
// environment).
func TestExportHeaders(t *testing.T) {
	got := make(chan string, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.Path + " " + r.Header.Get("Api-Key")
	}))
	defer srv.Close()
	// The exporter reads the endpoint from the process environment.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=from-the-environment")
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
	tel, err := New(context.Background(), Config{Getenv: func(k string) string { return env[k] }, Headers: map[string]string{"api-key": "from-the-config"}})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.tp.Tracer("test").Start(context.Background(), "one")
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-got:
		if g != "/v1/traces from-the-config" {
			t.Errorf("export %q, want /v1/traces with api-key from-the-config", g)
		}
	default:
		t.Fatal("no export reached the collector")
	}
}
