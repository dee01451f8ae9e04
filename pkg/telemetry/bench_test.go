package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	rtmetrics "runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
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
// with tracing on at 100 % sampling into the server's span processor (the
// SDK's batch processor behind a coalescer) whose exporter drops the spans
// (the export's network cost is the collector's, off the loop). The run's
// log line is written as the server writes it by default, JSON at info
// level (to nowhere). BenchmarkStepLayers adds three variants between off
// and on: tracing=spans, spans made but given to no span processor (the
// SDK's End returns before its snapshot); tracing=syncer, each span given
// at its end to the SDK's synchronous processor and the same exporter (no
// queue, no goroutine); and tracing=batcher, the SDK's batch processor
// alone, handed each span as it ends.
func benchObserver(b *testing.B, variant string) agent.Observer {
	if variant == "none" {
		return nil
	}
	cfg := Config{Logger: hclog.New(&hclog.LoggerOptions{JSONFormat: true, Level: hclog.Info, Output: io.Discard})}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSampler(sdktrace.AlwaysSample())}
	switch variant {
	case "tracing=on":
		opts = append(opts, sdktrace.WithSpanProcessor(spanProcessor(tracetest.NewNoopExporter())))
	case "tracing=batcher":
		opts = append(opts, sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	case "tracing=syncer":
		opts = append(opts, sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	}
	if variant != "tracing=off" {
		tp := sdktrace.NewTracerProvider(opts...)
		b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		cfg.TracerProvider = tp
	}
	tel, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return tel
}

// BenchmarkStep measures a loop step (model request and tool call, both
// answering at once, 200-message history) without telemetry (none), with
// telemetry and tracing off (off), and with tracing on at 100 % sampling
// (on). Its goals (docs/benchmarks.md): off, no measurable change; on,
// ≤ 20 µs more per step. An iteration is a round: a block of sends of each
// variant, in an order that turns from round to round, so that a busy
// machine's ups and downs fall on the three alike. Each variant reports its
// wall time, the process's CPU time (GC and the batch processor included)
// and its allocations per step; added-* are on's and off's CPU time over
// none's.
// In a CPU profile (-cpuprofile) each variant's samples carry the label
// variant=none|off|on: `go tool pprof -tagfocus 'variant=^on$'` shows one
// (the GC's background workers and the batch processor's goroutine carry
// none). A fourth variant, sdk, is the floor of on's added cost: no engine,
// only the OpenTelemetry SDK making the spans a traced send makes (the same
// names, kinds, parents and attributes, recorded from one) into the same
// batch processor and exporter; sdk-cpu-µs/step is what any
// instrumentation of a step with those spans pays the SDK.
func BenchmarkStep(b *testing.B) {
	cpu := benchRounds(b, []benchVariant{{"none", "none"}, {"tracing=off", "off"}, {"tracing=on", "on"}, {"sdk", "sdk"}})
	b.ReportMetric(cpu[1]-cpu[0], "added-off-cpu-µs/step")
	b.ReportMetric(cpu[2]-cpu[0], "added-on-cpu-µs/step")
}

// BenchmarkStepLayers splits BenchmarkStep's added-on into what each layer
// of a traced step adds to the one below it, all measured in the same
// rounds: metrics and the log line (off over none), making the spans with
// the SDK (spans over off: start, attributes, end, the context and the
// GC of it all), the SDK's end-of-span snapshot handed to the exporter
// synchronously (syncer over spans), the batch processor's queue and
// goroutine instead, woken by each span's end (batcher over syncer), and
// what the coalescer saves of that (on over batcher, negative).
func BenchmarkStepLayers(b *testing.B) {
	variants := []benchVariant{{"none", "none"}, {"tracing=off", "off"}, {"tracing=spans", "spans"}, {"tracing=syncer", "syncer"}, {"tracing=batcher", "batcher"}, {"tracing=on", "on"}}
	cpu := benchRounds(b, variants)
	for i := 1; i < len(variants); i++ {
		b.ReportMetric(cpu[i]-cpu[i-1], variants[i].key+"-over-"+variants[i-1].key+"-cpu-µs/step")
	}
	b.ReportMetric(cpu[len(cpu)-1]-cpu[0], "added-on-cpu-µs/step")
}

// benchVariant is a variant of benchObserver and the key its figures and
// profile samples carry.
type benchVariant struct{ name, key string }

// benchRounds runs BenchmarkStep's rounds over the variants, reports each
// one's figures and returns their CPU time per step.
func benchRounds(b *testing.B, variants []benchVariant) []float64 {
	steppers := make([]*stepper, len(variants))
	for i, v := range variants {
		if v.name == "sdk" {
			steppers[i] = newSDKStepper(b)
			continue
		}
		steppers[i] = newStepper(b, benchObserver(b, v.name))
	}
	b.ReportAllocs()
	round := 0
	for b.Loop() {
		for k := range steppers {
			i := (round + k) % len(steppers)
			pprof.Do(context.Background(), pprof.Labels("variant", variants[i].key), func(context.Context) { steppers[i].block(b) })
		}
		round++
	}
	cpu := make([]float64, len(steppers))
	for i, v := range variants {
		st := steppers[i]
		n := float64(st.steps)
		cpu[i] = float64(st.cpu.Nanoseconds()) / 1e3 / n
		b.ReportMetric(float64(st.wall.Nanoseconds())/1e3/n, v.key+"-µs/step")
		b.ReportMetric(cpu[i], v.key+"-cpu-µs/step")
		b.ReportMetric(float64(st.allocs)/n, v.key+"-allocs/step")
		b.ReportMetric(float64(st.bytes)/n, v.key+"-B/step")
	}
	return cpu
}

// stepper runs the sends of one BenchmarkStep variant and sums what they
// cost.
type stepper struct {
	s         *agent.Session
	history   []*agentv1.Message
	opts      agent.SendOptions
	steps     int
	wall, cpu time.Duration
	allocs    uint64
	bytes     uint64
	samples   []rtmetrics.Sample
	// sdk, when set, replaces the sends: the spans of one traced send,
	// replayed on the SDK alone (see newSDKStepper).
	sdk *spanReplay
}

// Steps per send and sends per block: a block (about 100 steps) outlasts
// a GC cycle, so that a cycle's cost falls mostly on the variant whose
// allocations started it.
const (
	benchSteps = 10
	benchSends = 10
)

func newStepper(b *testing.B, obs agent.Observer) *stepper {
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
		Config:  &agentv1.AgentConfig{Model: proto.String("gpt-4o"), System: proto.String("You are a benchmark."), MaxSteps: proto.Int32(benchSteps)},
		History: h, Tools: noop, LLM: llm.NewClient(llm.Options{}), Model: &instantModel{}, Observer: obs,
	})
	if err != nil {
		b.Fatal(err)
	}
	return &stepper{
		s: s, history: h,
		opts:    agent.SendOptions{Input: []*agentv1.Part{history.Text("go on")}, OnEvent: func(*agentv1.Event) {}},
		samples: []rtmetrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}},
	}
}

