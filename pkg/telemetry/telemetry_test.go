package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"
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
	out := &rig{logs: &syncbuf.Buffer{}}
	cfg := Config{
		TraceContent: content,
		Logger:       hclog.New(&hclog.LoggerOptions{JSONFormat: true, Output: out.logs, Level: hclog.Debug}),
		Redact: func(s string) string {
			out.redactions.Add(1)
			return strings.ReplaceAll(s, "sk-secret", "[redacted]")
		},
	}
	if sampler != nil {
		out.spans = tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(out.spans), sdktrace.WithSampler(sampler))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		cfg.TracerProvider = tp
	}
	tel, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	out.tel = tel
	out.model = fakemodel.StartTB(t)
	out.model.Handle(func(req *fakemodel.Request) fakemodel.Turn {
		out.mu.Lock()
		out.headers = append(out.headers, req.Header.Clone())
		fn := out.scriptStep
		out.mu.Unlock()
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
			out.mu.Lock()
			out.toolSpan = trace.SpanContextFromContext(ctx)
			out.mu.Unlock()
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
	out.sess, err = agent.New(agent.Options{
		ID: "writer",
		Config: &agentv1.AgentConfig{
			BaseUrl: proto.String(out.model.URL), Model: proto.String("fake-model"), ApiKey: proto.String("sk-secret"),
			System: proto.String("Be brief."), RetryMaxDelay: nil,
		},
		Tools:    tool.Merge(lookup, broken),
		LLM:      llm.NewClient(llm.Options{Sleep: func(context.Context, time.Duration) error { return nil }}),
		Observer: tel,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
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
