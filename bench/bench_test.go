package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// The benchmarks run in file order: the quiet measurements first, the load last.

// BenchmarkStepOverhead measures what one model round through agent-server
// costs over the fake model's own answer: a one-step send (client → server
// → model → server → client) against the same streamed request sent to the
// fake model directly. Beside it, the same round through the bare relay
// (relay_test.go), the least a gRPC service in Go adds.
func BenchmarkStepOverhead(b *testing.B) {
	turn := fakemodel.Turn{TextChunks: []string{"a", "b", "c"}, Usage: &fakemodel.Usage{Input: 10, Output: 3}}
	system := suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn { return turn })
	a := benchAgents(b, 1, system, []string{})[0]
	rc := benchRelay.get(b)
	body := []byte(`{"model":"fake-model","stream":true,"messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"hi"}]}`)
	direct := func() time.Duration {
		start := time.Now()
		resp, err := http.Post(suite.Model.URL+"/chat/completions", "application/json", bytes.NewReader(body))
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
		if err := relaySend(context.Background(), rc, system, "hi"); err != nil {
			b.Fatal(err)
		}
	}
	var model, total, added, relayAdded []time.Duration
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
		m = direct()
		start = time.Now()
		if err := relaySend(context.Background(), rc, system, "hi"); err != nil {
			b.Fatal(err)
		}
		relayAdded = append(relayAdded, time.Since(start)-m)
	}
	b.StopTimer()
	report(b, "model", model)
	report(b, "step", total)
	report(b, "added", added)
	report(b, "relay-added", relayAdded)
}