// block runs benchSends sends from the same history and adds their cost.
func (st *stepper) block(b *testing.B) {
	rtmetrics.Read(st.samples)
	objects0, bytes0 := st.samples[0].Value.Uint64(), st.samples[1].Value.Uint64()
	start, cpu0 := time.Now(), cpuTime(b)
	for range benchSends {
		if st.sdk != nil {
			st.sdk.send()
			continue
		}
		if err := st.s.SetHistory(st.history); err != nil {
			b.Fatal(err)
		}
		if res, err := st.s.Send(context.Background(), st.opts); err != nil || res.Steps != benchSteps {
			b.Fatalf("%v, %v", res, err)
		}
	}
	st.wall += time.Since(start)
	st.cpu += cpuTime(b) - cpu0
	rtmetrics.Read(st.samples)
	st.allocs += st.samples[0].Value.Uint64() - objects0
	st.bytes += st.samples[1].Value.Uint64() - bytes0
	st.steps += benchSends * benchSteps
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

// spanReplay makes the spans of one traced send again, on the SDK alone:
// the run's span, then each child started under it, given its attributes
// and ended in the order the send ended them, then the run's attributes
// and end.
type spanReplay struct {
	tracer   trace.Tracer
	run      recordedSpan
	children []recordedSpan
}

// recordedSpan is what the replay needs of a span the observer made.
type recordedSpan struct {
	name  string
	start []trace.SpanStartOption
	attrs []attribute.KeyValue
}

func (r *spanReplay) send() {
	ctx, run := r.tracer.Start(context.Background(), r.run.name, r.run.start...)
	for _, c := range r.children {
		_, span := r.tracer.Start(ctx, c.name, c.start...)
		span.SetAttributes(c.attrs...)
		span.End()
	}
	run.SetAttributes(r.run.attrs...)
	run.End()
}

// newSDKStepper records the spans of one traced send (a span recorder on
// the on variant's observer) and returns a stepper that replays them into
// a tracer provider set up as on's: 100 % sampling, the batch processor,
// the exporter that drops.
func newSDKStepper(b *testing.B) *stepper {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(rec))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := New(context.Background(), Config{Logger: hclog.NewNullLogger(), TracerProvider: tp})
	if err != nil {
		b.Fatal(err)
	}
	st := newStepper(b, tel)
	st.s.SetHistory(st.history)
	if res, err := st.s.Send(context.Background(), st.opts); err != nil || res.Steps != benchSteps {
		b.Fatalf("%v, %v", res, err)
	}
	ended := rec.Ended()
	replay := &spanReplay{}
	for _, s := range ended {
		r := recordedSpan{name: s.Name(), start: []trace.SpanStartOption{trace.WithSpanKind(s.SpanKind())}, attrs: s.Attributes()}
		if s.Parent().IsValid() {
			replay.children = append(replay.children, r)
		} else {
			replay.run = r
		}
	}
	if replay.run.name == "" || len(replay.children) != 2*benchSteps {
		b.Fatalf("recorded %d spans of a send: want a run and %d children", len(ended), 2*benchSteps)
	}
	on := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(spanProcessor(tracetest.NewNoopExporter())))
	b.Cleanup(func() { _ = on.Shutdown(context.Background()) })
	replay.tracer = on.Tracer(instrumentation, trace.WithInstrumentationVersion(Version()))
	return &stepper{sdk: replay, samples: st.samples}
}
