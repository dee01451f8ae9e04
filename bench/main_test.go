// Package bench holds agentcore's end-to-end benchmarks: the real
// agent-server binary under load, with the real plugins, the fake model
// server on 127.0.0.1 and the Go client on the same cores, each figure
// beside its floor (the fake model alone, the bare relay of relay_test.go).
// make bench-report (bench/report) runs them with the other packages'
// benchmarks; docs/benchmarks.md says what each measures.
package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// suite is what every benchmark shares: the built binaries and the fake
// model. The servers they measure are their own (bench, benchDefault).
var suite *e2e.Suite

func TestMain(m *testing.M) {
	if code, ok := relayMain(); ok { // started as the bare relay
		os.Exit(code)
	}
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		return m.Run() // no benchmark to run (go test ./...): nothing to build
	}
	var err error
	suite, err = e2e.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := stopBench(); err != nil {
		fmt.Fprintln(os.Stderr, "the benchmarks' agent-server did not stop cleanly:", err)
		code = 1
	}
	suite.Close()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
		code = 1
	}
	return code
}

// benchServer is an agent-server the benchmarks measure, started on first
// use; runMain stops it.
type benchServer struct {
	args   []string
	once   sync.Once
	server *e2e.Server
	client *client.Client
	err    error
}

// The benchmarks' servers run as `make run` starts one (info logs), apart
// from the tests' server, which logs at debug. bench has the memory store:
// its figures are the engine's, the store's writes are measured by their
// own benchmarks. benchDefault has the default store (SQLite, in a data
// folder of its own), for what the store adds under load.
var (
	bench        = &benchServer{args: append([]string{"-log-level", "info", "-store", "memory"}, pprofArgs()...)}
	benchDefault = &benchServer{args: []string{"-log-level", "info"}}
)

// pprofArgs serves the memory-store server's /debug/pprof at the address in
// AGENTCORE_BENCH_PPROF, when it is set, to profile agent-server under a
// benchmark's load (go tool pprof http://ADDR/debug/pprof/profile).
func pprofArgs() []string {
	if addr := os.Getenv("AGENTCORE_BENCH_PPROF"); addr != "" {
		return []string{"-metrics-listen", addr, "-pprof"}
	}
	return nil
}

// get starts the server on first use and returns a client of it.
func (s *benchServer) get(b *testing.B) *client.Client {
	b.Helper()
	s.once.Do(func() {
		s.server, s.err = suite.StartServer(suite.Plugins, s.args)
		if s.err == nil {
			s.client, s.err = client.Dial(s.server.Addr)
		}
	})
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s.client
}

// stop stops the server, if it was started.
func (s *benchServer) stop() error {
	if s.client != nil {
		s.client.Close()
	}
	if s.server == nil {
		return nil
	}
	return s.server.Stop()
}

// benchClient returns a client of the benchmarks' memory-store server.
func benchClient(b *testing.B) *client.Client { return bench.get(b) }

// stopBench stops the benchmarks' servers that were started.
func stopBench() error { return errors.Join(bench.stop(), benchDefault.stop(), benchRelay.stop()) }

func benchAgents(b *testing.B, n int, system string, tools []string) []*client.Agent {
	b.Helper()
	return benchAgentsOn(b, benchClient(b), n, system, tools)
}

// benchAgentsOn creates n agents on c, deleted when the benchmark ends.
func benchAgentsOn(b *testing.B, c *client.Client, n int, system string, tools []string) []*client.Agent {
	b.Helper()
	agents := make([]*client.Agent, n)
	for i := range agents {
		a, err := c.CreateAgent(context.Background(), client.AgentOptions{
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
