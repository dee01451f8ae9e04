package tests

import (
	"context"
	"crypto/rand"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// telemetryServer is an agent-server exporting traces to a receiver and
// serving /metrics (and pprof), with otelplug as its only plugin.
type telemetryServer struct {
	*e2e.Server
	recv    *receiver
	metrics string // host:port of /metrics
	client  *client.Client
	plugins string // the folder of otelplug
}

func startTelemetryServer(t *testing.T) *telemetryServer {
	t.Helper()
	dir := t.TempDir()
	build := e2e.Go("build", "-ldflags=-s -w", "-o", filepath.Join(dir, "otelplug"), "./tests/testdata/otelplug")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building otelplug: %v\n%s", err, out)
	}
	return startTelemetryServerIn(t, dir)
}

// startTelemetryServerIn is startTelemetryServer with the plugins of dir,
// a receiver of its own and the flags extra.
func startTelemetryServerIn(t *testing.T, dir string, extra ...string) *telemetryServer {
	t.Helper()
	recv := startReceiver(t)
	// No processes started ahead: they would make the counts of plugin
	// starts and reuses depend on when the background starts end.
	srv, err := suite.StartServer(dir, append([]string{"-metrics-listen", "127.0.0.1:0", "-pprof", "-min-idle-plugins", "0"}, extra...),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+recv.addr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=agentcore-e2e")
	if err != nil {
		t.Fatal(err)
	}
	ts := &telemetryServer{Server: srv, recv: recv, plugins: dir}
	t.Cleanup(func() {
		if ts.client != nil {
			ts.client.Close()
		}
		if err := srv.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v\n%s", err, srv.Logs())
		}
	})
	line := ts.WaitLog(t, "metrics listening")
	ts.metrics, _ = line["addr"].(string)
	if ts.client, err = client.Dial(srv.Addr); err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestTelemetry runs the real server with tracing to an OTLP receiver and
// /metrics on: the span tree of a traced two-step run reaches the receiver
// with the client's trace id, a plugin's own span under execute_tool; then
// scripted runs move each counter by exactly what they did and mark their
// spans with what went wrong; compactions, manual and automatic, show in
// both; a second server started with -trace-content puts content in spans.
func TestTelemetry(t *testing.T) {
	ts := startTelemetryServer(t)
	t.Run("traces", func(t *testing.T) { testTraces(t, ts) })
	t.Run("metrics", func(t *testing.T) { testMetrics(t, ts) })
	t.Run("outcomes", func(t *testing.T) { testOutcomes(t, ts) })
	t.Run("limit", func(t *testing.T) { testLimit(t, ts) })
	t.Run("compaction", func(t *testing.T) { testCompaction(t, ts) })
	t.Run("trace-content", func(t *testing.T) { testTraceContent(t, startTelemetryServerIn(t, ts.plugins, "-trace-content")) })
}

// TestVersionFlag runs agent-server -version: one line naming the program,
// its version (with the VCS revision the build stamped, if any), and the Go
// version and platform it was built with.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(suite.Bin, "-version").CombinedOutput()
	if err != nil {
		t.Fatalf("-version: %v\n%s", err, out)
	}
	bi, err := buildinfo.ReadFile(suite.Bin)
	if err != nil {
		t.Fatal(err)
	}
	line := string(out)
	re := regexp.MustCompile(`^agent-server (\(devel\)|v\d+\.\d+\.\d+\S*)( [0-9a-f]{12}(-dirty)?)? \(` + regexp.QuoteMeta(bi.GoVersion+" "+runtime.GOOS+"/"+runtime.GOARCH) + `\)\n$`)
	if !re.MatchString(line) {
		t.Fatalf("-version printed %q", line)
	}
	stamped := map[string]string{}
	for _, s := range bi.Settings {
		stamped[s.Key] = s.Value
	}
	rev, modified := stamped["vcs.revision"], stamped["vcs.modified"]
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
	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		mu.Lock()
		modelTraceparents = append(modelTraceparents, req.Header.Get("Traceparent"))
		mu.Unlock()
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_t", Name: "traced", Arguments: `{}`}},
				Usage: &fakemodel.Usage{Input: 40, Output: 8}}
		}
		return fakemodel.Turn{Text: "done", Usage: &fakemodel.Usage{Input: 60, Output: 2}}
	})
	ctx := e2e.Context(t, 30*time.Second)
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
	// Without -trace-content, no content.
	for _, sp := range []recvSpan{first, second, exec[0]} {
		noAttrs(t, sp, contentAttrs...)
	}
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
	for _, line := range ts.LogLines("run ended") {
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

// agent creates an agent on the server that answers with s (cfg, when
// given, for the rest of its configuration).
func (ts *telemetryServer) agent(t *testing.T, s e2e.Script, cfg *agentv1.AgentConfig) *client.Agent {
	t.Helper()
	system := suite.Router.Add(t, s)
	if cfg == nil {
		cfg = &agentv1.AgentConfig{}
	}
	cfg.System = &system
	a, err := ts.client.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// callThenAnswer calls the tool name, then answers.
func callThenAnswer(name string) e2e.Script {
	return func(step int, _ *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: name, Arguments: `{}`}}, Usage: &fakemodel.Usage{Input: 50, Output: 10, CacheRead: 20}}
		}
		return fakemodel.Turn{Text: "ok", Usage: &fakemodel.Usage{Input: 70, Output: 3}}
	}
}

