package telemetry

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// TestMetricsWithoutTracing pins the metrics of runs when tracing is off
// (and that no span context reaches the model or the tool).
func TestMetricsWithoutTracing(t *testing.T) {
	rig := newRig(t, false, false)
	before := scrape(t, rig.tel)
	rig.script(twoSteps)
	if _, err := rig.send(t, context.Background(), "find it"); err != nil {
		t.Fatal(err)
	}
	rig.script(func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Status: 401} })
	if _, err := rig.send(t, context.Background(), "again"); err == nil {
		t.Fatal("no error")
	}
	diff := delta(before, scrape(t, rig.tel))
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
	if got := scrape(t, rig.tel)["agentcore_runs_active"]; got != 0 {
		t.Errorf("runs active = %v after the runs", got)
	}
	if rig.toolSpan.IsValid() || rig.headers[0].Get("Traceparent") != "" {
		t.Error("a span context travelled without tracing")
	}
	if _, ok := rig.logLine(t, "run ended")["trace_id"]; ok {
		t.Error("trace_id logged without tracing")
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

// TestChildRunAndBudgetMetrics pins the metrics of a child run that its
// tree's budget ended.
func TestChildRunAndBudgetMetrics(t *testing.T) {
	rig := newRig(t, false, false)
	before := scrape(t, rig.tel)
	rig.script(twoSteps)
	root := agent.NewBudget(&agentv1.Budget{ModelRequests: proto.Int64(1)}, nil)
	res, err := rig.sess.Send(context.Background(), agent.SendOptions{Input: []*agentv1.Part{history.Text("find it")}, Budget: agent.NewBudget(nil, root)})
	if err != nil || res.Reason != agentv1.EndReason_END_REASON_BUDGET {
		t.Fatalf("%v, %v", res, err)
	}
	diff := delta(before, scrape(t, rig.tel))
	for k, v := range map[string]float64{
		`agentcore_child_runs_total`:                                             1,
		`agentcore_budget_exceeded_total{limit="model_requests"}`:                1,
		`agentcore_runs_ended_total{error_kind="",kind="send",reason="budget"}`:  1,
		`agentcore_runs_ended_total{error_kind="",kind="send",reason="no_tool"}`: 0,
	} {
		if diff[k] != v {
			t.Errorf("%s moved by %v, want %v", k, diff[k], v)
		}
	}
}
