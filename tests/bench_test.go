package tests

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/pkg/llm/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

func report(b *testing.B, name string, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(percentile(d, 50).Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(percentile(d, 99).Microseconds())/1000, name+"-p99-ms")
}

func benchAgents(b *testing.B, n int, system string, tools []string) []*client.Agent {
	b.Helper()
	agents := make([]*client.Agent, n)
	for i := range agents {
		a, err := suite.client.CreateAgent(context.Background(), client.AgentOptions{
			Config: &agentv1.AgentConfig{System: proto.String(system)}, Tools: tools,
		})
		if err != nil {
			b.Fatal(err)
		}
		agents[i] = a
	}
	b.Cleanup(func() {
		for _, a := range agents {
			_ = a.Delete(context.Background())
		}
	})
	return agents
}

// The benchmarks run in file order: the quiet measurements first, the load last.

// BenchmarkStepOverhead measures what one model round through agent-server
// costs over the fake model's own answer: a one-step send (client → server
// → model → server → client) against the same streamed request sent to the
// fake model directly.
func BenchmarkStepOverhead(b *testing.B) {
	turn := fakemodel.Turn{TextChunks: []string{"a", "b", "c"}, Usage: &fakemodel.Usage{Input: 10, Output: 3}}
	system := suite.router.add(b, func(int, *fakemodel.Request) fakemodel.Turn { return turn })
	a := benchAgents(b, 1, system, []string{})[0]
	body := []byte(`{"model":"fake-model","stream":true,"messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"hi"}]}`)
	direct := func() time.Duration {
		start := time.Now()
		resp, err := http.Post(suite.model.URL+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	for range 20 { // warm both paths
		direct()
		if _, err := a.Send(context.Background(), "hi", client.Callbacks{}); err != nil {
			b.Fatal(err)
		}
	}
	var model, total, added []time.Duration
	b.ResetTimer()
	for range b.N {
		_ = a.SetHistory(context.Background(), nil) // every step starts from the same short context
		m := direct()
		start := time.Now()
		if _, err := a.Send(context.Background(), "hi", client.Callbacks{}); err != nil {
			b.Fatal(err)
		}
		t := time.Since(start)
		model, total, added = append(model, m), append(total, t), append(added, t-m)
	}
	b.StopTimer()
	report(b, "model", model)
	report(b, "step", total)
	report(b, "added", added)
}

// BenchmarkDeltaLatency measures how long a model delta takes from the
// moment the server's engine read it (the event's time) to the client's
// callback, both clocks being this machine's.
func BenchmarkDeltaLatency(b *testing.B) {
	chunks := make([]string, 100)
	for i := range chunks {
		chunks[i] = strconv.Itoa(i) + " "
	}
	system := suite.router.add(b, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: chunks, ChunkDelay: 500 * time.Microsecond}
	})
	a := benchAgents(b, 1, system, []string{})[0]
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		_, err := a.Send(context.Background(), "stream", client.Callbacks{
			OnEvent: func(e *agentv1.Event) {
				if e.GetModelDelta() != nil {
					lat = append(lat, time.Since(e.GetTime().AsTime()))
				}
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		_ = a.SetHistory(context.Background(), nil)
	}
	b.StopTimer()
	if len(lat) == 0 {
		b.Fatal("no delta received")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(percentile(lat, 50).Microseconds()), "delta-p50-µs")
	b.ReportMetric(float64(percentile(lat, 99).Microseconds()), "delta-p99-µs")
}

// BenchmarkConcurrentSends keeps 1,000 Send streams open at once: the model
// holds every answer for a second, so all streams overlap. It reports the
// latency each send added over that hold, p50 and p99, and the peak of
// model requests in flight together.
func BenchmarkConcurrentSends(b *testing.B) {
	const streams, hold = 1000, time.Second
	var inFlight, peak atomic.Int64
	system := suite.router.add(b, func(int, *fakemodel.Request) fakemodel.Turn {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(hold)
		inFlight.Add(-1)
		return fakemodel.Turn{Text: "ok"}
	})
	agents := benchAgents(b, streams, system, []string{})
	var lat []time.Duration
	var mu sync.Mutex
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for _, a := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				if _, err := a.Send(context.Background(), "hi", client.Callbacks{}); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start) - hold
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	report(b, "added", lat)
	b.ReportMetric(float64(peak.Load()), "peak-streams")
	b.ReportMetric(float64(streams*b.N)/b.Elapsed().Seconds(), "sends/s")
}
