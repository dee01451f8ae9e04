package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/agent"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// instantModel is an eino chat model in the test's process that answers at
// once with one call of the noop tool: what is left of a step's time is the
// engine's own (context, model layer conversion, history, events, tools).
type instantModel struct{ calls int }

func (m *instantModel) answer() *schema.Message {
	m.calls++
	return &schema.Message{
		Role: schema.Assistant,
		ToolCalls: []schema.ToolCall{{
			ID: fmt.Sprintf("bench_%d", m.calls), Type: "function",
			Function: schema.FunctionCall{Name: "noop", Arguments: `{"n":1}`},
		}},
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

// noopTools is one in-process tool that returns at once.
func noopTools(b *testing.B) *tool.Set {
	s, err := tool.InProcess(tool.Spec{
		Name: "noop", Description: "Does nothing.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
	}, func(context.Context, json.RawMessage, func(string)) (tool.Result, error) {
		return tool.Result{Output: tool.TextOutput("ok")}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchHistory is n messages in whole turns: a user message, an assistant
// call and its result, then a user message and an answer to fill up.
func benchHistory(n int) []*agentv1.Message {
	var h []*agentv1.Message
	for i := 0; len(h)+3 <= n; i++ {
		id := fmt.Sprintf("old_%d", i)
		h = append(h,
			history.User(fmt.Sprintf("step %d: %s", i, strings.Repeat("look at the next file ", 6))),
			history.Assistant(history.Text("Reading."), history.ToolCall(id, "noop", `{"n":1}`)),
			history.ToolText(id, "noop", strings.Repeat("func f() { return 42 }\n", 6)),
		)
	}
	for len(h) < n {
		h = append(h, history.User("and then?"), history.AssistantText("Then the next one."))
	}
	return h[:n]
}

// BenchmarkStep measures the loop's own time per step (target ≤ 200 µs)
// with a 200-message history: each send runs 10 steps against a model and
// a tool that answer at once, with a token budget (so every step builds the
// context with cached counts) and an event listener.
func BenchmarkStep(b *testing.B) {
	for _, budget := range []bool{true, false} {
		b.Run(fmt.Sprintf("budget=%v", budget), func(b *testing.B) { benchStep(b, budget) })
	}
}

func benchStep(b *testing.B, budget bool) {
	const steps = 10
	h := benchHistory(200)
	m := &instantModel{}
	cfg := &agentv1.AgentConfig{Model: proto.String("gpt-4o"), System: proto.String("You are a benchmark."), MaxSteps: proto.Int32(steps)}
	if budget {
		cfg.MaxTokens = proto.Int64(1_000_000)
	}
	s, err := agent.New(agent.Options{Config: cfg, History: h, Tools: noopTools(b), LLM: client, Encoders: encoders, Model: m})
	if err != nil {
		b.Fatal(err)
	}
	events := 0
	opts := agent.SendOptions{Input: input("go on"), OnEvent: func(*agentv1.Event) { events++ }}
	send := func() {
		res, err := s.Send(context.Background(), opts)
		if err != nil || res.Steps != steps {
			b.Fatalf("%v, %v", res, err)
		}
	}
	send() // counts the history's tokens once, as a session's first send does
	var spent, cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		if err := s.SetHistory(h); err != nil {
			b.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime(b)
		send()
		spent += time.Since(start)
		cpu += cpuTime(b) - cpu0
	}
	b.ReportMetric(float64(spent.Microseconds())/float64(b.N*steps), "µs/step")
	// CPU time of the whole process (GC included), which a busy machine
	// inflates less than wall time.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*steps), "cpu-µs/step")
	b.ReportMetric(float64(events)/float64((b.N+1)*steps), "events/step")
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIdleSession measures the heap an idle session holds after one
// send: a small history, a shared tool set, its token counter made. The
// target is at most 64 KB, since a server keeps every agent it holds in
// memory and most of them are idle.
func BenchmarkIdleSession(b *testing.B) {
	tools := noopTools(b)
	m := &instantModel{}
	cfg := &agentv1.AgentConfig{Model: proto.String("gpt-4o"), System: proto.String("You are idle."), MaxTokens: proto.Int64(100_000), MaxSteps: proto.Int32(1)}
	const n = 200
	var perSession float64
	for b.Loop() {
		sessions := make([]*agent.Session, 0, n)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			s, err := agent.New(agent.Options{Config: cfg, Tools: tools, LLM: client, Encoders: encoders, Model: m})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Send(context.Background(), agent.SendOptions{Input: input("hello")}); err != nil {
				b.Fatal(err)
			}
			sessions = append(sessions, s)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSession = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(sessions)
	}
	b.ReportMetric(perSession/1024, "KB/session")
}
