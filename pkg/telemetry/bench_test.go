package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// instantModel answers at once with a call of the noop tool, so that a
// step's time is the engine's (and its observer's) own.
type instantModel struct{ calls int }

func (m *instantModel) answer() *schema.Message {
	m.calls++
	return &schema.Message{
		Role: schema.Assistant,
		ToolCalls: []schema.ToolCall{{ID: fmt.Sprintf("bench_%d", m.calls), Type: "function",
			Function: schema.FunctionCall{Name: "noop", Arguments: `{}`}}},
		ResponseMeta: &schema.ResponseMeta{FinishReason: "tool_calls", Usage: &schema.TokenUsage{PromptTokens: 5000, CompletionTokens: 10, TotalTokens: 5010}},
	}
}

func (m *instantModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	return m.answer(), nil
}

func (m *instantModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return schema.StreamReaderFromArray([]*schema.Message{m.answer()}), nil
}

func (m *instantModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

// benchObserver returns the observer of a variant: none (the engine's
// NopObserver), telemetry with tracing off (metrics and the log line), and
// with tracing on at 100 % sampling into a batch processor whose exporter
// drops the spans (the export's network cost is the collector's, off the
// loop).
func benchObserver(b *testing.B, variant string) agent.Observer {
	switch variant {
	case "none":
		return nil
	case "tracing=off":
		tel, err := New(context.Background(), Config{})
		if err != nil {
			b.Fatal(err)
		}
		return tel
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := New(context.Background(), Config{TracerProvider: tp})
	if err != nil {
		b.Fatal(err)
	}
	return tel
}

// BenchmarkStep measures a loop step (model request and tool call, both
// answering at once, 200-message history) without telemetry, with
// telemetry and tracing off, and with tracing on at 100 % sampling. The
// issue's goals: off, no measurable change; on, ≤ 20 µs more per step.
func BenchmarkStep(b *testing.B) {
	for _, variant := range []string{"none", "tracing=off", "tracing=on"} {
		b.Run("observer="+variant, func(b *testing.B) { benchStep(b, benchObserver(b, variant)) })
	}
}

func benchStep(b *testing.B, obs agent.Observer) {
	const steps = 10
	var h []*agentv1.Message
	for len(h) < 200 {
		h = append(h, history.User("step "+strings.Repeat("look at the next file ", 6)), history.AssistantText("Then the next one."))
	}
	noop, err := tool.InProcess(tool.Spec{Name: "noop", Description: "Does nothing."},
		func(context.Context, json.RawMessage, func(string)) (tool.Result, error) {
			return tool.Result{Output: tool.TextOutput("ok")}, nil
		})
	if err != nil {
		b.Fatal(err)
	}
	s, err := agent.New(agent.Options{
		Config:  &agentv1.AgentConfig{Model: proto.String("gpt-4o"), System: proto.String("You are a benchmark."), MaxSteps: proto.Int32(steps)},
		History: h, Tools: noop, LLM: llm.NewClient(llm.Options{}), Model: &instantModel{}, Observer: obs,
	})
	if err != nil {
		b.Fatal(err)
	}
	opts := agent.SendOptions{Input: []*agentv1.Part{history.Text("go on")}, OnEvent: func(*agentv1.Event) {}}
	var spent, cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		if err := s.SetHistory(h); err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime(b)
		if res, err := s.Send(context.Background(), opts); err != nil || res.Steps != steps {
			b.Fatalf("%v, %v", res, err)
		}
		spent += time.Since(start)
		cpu += cpuTime(b) - cpu0
	}
	b.ReportMetric(float64(spent.Nanoseconds())/1e3/float64(b.N*steps), "µs/step")
	// CPU time of the process (GC and the batch processor included), which
	// a busy machine inflates less than wall time.
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N*steps), "cpu-µs/step")
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkObserverStep measures the observer alone for one step: a model
// request and a tool call, with a run every ten steps, as the engine calls
// it. It isolates telemetry's share of BenchmarkStep.
func BenchmarkObserverStep(b *testing.B) {
	for _, variant := range []string{"tracing=off", "tracing=on"} {
		b.Run(variant, func(b *testing.B) {
			obs := benchObserver(b, variant)
			run := &agent.RunInfo{AgentID: "bench", RunID: "run_1", Protocol: "chat", Model: "gpt-4o", Usage: &agentv1.Usage{}}
			out := &llm.Result{FinishReason: "tool_calls", Usage: &agentv1.Usage{InputTokens: 5000, OutputTokens: 10}}
			res := tool.Result{Output: tool.TextOutput("ok"), Outcome: tool.OutcomeOK}
			ctx := context.Background()
			var rctx context.Context
			i := 0
			cpu0 := cpuTime(b)
			b.ReportAllocs()
			for b.Loop() {
				if i%10 == 0 {
					run.Start = time.Now()
					rctx = obs.RunStarted(ctx, run)
				}
				m := &agent.ModelCall{Run: run, Step: i%10 + 1, Protocol: "chat", Model: "gpt-4o", Start: time.Now()}
				mctx := obs.ModelStarted(rctx, m)
				obs.ModelEnded(mctx, m, out, nil)
				c := &agent.ToolCall{Run: run, Step: m.Step, ID: "call_1", Name: "noop", Known: true, Arguments: "{}", Start: time.Now()}
				tctx := obs.ToolStarted(rctx, c)
				obs.ToolEnded(tctx, c, res)
				if i%10 == 9 {
					obs.RunEnded(rctx, run, &agent.Result{Steps: 10}, nil)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/step")
		})
	}
}
