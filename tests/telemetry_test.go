package tests

import (
	"context"
	"crypto/rand"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/agentcore/agentcore/pkg/llm/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// receiver is an OTLP trace receiver: the collector's TraceService from the
// OpenTelemetry proto module, served in the test's process.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []recvSpan
}

// recvSpan is a received span with the service that sent it.
type recvSpan struct {
	service string
	*tracepb.Span
}

func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, recvSpan{service, s})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// trace returns the spans received for a trace id.
func (r *receiver) trace(id []byte) []recvSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recvSpan
	for _, s := range r.spans {
		if string(s.GetTraceId()) == string(id) {
			out = append(out, s)
		}
	}
	return out
}

func startReceiver(t *testing.T) *receiver {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{addr: lis.Addr().String()}
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, r)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(lis)
	}()
	t.Cleanup(func() {
		gs.Stop()
		<-done
	})
	return r
}

// telemetryServer is an agent-server exporting traces to a receiver and
// serving /metrics (and pprof), with otelplug as its only plugin.
type telemetryServer struct {
	*serverProc
	recv    *receiver
	metrics string // host:port of /metrics
	client  *client.Client
}

func startTelemetryServer(t *testing.T) *telemetryServer {
	t.Helper()
	recv := startReceiver(t)
	dir := t.TempDir()
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-ldflags=-s -w", "-o", filepath.Join(dir, "otelplug"), "./tests/testdata/otelplug")
	build.Dir = repoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building otelplug: %v\n%s", err, out)
	}
	// No processes started ahead: they would make the counts of plugin
	// starts and reuses depend on when the background starts end.
	srv, err := startServer(dir, []string{"-metrics-listen", "127.0.0.1:0", "-pprof", "-min-idle-plugins", "0"},
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+recv.addr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=agentcore-e2e")
	if err != nil {
		t.Fatal(err)
	}
	ts := &telemetryServer{serverProc: srv, recv: recv}
	t.Cleanup(func() {
		if ts.client != nil {
			ts.client.Close()
		}
		if err := srv.stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v\n%s", err, srv.logs())
		}
	})
	line := ts.waitLog(t, "metrics listening")
	ts.metrics, _ = line["addr"].(string)
	if ts.client, err = client.Dial(srv.addr); err != nil {
		t.Fatal(err)
	}
	return ts
}

// waitLog waits for the server's first JSON log line with message msg.
func (p *serverProc) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if lines := p.logLines(msg); len(lines) > 0 {
			return lines[0]
		}
	}
	t.Fatalf("no %q line in the logs:\n%s", msg, p.logs())
	return nil
}