// testOutcomes runs a call that times out, one denied, one left unanswered
// when its run is stopped, and a model request retried after a 503 and a
// 429: each moves its counter, and the spans say how they ended.
func testOutcomes(t *testing.T, ts *telemetryServer) {
	ctx := e2e.Context(t, 60*time.Second)
	before := scrapeMetrics(t, ts.metrics)

	// A call past its tool's timeout; the model reads the result and answers.
	if _, err := ts.agent(t, callThenAnswer("slow"), nil).Send(ctx, "wait", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	// A call denied.
	deny := func(context.Context, *agentv1.PermissionRequestEvent) client.Decision { return client.Deny("not now") }
	if _, err := ts.agent(t, callThenAnswer("traced"), nil).SendWith(ctx, client.SendOptions{Text: "ask", Callbacks: client.Callbacks{OnPermission: deny}}); err != nil {
		t.Fatal(err)
	}
	// A call whose run is stopped while its permission request waits.
	waiting := ts.agent(t, callThenAnswer("traced"), nil)
	_, err := waiting.SendWith(ctx, client.SendOptions{Text: "ask", Callbacks: client.Callbacks{
		OnPermission: func(pctx context.Context, _ *agentv1.PermissionRequestEvent) client.Decision {
			go func() { _, _ = waiting.Stop(ctx) }()
			<-pctx.Done()
			return client.Allow()
		},
	}})
	if client.KindOf(err) != "aborted" {
		t.Fatalf("err = %v, want aborted", err)
	}
	// A request refused with 503, then 429, then answered with reasoning.
	var attempts atomic.Int32
	retried := ts.agent(t, func(int, *fakemodel.Request) fakemodel.Turn {
		switch attempts.Add(1) {
		case 1:
			return fakemodel.Turn{Status: 503}
		case 2:
			return fakemodel.Turn{Status: 429}
		}
		return fakemodel.Turn{Text: "thought it over", Usage: &fakemodel.Usage{Input: 30, Output: 9, Reasoning: 4}}
	}, &agentv1.AgentConfig{RetryMaxDelay: durationpb.New(10 * time.Millisecond)})
	if _, err := retried.Send(ctx, "think", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}

	// The slow and the denied run make two requests each (10 + 3 output
	// tokens), the stopped one one (10), the retried one one (9).
	const streamed = 2*2 + 1 + 1
	moved(t, before, scrapeMetrics(t, ts.metrics), map[string]float64{
		`agentcore_tool_calls_total{outcome="timeout",tool="slow"}`:                   1,
		`agentcore_tool_calls_total{outcome="ok",tool="traced"}`:                      0,
		`agentcore_permission_requests_total{decision="deny"}`:                        1,
		`agentcore_permission_requests_total{decision="unanswered"}`:                  1,
		`agentcore_permission_requests_total{decision="allow"}`:                       0,
		`agentcore_model_retries_total{kind="server",protocol="chat"}`:                1,
		`agentcore_model_retries_total{kind="limit",protocol="chat"}`:                 1,
		`agentcore_model_requests_total{outcome="ok",protocol="chat"}`:                streamed,
		`agentcore_tokens_total{type="reasoning"}`:                                    4,
		`agentcore_tokens_total{type="output"}`:                                       2*13 + 10 + 9,
		`agentcore_runs_ended_total{error_kind="aborted",kind="send",reason="error"}`: 1,
		`agentcore_limit_hits_total{limit="tool"}`:                                    0,
		`gen_ai_client_operation_time_to_first_chunk_seconds_count{agentcore_protocol="chat",error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="fake-model"}`: streamed,
	})
	toolErrors(t, ts.recv, map[string]string{"slow": "timeout"})

	// The retried request's span holds a retry event per refusal.
	chats := ts.recv.runChildren(t, retried.ID)
	if len(chats) != 1 {
		t.Fatalf("spans under the retried run's: %v", spanNames(chats))
	}
	var kinds []string
	for _, e := range chats[0].GetEvents() {
		if e.GetName() == "retry" {
			for _, kv := range e.GetAttributes() {
				if kv.GetKey() == "error.type" {
					kinds = append(kinds, anyValue(kv.GetValue()))
				}
			}
		}
	}
	if fmt.Sprint(kinds) != "[server limit]" {
		t.Errorf("retry events of the chat span: %v, want [server limit]", kinds)
	}
	spanAttrs(t, chats[0], map[string]string{"gen_ai.usage.reasoning.output_tokens": "4", "gen_ai.response.finish_reasons": "[stop]"})
}

// testLimit runs a call past its tool's memory limit (where the server
// enforces memory limits, as TestToolOverItsMemoryLimit): a limit hit, and
// a span that says so.
func testLimit(t *testing.T, ts *telemetryServer) {
	if m := mechanism(t, ts.client); !strings.Contains(m, "enforces memory") {
		t.Skip("no memory limits here: " + m)
	}
	before := scrapeMetrics(t, ts.metrics)
	if _, err := ts.agent(t, callThenAnswer("hog"), nil).Send(e2e.Context(t, 60*time.Second), "grow", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	moved(t, before, scrapeMetrics(t, ts.metrics), map[string]float64{
		`agentcore_tool_calls_total{outcome="limit",tool="hog"}`: 1,
		`agentcore_limit_hits_total{limit="tool"}`:               1,
	})
	toolErrors(t, ts.recv, map[string]string{"hog": "limit"})
}

// testCompaction compacts by hand (Compact) and by budget (a run over its
// max_tokens): a compact span with its chat span under it, a compaction's
// chat span under the run's, and runs of kind compact.
func testCompaction(t *testing.T, ts *telemetryServer) {
	ctx := e2e.Context(t, 60*time.Second)
	summarise := func(_ int, req *fakemodel.Request) fakemodel.Turn {
		if strings.Contains(string(req.Body), "Write the summary now") {
			return fakemodel.Turn{TextChunks: []string{"Goal: ", "none."}, Usage: &fakemodel.Usage{Input: 20, Output: 4}}
		}
		return fakemodel.Turn{Text: "ok", Usage: &fakemodel.Usage{Input: 10, Output: 1}}
	}
	before := scrapeMetrics(t, ts.metrics)
	manual := ts.agent(t, summarise, &agentv1.AgentConfig{MaxTokens: proto.Int64(100000)})
	if _, err := manual.Send(ctx, "hello", client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	if summary, err := manual.Compact(ctx, nil); err != nil || summary != "Goal: none." {
		t.Fatalf("compact: %q, %v", summary, err)
	}
	auto := ts.agent(t, summarise, &agentv1.AgentConfig{MaxTokens: proto.Int64(10)})
	var compacted bool
	if _, err := auto.Send(ctx, "hello, over budget", client.Callbacks{OnCompact: func(e *agentv1.Event) {
		compacted = compacted || e.GetCompactFinished() != nil
	}}); err != nil || !compacted {
		t.Fatalf("send: compacted %v, %v", compacted, err)
	}
	moved(t, before, scrapeMetrics(t, ts.metrics), map[string]float64{
		`agentcore_runs_started_total{kind="compact"}`:                                1,
		`agentcore_runs_ended_total{error_kind="",kind="compact",reason="compacted"}`: 1,
		`agentcore_runs_started_total{kind="send"}`:                                   2,
		`agentcore_runs_ended_total{error_kind="",kind="send",reason="no_tool"}`:      2,
		`agentcore_model_requests_total{outcome="ok",protocol="chat"}`:                4,
	})

	// Compact: RPC span ← compact {agent} ← chat (compaction).
	compacts := ts.recv.named("compact "+manual.ID, 1)
	if len(compacts) != 1 {
		t.Fatalf("%d compact spans", len(compacts))
	}
	spanAttrs(t, compacts[0], map[string]string{"gen_ai.operation.name": "compact", "gen_ai.agent.id": manual.ID})
	// The RPC's span ends after the compact span, so it may come in a later batch.
	rpc := ts.recv.await(1, func(s recvSpan) bool {
		return s.GetName() == "agentcore.v1.AgentService/Compact" && string(s.GetSpanId()) == string(compacts[0].GetParentSpanId())
	})
	if len(rpc) != 1 {
		t.Error("the compact span is not under the Compact RPC's")
	}
	under := ts.recv.children(compacts[0])
	if len(under) != 1 || under[0].GetName() != "chat fake-model" {
		t.Fatalf("spans under compact: %v", spanNames(under))
	}
	spanAttrs(t, under[0], map[string]string{"agentcore.compaction": "true", "gen_ai.usage.input_tokens": "20"})

	// A run over budget: invoke_agent ← chat (compaction), chat.
	chats := ts.recv.runChildren(t, auto.ID)
	if len(chats) != 2 {
		t.Fatalf("spans under the run: %v", spanNames(chats))
	}
	if chats[0].GetStartTimeUnixNano() > chats[1].GetStartTimeUnixNano() {
		chats[0], chats[1] = chats[1], chats[0]
	}
	spanAttrs(t, chats[0], map[string]string{"agentcore.compaction": "true", "gen_ai.usage.input_tokens": "20"})
	spanAttrs(t, chats[1], map[string]string{"agentcore.compaction": "", "gen_ai.usage.input_tokens": "10"})
}

// testTraceContent runs a traced run on a server started with
// -trace-content: its spans hold the messages, the tool's arguments and
// result, with the server's API key removed.
func testTraceContent(t *testing.T, ts *telemetryServer) {
	ctx := e2e.Context(t, 30*time.Second)
	a := ts.agent(t, func(step int, _ *fakemodel.Request) fakemodel.Turn {
		if step == 0 {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "call_c", Name: "traced", Arguments: `{}`}}}
		}
		return fakemodel.Turn{Text: "all done"}
	}, nil)
	if _, err := a.Send(ctx, "look it up with "+e2e.TestKey, client.Callbacks{}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range ts.recv.runChildren(t, a.ID) {
		for _, kv := range s.GetAttributes() {
			if slices.Contains(contentAttrs, kv.GetKey()) {
				got[kv.GetKey()] += anyValue(kv.GetValue())
			}
		}
	}
	for key, want := range map[string]string{
		"gen_ai.system_instructions": "e2e:",
		"gen_ai.input.messages":      "look it up with",
		"gen_ai.output.messages":     "all done",
		"gen_ai.tool.call.arguments": "{}",
		"gen_ai.tool.call.result":    "traceparent",
	} {
		if !strings.Contains(got[key], want) {
			t.Errorf("%s = %q, want it to hold %q", key, got[key], want)
		}
		if strings.Contains(got[key], e2e.TestKey) {
			t.Errorf("%s holds the server's API key", key)
		}
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