// BenchmarkDeltaLatency measures how long a model delta takes from the
// moment the server's engine read it (the event's time) to the client's
// callback, both clocks being this machine's.
func BenchmarkDeltaLatency(b *testing.B) {
	chunks := make([]string, 100)
	for i := range chunks {
		chunks[i] = strconv.Itoa(i) + " "
	}
	system := suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn {
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
// holds every answer for a second, so all streams overlap. It reports how
// many of them completed, the latency each send added over that hold, p50
// and p99, and the peak of model requests in flight together: with the
// memory store (the engine alone) and with the default store, SQLite, which
// every run's start, step and end write to.
func BenchmarkConcurrentSends(b *testing.B) {
	for _, tc := range []struct {
		name string
		srv  *benchServer
	}{{"store=memory", bench}, {"store=sqlite", benchDefault}} {
		b.Run(tc.name, func(b *testing.B) { concurrentSends(b, tc.srv.get(b)) })
	}
}

func concurrentSends(b *testing.B, c *client.Client) {
	const streams, hold = 1000, time.Second
	var inFlight, peak atomic.Int64
	system := suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn {
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
	agents := benchAgentsOn(b, c, streams, system, []string{})
	var (
		lat    []time.Duration
		mu     sync.Mutex
		failed []error
	)
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		for _, a := range agents {
			wg.Go(func() {
				start := time.Now()
				_, err := a.Send(context.Background(), "hi", client.Callbacks{})
				d := time.Since(start) - hold
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed = append(failed, err)
					return
				}
				lat = append(lat, d)
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	if len(failed) > 0 { // the report says the goal (all complete) is missed
		b.Logf("%d of %d sends failed, the first: %v", len(failed), streams*b.N, failed[0])
	}
	if len(lat) > 0 {
		report(b, "added", lat)
	}
	b.ReportMetric(float64(peak.Load()), "peak-streams")
	b.ReportMetric(float64(len(lat))/float64(b.N), "completed")
	b.ReportMetric(streams, "sends")
	b.ReportMetric(float64(streams*b.N)/b.Elapsed().Seconds(), "sends/s")
}

// BenchmarkSendCPU measures the CPU agent-server spends handling one send of
// one model round (the fake model answers with text at once): with every
// tool of bin/plugins offered to the model, and with none, the floor; how
// many times its threads went to sleep per send; and, with
// AGENTCORE_BENCH_PPROF set, how many heap objects it allocated per send
// (with the SetHistory between sends), a figure load does not change.
func BenchmarkSendCPU(b *testing.B) {
	for _, tc := range []struct {
		name  string
		tools []string
	}{{"tools=all", nil}, {"tools=none", []string{}}} {
		b.Run(tc.name, func(b *testing.B) {
			system := suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
			a := benchAgents(b, 1, system, tc.tools)[0]
			for range 20 {
				if _, err := a.Send(context.Background(), "hi", client.Callbacks{}); err != nil {
					b.Fatal(err)
				}
				_ = a.SetHistory(context.Background(), nil)
			}
			pid := bench.server.Cmd.Process.Pid
			var (
				cpu    time.Duration
				sleeps int64
			)
			mallocs := serverMallocs(b)
			b.ResetTimer()
			for range b.N {
				c0, s0 := procCPU(b, pid), procSleeps(b, pid)
				if _, err := a.Send(context.Background(), "hi", client.Callbacks{}); err != nil {
					b.Fatal(err)
				}
				cpu += procCPU(b, pid) - c0
				sleeps += procSleeps(b, pid) - s0
				_ = a.SetHistory(context.Background(), nil)
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-µs/send")
			b.ReportMetric(float64(sleeps)/float64(b.N), "server-sleeps/send")
			if m := serverMallocs(b); m >= 0 && mallocs >= 0 {
				b.ReportMetric(float64(m-mallocs)/float64(b.N), "server-allocs/send")
			}
		})
	}
}

// BenchmarkSendThroughput starts 1,000 sends at once, each one model round
// that the fake model answers at once, every tool offered: sends per second
// through agent-server, beside the fake model's own rate for 1,000 streamed
// requests at once from this process (the floor), and the bare relay's
// rate for 1,000 sends at once (relay_test.go: the least any gRPC
// service in Go does for a send). The load runs on the same cores: it
// reports the CPU time per send of agent-server (server-cpu-µs/send) and of
// this process, the clients and the fake model (load-cpu-µs/send), and the
// same with the relay (relay-cpu-µs/send, relay-load-cpu-µs/send): a send
// through agent-server streams six events (run started, model request,
// delta, model response, step, result), one through the relay two; and
// agent-server's model request is larger than the floor's and the relay's
// (request-bytes: every tool's schema). The fake model and the router read
// only the members they need (stream, model, messages), so that the load
// does not spend these cores decoding schemas a real model decodes on its
// own.
func BenchmarkSendThroughput(b *testing.B) {
	const n = 1000
	var (
		mu      sync.Mutex
		largest []byte // agent-server's request: the relay's and the floor's are 140 bytes
	)
	system := suite.Router.Add(b, func(_ int, r *fakemodel.Request) fakemodel.Turn {
		mu.Lock()
		if len(r.Body) > len(largest) {
			largest = r.Body
		}
		mu.Unlock()
		return fakemodel.Turn{Text: "ok"}
	})
	agents := benchAgents(b, n, system, nil)
	rc := benchRelay.get(b)
	body := []byte(`{"model":"fake-model","stream":true,"messages":[{"role":"system","content":"` + system + `"},{"role":"user","content":"hi"}]}`)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer hc.CloseIdleConnections()
	direct := func() {
		resp, err := hc.Post(suite.Model.URL+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	send := func(a *client.Agent) {
		if _, err := a.Send(context.Background(), "hi", client.Callbacks{}); err != nil {
			b.Error(err)
		}
	}
	all := func(f func(i int)) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { f(i) })
		}
		wg.Wait()
		return time.Since(start)
	}
	viaRelay := func() {
		if err := relaySend(context.Background(), rc, system, "hi"); err != nil {
			b.Error(err)
		}
	}
	all(func(int) { direct() }) // warm the three paths
	all(func(i int) { send(agents[i]) })
	all(func(int) { viaRelay() })
	mu.Lock()
	requestBytes := len(largest)
	mu.Unlock()
	srv, relay, self := bench.server.Cmd.Process.Pid, benchRelay.cmd.Process.Pid, os.Getpid()
	var model, server, relayed time.Duration
	var serverCPU, serverLoad, relayCPU, relayLoad time.Duration
	b.ResetTimer()
	for range b.N {
		for _, a := range agents {
			_ = a.SetHistory(context.Background(), nil)
		}
		model += all(func(int) { direct() })
		s0, l0 := procCPU(b, srv), procCPU(b, self)
		server += all(func(i int) { send(agents[i]) })
		serverCPU, serverLoad = serverCPU+procCPU(b, srv)-s0, serverLoad+procCPU(b, self)-l0
		r0, l0 := procCPU(b, relay), procCPU(b, self)
		relayed += all(func(int) { viaRelay() })
		relayCPU, relayLoad = relayCPU+procCPU(b, relay)-r0, relayLoad+procCPU(b, self)-l0
	}
	b.StopTimer()
	sends := float64(n * b.N)
	perSend := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / sends }
	b.ReportMetric(sends/server.Seconds(), "sends/s")
	b.ReportMetric(sends/model.Seconds(), "model-req/s")
	b.ReportMetric(float64(requestBytes), "request-bytes")
	b.ReportMetric(sends/relayed.Seconds(), "relay-sends/s")
	b.ReportMetric(perSend(serverCPU), "server-cpu-µs/send")
	b.ReportMetric(perSend(serverLoad), "load-cpu-µs/send")
	b.ReportMetric(perSend(relayCPU), "relay-cpu-µs/send")
	b.ReportMetric(perSend(relayLoad), "relay-load-cpu-µs/send")
}

// BenchmarkToolCallInRun compares a warm tool call agent-server makes inside
// a run (the model asks for add at every step; the duration is the tool
// result event's) with the same call made alone from this process on its own
// host over the same plugin after 1 ms of idle, both as the host measures a
// call (Result.Duration). The alone calls go in blocks to two hosts: one
// with agent-server's default tool limits (alone-limits: 1 GiB of memory,
// 1024 processes, by the best mechanism here, as the server's calls run),
// and one without limits (alone), whose difference BenchmarkLimitsWarmPaired
// measures as the limits' cost.
func BenchmarkToolCallInRun(b *testing.B) {
	const steps = 10
	system := suite.Router.Add(b, func(step int, _ *fakemodel.Request) fakemodel.Turn {
		if step < steps {
			return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{Name: "add", Arguments: `{"a":1,"b":2}`}}}
		}
		return fakemodel.Turn{Text: "3"}
	})
	a := benchAgents(b, 1, system, nil)[0]
	var inRun []time.Duration
	cb := client.Callbacks{OnToolResult: func(e *agentv1.ToolResultEvent) {
		inRun = append(inRun, e.GetDuration().AsDuration())
	}}
	run := func() {
		if _, err := a.Send(context.Background(), "go", cb); err != nil {
			b.Fatal(err)
		}
		_ = a.SetHistory(context.Background(), nil)
	}
	run()
	ctl, err := limits.New(limits.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ctl.Close() }) // after the hosts' (cleanups run last first): a host's Limits outlive it
	// mathOn scans the math plugin on a host of its own with cfg.
	mathOn := func(cfg tool.Config) *tool.Set {
		h := tool.NewHost(cfg)
		b.Cleanup(func() { h.Close() })
		set, err := h.Scan(context.Background(), filepath.Join(suite.Plugins, "math"))
		if err != nil {
			b.Fatal(err)
		}
		return set
	}
	plain := mathOn(tool.Config{})
	limited := mathOn(tool.Config{Limits: ctl, LimitPolicy: tool.LimitPolicy{Default: limits.Limits{Memory: 1 << 30, Processes: 1024}}})
	input := json.RawMessage(`{"a":1,"b":2}`)
	var alone, aloneLimits []time.Duration
	inRun = inRun[:0]
	b.ResetTimer()
	for range b.N {
		run()
		for _, side := range []struct {
			set *tool.Set
			d   *[]time.Duration
		}{{plain, &alone}, {limited, &aloneLimits}} {
			// A block per host, its first call not counted: each counted
			// call comes 1 ms after its process's previous one.
			for i := range steps + 1 {
				time.Sleep(time.Millisecond)
				res := side.set.Execute(context.Background(), "add", input, tool.Options{})
				if res.Error {
					b.Fatal(tool.OutputText(res.Output))
				}
				if i > 0 {
					*side.d = append(*side.d, res.Duration)
				}
			}
		}
	}
	b.StopTimer()
	median := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(percentile(d, 50).Nanoseconds()) / 1e3
	}
	b.ReportMetric(median(inRun), "inrun-median-µs")
	b.ReportMetric(median(alone), "alone-median-µs")
	b.ReportMetric(median(aloneLimits), "alone-limits-median-µs")
}

// BenchmarkListTools measures ListTools (every tool of bin/plugins) beside
// GetAgent, a unary call of about the same work without schemas (the floor).
func BenchmarkListTools(b *testing.B) {
	a := benchAgents(b, 1, "list", nil)[0]
	api := benchClient(b).API()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"ListTools", func() error { _, err := api.ListTools(context.Background(), &agentv1.ListToolsRequest{}); return err }},
		{"GetAgent", func() error { _, err := a.Get(context.Background()); return err }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				if err := tc.call(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}