// logLines returns the server's JSON log lines with message msg.
func (p *serverProc) logLines(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(p.logs(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["@message"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// scrapeMetrics reads /metrics with the Prometheus text parser: every
// sample by series name with sorted labels (histograms as _count and _sum).
func scrapeMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			suffix := ""
			if len(labels) > 0 {
				suffix = "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[name+suffix] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[name+suffix] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"+suffix] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// TestTelemetry runs the real server with tracing to an OTLP receiver and
// /metrics on: the span tree of a traced two-step run reaches the receiver
// with the client's trace id, a plugin's own span under execute_tool; then
// scripted runs move each counter by exactly what they did.
func TestTelemetry(t *testing.T) {
	ts := startTelemetryServer(t)
	t.Run("traces", func(t *testing.T) { testTraces(t, ts) })
	t.Run("metrics", func(t *testing.T) { testMetrics(t, ts) })
}

// TestVersionFlag runs agent-server -version: one line naming the program,
// its version (with the VCS revision the build stamped, if any), and the Go
// version and platform it was built with.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(suite.bin, "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("-version: %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(suite.bin)
	if err != nil {
		t.Fatal(err)
	}
	line := string(out)
	re := regexp.MustCompile(`^agent-server (\(devel\)|v\d+\.\d+\.\d+\S*)( [0-9a-f]{12}(-dirty)?)? \(` + regexp.QuoteMeta(bi.GoVersion+" "+runtime.GOOS+"/"+runtime.GOARCH) + `\)\n$`)
	if !re.MatchString(line) {
		t.Fatalf("-version printed %q", line)
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
	switch {
	case rev == "" && re.FindStringSubmatch(line)[2] != "":
		t.Errorf("-version printed a revision the build did not stamp: %q", line)
	case rev != "" && !strings.Contains(line, " "+rev[:12]):
		t.Errorf("-version printed %q, without the build's revision %s", line, rev[:12])
	case rev != "" && strings.Contains(line, "-dirty") != (modified == "true"):
		t.Errorf("-version printed %q for vcs.modified=%s", line, modified)
	}
}

func testTraces(t *testing.T, ts *telemetryServer) {
	var mu sync.Mutex
	var modelTraceparents []string
	system := suite.router.add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		mu.Lock()
		modelTraceparents = append(modelTraceparents, req.Header.Get("Traceparent"))
		mu.Unlock()
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_t", Name: "traced", Arguments: `{}`}},
				Usage: &fakemodel.Usage{Input: 40, Output: 8}}
		}
		return fakemodel.Turn{Text: "done", Usage: &fakemodel.Usage{Input: 60, Output: 2}}
	})
	ctx := ctxT(t, 30*time.Second)
	a, err := ts.client.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: &system}})
	if err != nil {
		t.Fatal(err)
	}
	traceID, parentID := randomBytes(16), randomBytes(8)
	ctx = metadata.AppendToOutgoingContext(ctx, "traceparent", fmt.Sprintf("00-%x-%x-01", traceID, parentID))
	var toolOut string
	res, err := a.Send(ctx, "trace this", client.Callbacks{OnToolResult: func(e *agentv1.ToolResultEvent) {
		toolOut = e.GetOutput().GetJson()
	}})
	if err != nil || res.Steps != 2 {
		t.Fatalf("send: %v %v", res, err)
	}

	// Wait for the server's batch and the plugin's span.
	var spans []recvSpan
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		spans = ts.recv.trace(traceID)
		if len(spans) >= 6 || time.Now().After(deadline) {
			break
		}
	}
	byName := map[string][]recvSpan{}
	for _, s := range spans {
		byName[s.GetName()] = append(byName[s.GetName()], s)
	}
	rpc, run, chats, exec, work := byName["agentcore.v1.AgentService/Send"], byName["invoke_agent "+a.ID],
		byName["chat fake-model"], byName["execute_tool traced"], byName["plugin.work"]
	if len(spans) != 6 || len(rpc) != 1 || len(run) != 1 || len(chats) != 2 || len(exec) != 1 || len(work) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.service+":"+s.GetName())
		}
		t.Fatalf("spans of the client's trace: %v", names)
	}
	parentOf := func(child, parent recvSpan) {
		t.Helper()
		if string(child.GetParentSpanId()) != string(parent.GetSpanId()) {
			t.Errorf("%s's parent is %x, want %s (%x)", child.GetName(), child.GetParentSpanId(), parent.GetName(), parent.GetSpanId())
		}
	}
	if string(rpc[0].GetParentSpanId()) != string(parentID) || rpc[0].GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("the RPC span's parent is %x (kind %v), want the client's %x", rpc[0].GetParentSpanId(), rpc[0].GetKind(), parentID)
	}
	parentOf(run[0], rpc[0])
	for _, c := range chats {
		parentOf(c, run[0])
	}
	parentOf(exec[0], run[0])
	parentOf(work[0], exec[0])
	if rpc[0].service != "agentcore-e2e" || work[0].service != "otelplug" {
		t.Errorf("services: server %q, plugin %q", rpc[0].service, work[0].service)
	}
	spanAttrs(t, run[0], map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": a.ID, "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "fake-model", "agentcore.run.reason": "no_tool", "agentcore.run.steps": "2",
		"gen_ai.usage.input_tokens": "100", "gen_ai.usage.output_tokens": "10",
	})
	first, second := chats[0], chats[1]
	if first.GetStartTimeUnixNano() > second.GetStartTimeUnixNano() {
		first, second = second, first
	}
	spanAttrs(t, first, map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "fake-model",
		"gen_ai.response.model": "fake-model", "gen_ai.usage.input_tokens": "40", "gen_ai.usage.output_tokens": "8", "gen_ai.response.finish_reasons": "[tool_calls]",
	})
	spanAttrs(t, second, map[string]string{"gen_ai.usage.input_tokens": "60", "gen_ai.response.finish_reasons": "[stop]"})
	spanAttrs(t, exec[0], map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "traced", "gen_ai.tool.call.id": "call_t",
	})
	// The model requests carried their chat span; the plugin's command got
	// the plugin span's context.
	mu.Lock()
	defer mu.Unlock()
	for i, c := range []recvSpan{first, second} {
		want := fmt.Sprintf("00-%x-%x-01", traceID, c.GetSpanId())
		if i >= len(modelTraceparents) || modelTraceparents[i] != want {
			t.Errorf("model request %d traceparent %v, want %s", i, modelTraceparents, want)
		}
	}
	var out struct{ Traceparent, Span string }
	if err := json.Unmarshal([]byte(toolOut), &out); err != nil {
		t.Fatalf("tool output %q: %v", toolOut, err)
	}
	if want := fmt.Sprintf("00-%x-%x-01", traceID, work[0].GetSpanId()); out.Traceparent != want {
		t.Errorf("the command's TRACEPARENT = %q, want %q", out.Traceparent, want)
	}
	// The run's log line names the trace.
	found := false
	for _, line := range ts.logLines("run ended") {
		if line["agent"] == a.ID {
			found = true
			if line["trace_id"] != hex.EncodeToString(traceID) || line["reason"] != "no_tool" || line["tool_calls"] != float64(1) {
				t.Errorf("log line: %v", line)
			}
			if d, _ := line["duration"].(string); !strings.HasSuffix(d, "s") {
				t.Errorf("duration %v is not readable", line["duration"])
			}
		}
	}
	if !found {
		t.Errorf("no run ended line for %s", a.ID)
	}
}

