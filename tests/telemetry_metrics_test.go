package tests

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// scrapeMetrics reads /metrics (e2e.Scrape).
func scrapeMetrics(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	m, err := e2e.Scrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// moved checks that each metric of want moved by exactly its value from before to after.
func moved(t *testing.T, before, after, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if got := after[k] - before[k]; got != v {
			t.Errorf("%s moved by %v, want %v", k, got, v)
		}
	}
}

func testMetrics(t *testing.T, ts *telemetryServer) {
	ctx := e2e.Context(t, 60*time.Second)
	newAgent := func(s e2e.Script) *client.Agent { return ts.agent(t, s, nil) }
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
	moved(t, before, after, want)
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
	// The crashed and the killed call say so on their spans.
	toolErrors(t, ts.recv, map[string]string{"crash": "crash", "hang": "killed"})
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
