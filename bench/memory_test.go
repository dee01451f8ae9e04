package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// rssSteps are the agents touched when BenchmarkAgentsRSS reads the RSS.
var rssSteps = []int{500, 1000, 2000}

// rssBudget is BenchmarkAgentsRSS's -agent-memory.
const rssBudget = 64 << 20

// BenchmarkAgentsRSS measures agent-server's RSS against the agents touched
// (each given a history of 200 messages of 200 characters with SetHistory,
// on the default store, SQLite), read from its /metrics after 500, 1,000
// and 2,000 agents, in MiB over its RSS at start, for three servers: one
// keeping every agent in memory (-agent-memory 0 -max-loaded-agents 0:
// what the server did before agents were dropped), one within
// -agent-memory 64MiB, and one keeping a single agent
// (-max-loaded-agents 1), the floor: what the same traffic leaves without
// agents (the store's cache, the connections' buffers). It reports
// <mode>-n<N>-rss-MiB for modes all, budget and one, budget-MiB, and for
// the budget's server the p50 of a one-round send to an agent it dropped
// (loaded again from the store: reload-send-p50-ms) beside one to an agent
// it holds (loaded-send-p50-ms).
//
//	go test -run '^$' -bench AgentsRSS -benchtime 1x ./bench
func BenchmarkAgentsRSS(b *testing.B) {
	system := suite.Router.Add(b, func(int, *fakemodel.Request) fakemodel.Turn { return fakemodel.Turn{Text: "ok"} })
	h := e2e.History(200, 200)
	for range b.N {
		for _, mode := range []struct {
			name string
			args []string
		}{
			{"all", []string{"-agent-memory", "0", "-max-loaded-agents", "0"}},
			{"budget", []string{"-agent-memory", fmt.Sprint(rssBudget), "-max-loaded-agents", "0"}},
			{"one", []string{"-max-loaded-agents", "1"}},
		} {
			measureRSS(b, mode.name, mode.args, system, h)
		}
	}
	b.ReportMetric(rssBudget>>20, "budget-MiB")
}

// measureRSS runs BenchmarkAgentsRSS's workload on a server of its own.
func measureRSS(b *testing.B, mode string, args []string, system string, h []*agentv1.Message) {
	srv, err := suite.StartServer(suite.Plugins, append([]string{"-log-level", "info", "-metrics-listen", "127.0.0.1:0", "-min-idle-plugins", "0"}, args...))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			b.Error(err)
		}
	}()
	metrics, _ := srv.WaitLog(b, "metrics listening")["addr"].(string)
	c, err := client.Dial(srv.Addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rss := func() float64 {
		m, err := e2e.Scrape(metrics)
		if err != nil {
			b.Fatal(err)
		}
		return m["process_resident_memory_bytes"]
	}
	ctx := context.Background()
	cfg := &agentv1.AgentConfig{System: proto.String(system)}
	start, touched := rss(), 0
	var ids []string
	for _, n := range rssSteps {
		more, err := e2e.TouchAgents(ctx, c, cfg, n-touched, 4, h)
		if err != nil {
			b.Fatal(err)
		}
		ids, touched = append(ids, more...), n
		b.ReportMetric((rss()-start)/(1<<20), fmt.Sprintf("%s-n%d-rss-MiB", mode, n))
	}
	if mode != "budget" {
		return
	}
	var reload, loaded []time.Duration
	for i := range 20 {
		for _, a := range []struct {
			id string
			to *[]time.Duration
		}{{ids[i], &reload}, {ids[len(ids)-1-i], &loaded}} {
			t := time.Now()
			if _, err := c.Agent(a.id).Send(ctx, "hi", client.Callbacks{}); err != nil {
				b.Fatal(err)
			}
			*a.to = append(*a.to, time.Since(t))
		}
	}
	b.ReportMetric(p50ms(reload), "reload-send-p50-ms")
	b.ReportMetric(p50ms(loaded), "loaded-send-p50-ms")
}
