package window

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// longHistory makes a history of about n tokens in turns of a user message,
// an assistant message with reasoning and a call, and its result; with a
// summary two thirds in when summarised.
func longHistory(n int, summarised bool) []*agentv1.Message {
	var h []*agentv1.Message
	for i := 0; len(h)/3*210 < n; i++ {
		id := fmt.Sprintf("call_%d", i)
		h = append(h,
			history.User(fmt.Sprintf("step %d: %s", i, strings.Repeat("please look at the next file ", 8))),
			history.Assistant(history.Reasoning(strings.Repeat("I should read it. ", 5)), history.Text("Reading."),
				history.ToolCall(id, "read", fmt.Sprintf(`{"path":"src/file_%d.go"}`, i))),
			history.ToolText(id, "read", strings.Repeat("func f() { return 42 } // ok\n", 12)),
		)
		if summarised && i == 2*n/210/3 {
			h = append(h, history.Compact(strings.Repeat("done so far; ", 100)))
		}
	}
	return h
}

// BenchmarkBuild measures building the context of a 100k-token history
// whose counts are cached, as in every step after the first (target: 2 ms).
func BenchmarkBuild(b *testing.B) {
	tools := []*pluginv1.ToolSpec{{Name: "read", Description: "Read a file.", InputSchemaJson: `{"type":"object","properties":{"path":{"type":"string"}}}`}}
	for _, summarised := range []bool{false, true} {
		b.Run(fmt.Sprintf("summary=%v", summarised), func(b *testing.B) {
			c := newCounter(b)
			h := longHistory(100_000, summarised)
			o := Options{System: "You are a coding agent.", Tools: tools, Counter: c, MaxTokens: 128_000}
			first, err := Build(h, o) // counts every message once
			if err != nil {
				b.Fatal(err)
			}
			start, cpu := time.Now(), cpuTime(b)
			for b.Loop() {
				if _, err := Build(h, o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/build")
			// CPU time the process spent (GC included), which a busy machine
			// does not inflate as it does wall time.
			b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/build")
			b.ReportMetric(float64(first.HistoryTokens), "history-tokens")
			b.ReportMetric(float64(len(h)), "messages")
		})
	}
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
