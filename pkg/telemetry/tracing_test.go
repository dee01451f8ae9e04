package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/llm"
)

// TestSpanTree pins the spans of a two-step run with a tool call: one
// invoke_agent under the caller's span, two chat spans and one
// execute_tool under it, with the GenAI attributes; the model requests
// carry their chat span's traceparent and the tool runs under its span.
func TestSpanTree(t *testing.T) {
	rig := newRig(t, true, false)
	rig.script(twoSteps)
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	res, err := rig.send(t, ctx, "find it")
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 {
		t.Fatalf("steps = %d", res.Steps)
	}
	spans := rig.spans.GetSpans()
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
		if got := rig.headers[i].Get("Traceparent"); got != want {
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
	if rig.toolSpan.SpanID() != ex.SpanContext.SpanID() {
		t.Errorf("the tool ran under span %s, want execute_tool's %s", rig.toolSpan.SpanID(), ex.SpanContext.SpanID())
	}
	// The run's log line names the trace.
	line := rig.logLine(t, "run ended")
	if line["trace_id"] != parent.TraceID().String() || line["reason"] != "no_tool" || line["tool_calls"] != float64(1) ||
		line["steps"] != float64(2) || line["input_tokens"] != float64(230) {
		t.Errorf("log line: %v", line)
	}
}

// TestSpanErrorsAndContent pins error.type on a failed tool and a failed
// model request, retries as events, and content only with TraceContent,
// secrets redacted.
func TestSpanErrorsAndContent(t *testing.T) {
	rig := newRig(t, true, true)
	attempts := 0
	rig.script(func(step int, req *fakemodel.Request) fakemodel.Turn {
		switch {
		case step == 0:
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_b", Name: "broken", Arguments: `{}`}}}
		case attempts == 0:
			attempts++
			return fakemodel.Turn{Status: 503}
		}
		return fakemodel.Turn{Status: 401}
	})
	_, err := rig.send(t, context.Background(), "use sk-secret")
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindAuth {
		t.Fatalf("err = %v, want an auth error", err)
	}
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range rig.spans.GetSpans() {
		byName[s.Name] = append(byName[s.Name], s)
	}
	ex := byName["execute_tool broken"]
	if len(ex) != 1 {
		t.Fatalf("spans: %v", names(rig.spans.GetSpans()))
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
	line := rig.logLine(t, "run ended")
	if line["error_kind"] != "auth" || line["steps"] != float64(2) {
		t.Errorf("log line: %v", line)
	}
	if rig.logLine(t, "model request failed")["kind"] != "auth" {
		t.Error("no WARN line for the failed model request")
	}
}

// TestUnsampledContent pins that -trace-content costs an unsampled run
// nothing: with the caller's trace not sampled (parentbased_always_on), no
// span records, so no message, argument or result is encoded for one (the
// Redact hook, which every content string goes through, is never called),
// and the model request still carries the trace context, not sampled.
func TestUnsampledContent(t *testing.T) {
	rig := newSampledRig(t, sdktrace.ParentBased(sdktrace.AlwaysSample()), true)
	rig.script(twoSteps)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8}, Remote: true})
	res, err := rig.send(t, trace.ContextWithRemoteSpanContext(context.Background(), parent), "find it")
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 {
		t.Fatalf("steps = %d", res.Steps)
	}
	if spans := rig.spans.GetSpans(); len(spans) != 0 {
		t.Errorf("unsampled run exported spans: %v", names(spans))
	}
	if n := rig.redactions.Load(); n != 0 {
		t.Errorf("Redact called %d times for spans that do not record", n)
	}
	rig.mu.Lock()
	headers := rig.headers
	rig.mu.Unlock()
	if tp := headers[0].Get("Traceparent"); len(headers) != 2 || !strings.HasPrefix(tp, "00-"+parent.TraceID().String()+"-") || !strings.HasSuffix(tp, "-00") {
		t.Errorf("model request headers: %v", headers)
	}

	// The same agent sampled encodes its content: the count can move.
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}, TraceFlags: trace.FlagsSampled, Remote: true})
	if _, err := rig.send(t, trace.ContextWithRemoteSpanContext(context.Background(), sampled), "again"); err != nil {
		t.Fatal(err)
	}
	if n := rig.redactions.Load(); n == 0 || len(rig.spans.GetSpans()) == 0 {
		t.Errorf("sampled run: %d redactions, spans %v", n, names(rig.spans.GetSpans()))
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
