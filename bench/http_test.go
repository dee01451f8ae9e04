package bench

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// delivery is what one send's client saw: how many events, from the first
// to the last, and each event's latency from the engine (its time) to the
// client having decoded it.
type delivery struct {
	events      int
	first, last time.Time
	latency     []time.Duration
}

func (d *delivery) add(ev *agentv1.Event) {
	now := time.Now()
	if d.events == 0 {
		d.first = now
	}
	d.events++
	d.last = now
	d.latency = append(d.latency, now.Sub(ev.GetTime().AsTime()))
}

// BenchmarkSSEDelivery compares a send's events over the HTTP gateway
// (server-sent events, decoded from JSON) with the same send over the gRPC
// stream (the Go client), on one server. burst: 500 model deltas as fast as
// the model sends them, for the delivery rate (events per second, first to
// last; sse/grpc-per-event is the ratio of the time per event, goal 1.5 at
// most). paced: 100 deltas 0.5 ms apart, for the latency of each from the
// engine to the client having it decoded, p50 and p99, and what SSE adds.
func BenchmarkSSEDelivery(b *testing.B) {
	h, url := suite.StartHTTPServer(b)
	c, err := client.Dial(h.Addr, client.WithToken(e2e.HTTPToken))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.Run("burst", func(b *testing.B) {
		g, s := compareDelivery(b, url, c, 500, 0)
		b.ReportMetric(g.rate, "grpc-events/s")
		b.ReportMetric(s.rate, "sse-events/s")
		b.ReportMetric(g.rate/s.rate, "sse/grpc-per-event")
	})
	b.Run("paced", func(b *testing.B) {
		g, s := compareDelivery(b, url, c, 100, 500*time.Microsecond)
		b.ReportMetric(float64(g.p50.Microseconds()), "grpc-lat-p50-µs")
		b.ReportMetric(float64(s.p50.Microseconds()), "sse-lat-p50-µs")
		b.ReportMetric(float64(g.p99.Microseconds()), "grpc-lat-p99-µs")
		b.ReportMetric(float64(s.p99.Microseconds()), "sse-lat-p99-µs")
		b.ReportMetric(float64((s.p50 - g.p50).Microseconds()), "sse-added-p50-µs")
	})
}

// compareDelivery runs b.N sends of chunks model deltas (delay apart) over
// each transport, alternately, on an agent of its own: over the HTTP
// gateway at url, and over c.
func compareDelivery(b *testing.B, url string, c *client.Client, chunks int, delay time.Duration) (summary, summary) {
	text := make([]string, chunks)
	for i := range text {
		text[i] = strconv.Itoa(i) + " "
	}
	system := suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{TextChunks: text, ChunkDelay: delay}
	})
	a, err := c.CreateAgent(context.Background(), client.AgentOptions{
		Config: &agentv1.AgentConfig{System: proto.String(system)}, Tools: []string{},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Delete(context.Background())

	viaGRPC := func() *delivery {
		d := &delivery{}
		if _, err := a.Send(context.Background(), "go", client.Callbacks{OnEvent: d.add}); err != nil {
			b.Fatal(err)
		}
		return d
	}
	viaSSE := func() *delivery {
		d := &delivery{}
		req, _ := http.NewRequest("POST", url+"/v1/agents/"+a.ID+":send", strings.NewReader(`{"input": [{"text": "go"}]}`))
		req.Header.Set("Authorization", "Bearer "+e2e.HTTPToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		// The events are read on this goroutine, as a client would.
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok {
				continue
			}
			ev := &agentv1.Event{}
			if err := protojson.Unmarshal(data, ev); err != nil {
				b.Fatal(err)
			}
			d.add(ev)
		}
		if d.events < chunks {
			b.Fatalf("%d events over SSE", d.events)
		}
		return d
	}
	for range 3 { // warm both paths
		viaGRPC()
		viaSSE()
		_ = a.SetHistory(context.Background(), nil)
	}
	var grpcRuns, sseRuns []*delivery
	b.ResetTimer()
	for range b.N {
		grpcRuns = append(grpcRuns, viaGRPC())
		sseRuns = append(sseRuns, viaSSE())
		b.StopTimer()
		_ = a.SetHistory(context.Background(), nil) // each send from the same short context
		b.StartTimer()
	}
	b.StopTimer()
	return summarize(grpcRuns), summarize(sseRuns)
}

type summary struct {
	rate     float64
	p50, p99 time.Duration
}

func summarize(runs []*delivery) summary {
	var events int
	var span time.Duration
	var lat []time.Duration
	for _, d := range runs {
		events += d.events - 1
		span += d.last.Sub(d.first)
		lat = append(lat, d.latency...)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return summary{rate: float64(events) / span.Seconds(), p50: percentile(lat, 50), p99: percentile(lat, 99)}
}
