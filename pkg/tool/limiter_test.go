package tool

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParallelCallsOverlapAndTheLimiterCapsThem(t *testing.T) {
	type span struct{ Start, End int64 }
	run := func(t *testing.T, set *Set, tool, input string, lim *Limiter) []span {
		var mu sync.Mutex
		var spans []span
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				res := set.Execute(context.Background(), tool, json.RawMessage(input), Options{Limiter: lim})
				var s span
				if err := json.Unmarshal([]byte(res.Output.GetJson()), &s); err != nil || res.Error {
					t.Errorf("%s: %v", tool, res.Output)
				}
				mu.Lock()
				spans = append(spans, s)
				mu.Unlock()
			})
		}
		wg.Wait()
		return spans
	}
	maxOverlap := func(spans []span) int {
		best := 0
		for _, a := range spans {
			n := 0
			for _, b := range spans {
				if b.Start <= a.Start && a.Start < b.End {
					n++
				}
			}
			best = max(best, n)
		}
		return best
	}
	h := newHost(t, Config{MaxIdle: 8})
	set := scan(t, h, dirs.good)
	// Each call waits until all 8 have arrived: that only ends if they
	// really run at the same time; then each records when it ran.
	input, _ := json.Marshal(map[string]any{"dir": t.TempDir(), "n": 8, "ms": 100})
	if got := maxOverlap(run(t, set, "barrier", string(input), nil)); got != 8 {
		t.Errorf("without a cap, %d of 8 calls overlapped", got)
	}
	if got := maxOverlap(run(t, set, "span", `{"ms":100}`, NewLimiter(2))); got > 2 || got < 1 {
		t.Errorf("with a cap of 2, %d calls overlapped", got)
	}
}

func TestLimiterQueueHonoursCancel(t *testing.T) {
	running := make(chan struct{}, 1)
	set := mustInProcess(t, Spec{Name: "wait"}, func(ctx context.Context, _ json.RawMessage, _ func(string)) (Result, error) {
		running <- struct{}{}
		<-ctx.Done()
		return Result{}, nil
	})
	lim := NewLimiter(1)
	busy, stopBusy := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- set.Execute(busy, "wait", nil, Options{Limiter: lim}) }()
	<-running
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := set.Execute(ctx, "wait", nil, Options{Limiter: lim})
	if !res.Error || !strings.Contains(OutputText(res.Output), "waiting for its turn") {
		t.Fatalf("queued call = %+v", res)
	}
	stopBusy()
	<-done
	if NewLimiter(0) != nil {
		t.Fatal("NewLimiter(0) should mean no limit")
	}
}
