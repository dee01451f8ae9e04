package tests

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	"github.com/agentcore/agentcore/pkg/history"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// The workload of TestLoadedAgentsBounded: the measurement (2,000
// agents, 200 messages of 200 characters each, set through the API).
const (
	touchedAgents   = 2000
	touchedMessages = 200
	agentBudget     = 128 << 20
)

// memoryServer is an agent-server with /metrics, its client and the
// metrics' address.
type memoryServer struct {
	*e2e.Server
	c       *client.Client
	metrics string
}

func startMemoryServer(t *testing.T, extra ...string) *memoryServer {
	t.Helper()
	srv, err := suite.StartServer(suite.Plugins, append([]string{"-metrics-listen", "127.0.0.1:0", "-log-level", "info", "-min-idle-plugins", "0"}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	ms := &memoryServer{Server: srv}
	t.Cleanup(func() {
		if ms.c != nil {
			ms.c.Close()
		}
		if err := srv.Stop(); err != nil {
			t.Errorf("agent-server did not stop cleanly: %v", err)
		}
	})
	ms.metrics, _ = srv.WaitLog(t, "metrics listening")["addr"].(string)
	if ms.c, err = client.Dial(srv.Addr); err != nil {
		t.Fatal(err)
	}
	return ms
}

func (ms *memoryServer) scrape(t *testing.T) map[string]float64 {
	t.Helper()
	m, err := e2e.Scrape(ms.metrics)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// touch runs the workload on the server and returns its RSS after it, as
// its metrics report it (process_resident_memory_bytes, from /proc).
func (ms *memoryServer) touch(t *testing.T, system string) ([]string, map[string]float64) {
	t.Helper()
	ctx := e2e.Context(t, 5*time.Minute)
	start := time.Now()
	ids, err := e2e.TouchAgents(ctx, ms.c, &agentv1.AgentConfig{System: proto.String(system)}, touchedAgents, 4, e2e.History(touchedMessages, 200))
	if err != nil {
		t.Fatal(err)
	}
	m := ms.scrape(t)
	t.Logf("%s: %d agents touched in %s: RSS %.1f MB, Go heap in use %.1f MB, agents loaded %v costing %.1f MB",
		ms.Cmd.Args[len(ms.Cmd.Args)-1], touchedAgents, time.Since(start).Round(time.Millisecond), m["process_resident_memory_bytes"]/1e6,
		m["go_memstats_heap_inuse_bytes"]/1e6, m["agentcore_agents_loaded"], m["agentcore_agents_loaded_bytes"]/1e6)
	return ids, m
}

// TestLoadedAgentsBounded is the measurement through the real
// binary: 2,000 agents given 200-message histories with SetHistory
// (default store, SQLite). With -agent-memory 128MiB, the server's RSS
// after it exceeds its baseline by the budget ±10 %; the baseline is the
// same server after the same traffic keeping one agent in memory
// (-max-loaded-agents 1), so that what the traffic itself leaves (the
// store's cache, the connections' buffers) is not counted against the
// agents. Then a send to the agent least recently used, dropped, loads it
// again, its history whole.
func TestLoadedAgentsBounded(t *testing.T) {
	system := suite.Router.Add(t, func(step int, req *fakemodel.Request) fakemodel.Turn {
		return fakemodel.Turn{Text: fmt.Sprintf("reloaded with %d messages", len(req.JSON()["messages"].([]any)))}
	})

	base := startMemoryServer(t, "-max-loaded-agents", "1")
	_, baseline := base.touch(t, system)
	base.c.Close()
	base.c = nil
	if err := base.Stop(); err != nil {
		t.Fatal(err)
	}

	ms := startMemoryServer(t, "-agent-memory", fmt.Sprint(agentBudget), "-max-loaded-agents", "0")
	ids, m := ms.touch(t, system)
	rss, base0 := m["process_resident_memory_bytes"], baseline["process_resident_memory_bytes"]
	t.Logf("RSS %.1f MB over the baseline's %.1f MB: %.1f MB for a budget of %d MB (%.2f×)",
		rss/1e6, base0/1e6, (rss-base0)/1e6, agentBudget>>20, (rss-base0)/agentBudget)
	if d := rss - base0; d < 0.9*agentBudget || d > 1.1*agentBudget {
		t.Errorf("RSS %.1f MB is %.1f MB over the baseline, not the budget (%d MiB) ±10 %%", rss/1e6, d/1e6, agentBudget>>20)
	}
	if cost := m["agentcore_agents_loaded_bytes"]; cost > agentBudget || cost < 0.9*agentBudget {
		t.Errorf("the agents in memory cost %.0f bytes, want the budget's %d less one agent at most", cost, agentBudget)
	}
	if n := m["agentcore_agents_loaded"]; n >= touchedAgents || m[`agentcore_agent_evictions_total{cause="memory"}`] != touchedAgents-n {
		t.Errorf("%v agents loaded, %v dropped for memory", n, m[`agentcore_agent_evictions_total{cause="memory"}`])
	}

	ctx := e2e.Context(t, time.Minute)
	first := ms.c.Agent(ids[0])
	res, err := first.Send(ctx, "are you there?", client.Callbacks{})
	if want := fmt.Sprintf("reloaded with %d messages", touchedMessages+2); err != nil || res.Text != want { // the system prompt, the history, the input
		t.Fatalf("send to the dropped agent: %v, %v; want %q", res, err, want)
	}
	h, err := first.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := history.Render(h[:touchedMessages]), history.Render(e2e.History(touchedMessages, 200)); len(h) != touchedMessages+2 || got != want {
		t.Fatalf("history after the reload: %d messages, the first %d as set: %v", len(h), touchedMessages, got == want)
	}
	if got := ms.scrape(t)["agentcore_agent_reloads_total"]; got != 1 {
		t.Errorf("reloads: %v", got)
	}
}
