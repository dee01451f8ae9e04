package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/store"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Bench measures what one model step costs a driver: a model response
// appended to the history with the usage totals, and the step's events
// (a request, ten deltas, the response) appended to the run's log.
func Bench(b *testing.B, s store.Store) {
	ctx := context.Background()
	if err := s.CreateAgent(ctx, newAgent("bench", ""), nil); err != nil {
		b.Fatal(err)
	}
	if err := s.StartRun(ctx, &store.Run{ID: "run_bench", AgentID: "bench", Owner: "x"}, time.Hour); err != nil {
		b.Fatal(err)
	}
	msg := history.Assistant(history.Text("a short answer of a few words"), history.ToolCall("c", "add", `{"a":2,"b":3}`))
	usage := &agentv1.Usage{InputTokens: 100, OutputTokens: 20}
	var seq int64
	steps := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := s.AppendHistory(ctx, "bench", i, []*agentv1.Message{msg}, usage, true); err != nil {
			b.Fatal(err)
		}
		evs := make([]*agentv1.Event, 12)
		for k := range evs {
			seq++
			evs[k] = event("run_bench", seq, "delta")
		}
		if err := s.AppendEvents(ctx, evs); err != nil {
			b.Fatal(err)
		}
		steps = append(steps, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(steps)
	b.ReportMetric(float64(steps[len(steps)/2].Microseconds())/1000, "step-p50-ms")
	b.ReportMetric(float64(steps[len(steps)*99/100].Microseconds())/1000, "step-p99-ms")
}