func testMetrics(t *testing.T, ts *telemetryServer) {
	ctx := ctxT(t, 60*time.Second)
	newAgent := func(s script) *client.Agent {
		t.Helper()
		system := suite.router.add(t, s)
		a, err := ts.client.CreateAgent(ctx, client.AgentOptions{Config: &agentv1.AgentConfig{System: &system}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	callThenAnswer := func(name string) script {
		return func(step int, _ *fakemodel.Request) fakemodel.Turn {
			if step == 0 {
				return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: name, Arguments: `{}`}}, Usage: &fakemodel.Usage{Input: 50, Output: 10, CacheRead: 20}}
			}
			return fakemodel.Turn{Text: "ok", Usage: &fakemodel.Usage{Input: 70, Output: 3}}
		}
	}
	before := scrapeMetrics(t, ts.metrics)

	// A success, with a permission asked and granted.
	ok := newAgent(callThenAnswer("traced"))
	if _, err := ok.SendWith(ctx, client.SendOptions{Text: "work", Callbacks: client.Callbacks{
		OnPermission: func(context.Context, *agentv1.PermissionRequestEvent) client.Decision { return client.Allow() },
	}}); err != nil {
		t.Fatal(err)
	}
	// A model error.
	bad := newAgent(func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: 401} })
	if _, err := bad.Send(ctx, "fail", client.Callbacks{}); client.KindOf(err) != "auth" {
		t.Fatalf("err = %v, want auth", err)
	}
	// A tool crash: the model reads it and answers.
	crash := newAgent(callThenAnswer("crash"))
	if _, err := crash.Send(ctx, "crash", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	// A killed tool: the run is stopped while the tool hangs (once its
	// output shows it runs in its process).
	hang := newAgent(callThenAnswer("hang"))
	var during map[string]float64
	_, err := hang.Send(ctx, "hang", client.Callbacks{OnToolOutput: func(*agentv1.ToolOutputEvent) {
		during = scrapeMetrics(t, ts.metrics)
		go func() { _, _ = hang.Stop(ctx) }()
	}})
	if client.KindOf(err) != "aborted" {
		t.Fatalf("err = %v, want aborted", err)
	}

	want := map[string]float64{
		`agentcore_runs_started_total{kind="send"}`:                                   4,
		`agentcore_runs_ended_total{error_kind="",kind="send",reason="no_tool"}`:      2,
		`agentcore_runs_ended_total{error_kind="auth",kind="send",reason="error"}`:    1,
		`agentcore_runs_ended_total{error_kind="aborted",kind="send",reason="error"}`: 1,
		`agentcore_model_requests_total{outcome="ok",protocol="chat"}`:                5,
		`agentcore_model_requests_total{outcome="auth",protocol="chat"}`:              1,
		`agentcore_model_requests_total{outcome="aborted",protocol="chat"}`:           0,
		`agentcore_tool_calls_total{outcome="ok",tool="traced"}`:                      1,
		`agentcore_tool_calls_total{outcome="crash",tool="crash"}`:                    1,
		`agentcore_tool_calls_total{outcome="killed",tool="hang"}`:                    1,
		`agentcore_tool_call_duration_seconds_count{tool="hang"}`:                     1,
		`agentcore_tokens_total{type="input"}`:                                        3*50 + 2*70,
		`agentcore_tokens_total{type="output"}`:                                       3*10 + 2*3,
		`agentcore_tokens_total{type="cache_read"}`:                                   3 * 20,
		`agentcore_plugin_starts_total{plugin="otelplug"}`:                            1,
		`agentcore_plugin_reuses_total{plugin="otelplug"}`:                            2,
		`agentcore_plugin_kills_total{plugin="otelplug"}`:                             1,
		`agentcore_permission_requests_total{decision="allow"}`:                       1,
		`agentcore_agents`:      4,
		`agentcore_runs_active`: 0,
		`gen_ai_client_operation_duration_seconds_count{agentcore_protocol="chat",error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`:     5,
		`gen_ai_client_operation_duration_seconds_count{agentcore_protocol="chat",error_type="auth",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`: 1,
		// Every answer streamed; the refused request streamed nothing.
		`gen_ai_client_operation_time_to_first_chunk_seconds_count{agentcore_protocol="chat",error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`:     5,
		`gen_ai_client_operation_time_to_first_chunk_seconds_count{agentcore_protocol="chat",error_type="auth",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`: 0,
	}
	if during["agentcore_runs_active"] != 1 || during["agentcore_grpc_streams_active"] != 1 {
		t.Errorf("while the tool hung: %v runs, %v streams active, want 1 and 1",
			during["agentcore_runs_active"], during["agentcore_grpc_streams_active"])
	}
	after := scrapeMetrics(t, ts.metrics)
	for k, v := range want {
		if got := after[k] - before[k]; got != v {
			t.Errorf("%s moved by %v, want %v", k, got, v)
		}
	}
	// Both dead processes are reaped in the background: none is left.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		after = scrapeMetrics(t, ts.metrics)
		if after[`agentcore_plugin_processes{plugin="otelplug"}`] == before[`agentcore_plugin_processes{plugin="otelplug"}`]-1 || time.Now().After(deadline) {
			break
		}
	}
	if got, was := after[`agentcore_plugin_processes{plugin="otelplug"}`], before[`agentcore_plugin_processes{plugin="otelplug"}`]; got != was-1 {
		t.Errorf("plugin processes %v → %v: the crashed and the killed one (one of them started here) should be gone", was, got)
	}
	// pprof is served beside /metrics.
	resp, err := http.Get("http://" + ts.metrics + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/debug/pprof/ = %d", resp.StatusCode)
	}
}

// spanAttrs checks attributes of a received span, values as text (arrays
// as [a b]).
func spanAttrs(t *testing.T, s recvSpan, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, kv := range s.GetAttributes() {
		got[kv.GetKey()] = anyValue(kv.GetValue())
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %s: %s = %q, want %q", s.GetName(), k, got[k], v)
		}
	}
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonpb.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, anyValue(e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return ""
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
