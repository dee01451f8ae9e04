// Command report runs the benchmarks that have a goal, with their floors,
// in one go on this machine, and prints each figure beside its floor, the
// ratio (or the difference), the goal and whether it is met (make
// bench-report; docs/benchmarks.md says what each figure measures). The
// floors are measured in the same run as the figures, so the ratios hold on
// any machine; the absolute numbers are this machine's. The PostgreSQL
// store is measured when AGENTCORE_TEST_POSTGRES names a database.
//
// It runs `go test -bench` once per package, one package at a time (the
// benchmarks would disturb each other), and reads the metrics the
// benchmarks report. With -rounds N it runs them all N times in turn and
// shows, for each row, the run whose ratio (or difference) is the median,
// the range over the runs and in how many the goal was met.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// suites are the benchmark runs, one per package. benchtime, when set,
// replaces the -benchtime flag (benchmarks whose iteration is a whole
// scenario); longer, when set, multiplies a -benchtime duration (figures
// that are small differences of CPU time, whose noise, the GC cycles that
// fall in one variant's turn or another's, shrinks with the number of
// rounds); a suite whose package is not in this checkout, or that needs a
// variable (needs) that is not set, is skipped.
var suites = []struct {
	pkg, bench, benchtime, needs string
	longer                       int
}{
	{pkg: "./pkg/tool/", bench: "^(BenchmarkWarmCall|BenchmarkLimitsWarmPaired|BenchmarkWarmCallParts|BenchmarkWarmCallAfterIdle|BenchmarkCallAfterKill|BenchmarkColdStart|BenchmarkFloorPluginHandshake|BenchmarkFloorKillReap|BenchmarkRSSGrowth200Cycles)$"},
	// Iterations of tens of milliseconds (processes started, killed): a
	// duration gives 30 to 80 of them, too few for a median to settle
	// within the goals' 10 %.
	{pkg: "./pkg/tool/", bench: "^(BenchmarkKillToResult|BenchmarkKillToResultLimits|BenchmarkLimitsColdPaired)$", benchtime: "200x"},
	// Each iteration starts toolhost and a plugin, and kills both: about
	// half a second under load.
	{pkg: "./cmd/toolhost/", bench: "^BenchmarkCancelToResult$", benchtime: "40x"},
	// An iteration sets five histories, up to 20,000 messages, and sends.
	{pkg: "./bench/", bench: "^BenchmarkSendHistory$", benchtime: "7x"},
	{pkg: "./bench/", bench: "^(BenchmarkSendCPU|BenchmarkSendThroughput|BenchmarkStepOverhead|BenchmarkToolCallInRun|BenchmarkListTools|BenchmarkSSEDelivery)$"},
	{pkg: "./pkg/server/", bench: "^BenchmarkStoreAddedLatency$", benchtime: "150x"},
	{pkg: "./bench/", bench: "^BenchmarkConcurrentSends$", benchtime: "1x"},
	{pkg: "./bench/", bench: "^(BenchmarkOutputFlood|BenchmarkStoreBytes)$", benchtime: "1x"},
	// An iteration starts three servers and touches 2,000 agents on each.
	{pkg: "./bench/", bench: "^BenchmarkAgentsRSS$", benchtime: "1x"},
	{pkg: "./pkg/server/", bench: "^BenchmarkAttachReplay$"},
	{pkg: "./pkg/server/", bench: "^BenchmarkReplicaAbort$", benchtime: "100x", needs: "AGENTCORE_TEST_POSTGRES"},
	{pkg: "./pkg/telemetry/", bench: "^(BenchmarkStep|BenchmarkObserverStep)$", longer: 3},
	// GCMark in a process of its own: BenchmarkCountTiktoken leaves
	// tiktoken-go's tables in that library's global cache, which would
	// raise every GCMark variant's floor by tens of milliseconds.
	{pkg: "./pkg/tokens/", bench: "^BenchmarkGCMark$", benchtime: "100x"},
	{pkg: "./pkg/tokens/", bench: "^(BenchmarkCount|BenchmarkCountTiktoken)$"},
}

// metrics holds every reported value by "Benchmark/sub unit".
type metrics map[string]float64

func (m metrics) get(key string) (float64, bool) {
	v, ok := m[key]
	return v, ok
}

// sum adds metrics: "A unit+B unit".
func (m metrics) sum(keys string) (float64, bool) {
	total := 0.0
	for _, k := range strings.Split(keys, "+") {
		v, ok := m.get(k)
		if !ok {
			return 0, false
		}
		total += v
	}
	return total, true
}

// row is one line of the report: a figure, its floor, and the goal on them.
type row struct {
	area         string // what part of agentcore the figure measures
	what, unit   string
	fig, floor   string // metric keys (summed with +)
	floorWhat    string
	scale        float64 // multiplies both values (e.g. ms to µs); 0 means 1
	goal         string
	met          func(fig, floor float64) bool // nil: no goal to check here
	delta        bool                          // compare by difference (fig − floor), not ratio
	absolute     bool                          // the goal is on the figure alone: the floor is context, no ratio
	higherBetter bool
	missing      string // said instead of "(missing …)" when the figure is absent
}

var rows = []row{
	// The plugin host's calls: the warm path, a call after a kill, cold start, kill to result.
	{area: "tool calls", what: "warm tool call, p50", unit: "µs", fig: "BenchmarkWarmCallParts execute-median-µs",
		floor: "BenchmarkWarmCallParts floor-median-µs", floorWhat: "bare grpc-go bidi round trip",
		goal: "≤ 1.15×", met: ratioAtMost(1.15)},
	{area: "tool calls", what: "CPU per warm call, both processes", unit: "µs",
		fig:   "BenchmarkWarmCallParts execute-host-cpu-µs+BenchmarkWarmCallParts execute-peer-cpu-µs",
		floor: "BenchmarkWarmCallParts floor-host-cpu-µs+BenchmarkWarmCallParts floor-peer-cpu-µs", floorWhat: "the same for the bidi round trip",
		goal: "≤ 1.15×", met: ratioAtMost(1.15)},
	{area: "tool calls", what: "… against the bare server also run with GOMAXPROCS=1, as the host runs plugins, p50", unit: "µs", fig: "BenchmarkWarmCallParts execute-median-µs",
		floor: "BenchmarkWarmCallParts floor1-median-µs", floorWhat: "bare grpc-go bidi round trip, server at GOMAXPROCS=1",
		goal: "(our layers' share, the runtime setting alike)"},
	{area: "tool calls", what: "… its CPU, against that server's", unit: "µs",
		fig:   "BenchmarkWarmCallParts execute-host-cpu-µs+BenchmarkWarmCallParts execute-peer-cpu-µs",
		floor: "BenchmarkWarmCallParts floor1-host-cpu-µs+BenchmarkWarmCallParts floor1-peer-cpu-µs", floorWhat: "the same for that round trip",
		goal: "(our layers' share, the runtime setting alike)"},
	{area: "tool calls", what: "… the Session round trip alone on the plugin, p50", unit: "µs", fig: "BenchmarkWarmCallParts session-median-µs",
		floor: "BenchmarkWarmCallParts floor-median-µs", floorWhat: "bare grpc-go bidi round trip", goal: "(sdk/tool and go-plugin's share)"},
	{area: "tool calls", what: "a call 100 ms (a fast model round) after a kill (prewarmed), p50", unit: "µs", fig: "BenchmarkCallAfterKill median-µs",
		floor: "BenchmarkWarmCallAfterIdle/pause=100ms median-µs", floorWhat: "a warm call after 100 ms idle",
		goal: "a warm call (≤ 1.15×)", met: ratioAtMost(1.15)},
	{area: "tool calls", what: "cold start to first result, p50", unit: "µs", fig: "BenchmarkColdStart median-µs",
		floor: "BenchmarkFloorPluginHandshake median-µs", floorWhat: "the plugin binary's own start to handshake", goal: "(rare: processes are reused and prewarmed)"},
	{area: "tool calls", what: "cancel → call returns (tree known dead), p50", unit: "µs", fig: "BenchmarkKillToResult median-µs",
		floor: "BenchmarkKillToResult busy-floor-median-µs", floorWhat: "SIGKILL and reap of the same plugin busy in the same tool, same iterations",
		goal: "≤ 1.1×", met: ratioAtMost(1.1)},
	{area: "tool calls", what: "… against an idle plugin's kill and reap", unit: "µs", fig: "BenchmarkKillToResult median-µs",
		floor: "BenchmarkKillToResult floor-median-µs", floorWhat: "SIGKILL and reap of an idle plugin, same iterations",
		goal: "(an idle process dies at another pace)"},
	{area: "tool calls", what: "host RSS growth over 200 start→call→kill cycles", unit: "MB", fig: "BenchmarkRSSGrowth200Cycles rss-growth-MB",
		goal: "≤ 2 MB", met: func(fig, _ float64) bool { return fig <= 2 }},

	// What the tool processes' resource limits cost.
	{area: "limits", what: "warm tool call under limits (best mechanism here), p50", unit: "µs", fig: "BenchmarkLimitsWarmPaired limits-median-µs",
		floor: "BenchmarkLimitsWarmPaired plain-median-µs", floorWhat: "the warm call without limits, same iterations",
		goal: "not slower (≤ 1.02×: measured in the same iterations)", met: ratioAtMost(1.02)},
	{area: "limits", what: "… the warm call without limits, its plugin moved into cgroups of the limited one's shape (no limit set, nothing read), p50", unit: "µs",
		fig: "BenchmarkLimitsWarmPaired shaped-median-µs", floor: "BenchmarkLimitsWarmPaired plain-median-µs", floorWhat: "the warm call without limits, same iterations",
		goal: "(what the kernel charges a process in those cgroups)"},
	{area: "limits", what: "… the warm call under limits against that one", unit: "µs",
		fig: "BenchmarkLimitsWarmPaired limits-median-µs", floor: "BenchmarkLimitsWarmPaired shaped-median-µs", floorWhat: "the same cgroups, nothing read, same iterations",
		goal: "(the host's checks: under cgroup v1 a read of pids.events per call)"},
	{area: "limits", what: "cold start under limits (cgroups made or reused, process born in them), p50", unit: "µs", fig: "BenchmarkLimitsColdPaired limits-median-µs",
		floor: "BenchmarkLimitsColdPaired plain-median-µs", floorWhat: "the cold start without limits, same iterations",
		goal: "≤ +500 µs", met: func(fig, floor float64) bool { return fig-floor <= 500 }, delta: true},
	{area: "tool calls", what: "cancel (Ctrl-C) → result through toolhost (pkg/tool as a library), a tool with a grandchild (bash and sleep), p50", unit: "µs",
		fig: "BenchmarkCancelToResult/tool=shell median-µs", floor: "BenchmarkCancelToResult/tool=shell floor-median-µs",
		floorWhat: "SIGKILL and reap of an idle plugin, same iterations", goal: "≤ 1.5×", met: ratioAtMost(1.5)},
	{area: "tool calls", what: "… a spinning Go tool, no grandchild", unit: "µs",
		fig: "BenchmarkCancelToResult/tool=loop median-µs", floor: "BenchmarkCancelToResult/tool=loop floor-median-µs",
		floorWhat: "SIGKILL and reap of an idle plugin, same iterations"},
	{area: "limits", what: "cancel → call returns under limits (group known empty), p50", unit: "µs", fig: "BenchmarkKillToResultLimits median-µs",
		floor: "BenchmarkKillToResultLimits busy-floor-median-µs", floorWhat: "the same plugin's kill and reap, no limits, same iterations",
		goal: "≤ 1.1×, as without limits", met: ratioAtMost(1.1)},

	// A send through the agent-server binary, against the fake model alone and the bare relay.
	{area: "sends", what: "one model round through agent-server, added p50", unit: "µs", scale: 1000, absolute: true, fig: "BenchmarkStepOverhead added-p50-ms",
		floor: "BenchmarkStepOverhead model-p50-ms", floorWhat: "the fake model's own answer, p50",
		goal: "(a regression figure: the bare relay alone adds more than the former ≤ 300 µs)"},
	{area: "sends", what: "… added p99", unit: "µs", scale: 1000, absolute: true, fig: "BenchmarkStepOverhead added-p99-ms",
		floor: "BenchmarkStepOverhead model-p99-ms", floorWhat: "the fake model's own answer, p99", goal: "≤ 5 ms",
		met: func(fig, _ float64) bool { return fig <= 5000 }},
	{area: "sends", what: "… floor: the bare relay's added p50 (grpc-go Send in, one net/http SSE request out, no engine)", unit: "µs", scale: 1000, absolute: true,
		fig: "BenchmarkStepOverhead relay-added-p50-ms", floor: "BenchmarkStepOverhead model-p50-ms", floorWhat: "the fake model's own answer, p50",
		goal: "(the least any Go gRPC service adds here)"},
	{area: "sends", what: "… agent-server's added p50 over the bare relay's", unit: "µs", scale: 1000, delta: true,
		fig: "BenchmarkStepOverhead added-p50-ms", floor: "BenchmarkStepOverhead relay-added-p50-ms", floorWhat: "the bare relay's added p50",
		goal: "(the engine's share)"},
	{area: "sends", what: "per-message cost of a one-round send: slope of its p50 over the history's length (10 to 20,000 messages of 200 characters)", unit: "µs/msg",
		fig: "BenchmarkSendHistory send-µs/msg", floor: "BenchmarkSendHistory floor-µs/msg",
		floorWhat: "the same request body encoded, sent straight to the fake model and its answer parsed, no engine", goal: "≤ 1.5×", met: ratioAtMost(1.5)},
	{area: "sends", what: "… one-round send p50, 10 messages", unit: "ms", fig: "BenchmarkSendHistory n10-send-p50-ms",
		floor: "BenchmarkSendHistory n10-floor-p50-ms", floorWhat: "the same body straight to the fake model"},
	{area: "sends", what: "… 1,000 messages", unit: "ms", fig: "BenchmarkSendHistory n1000-send-p50-ms",
		floor: "BenchmarkSendHistory n1000-floor-p50-ms", floorWhat: "the same body straight to the fake model"},
	{area: "sends", what: "… 5,000 messages", unit: "ms", fig: "BenchmarkSendHistory n5000-send-p50-ms",
		floor: "BenchmarkSendHistory n5000-floor-p50-ms", floorWhat: "the same body straight to the fake model"},
	{area: "sends", what: "… 20,000 messages", unit: "ms", fig: "BenchmarkSendHistory n20000-send-p50-ms",
		floor: "BenchmarkSendHistory n20000-floor-p50-ms", floorWhat: "the same body straight to the fake model"},
	{area: "sends", what: "… the model request's size at 20,000 messages", unit: "bytes", fig: "BenchmarkSendHistory n20000-request-bytes"},
	{area: "sends", what: "SetHistory of 20,000 messages of 200 characters, p50", unit: "ms", fig: "BenchmarkSendHistory n20000-sethistory-p50-ms",
		goal: "(a regression figure)"},
	{area: "sends", what: "agent-server CPU per Send, one model round, every plugin's tools offered", unit: "µs", fig: "BenchmarkSendCPU/tools=all server-cpu-µs/send",
		floor: "BenchmarkSendCPU/tools=none server-cpu-µs/send", floorWhat: "the same send offering no tools",
		goal: "tools about free: ≤ 1.2×", met: ratioAtMost(1.2)},
	{area: "sends", what: "concurrent Sends, N=1000, one model round each", unit: "sends/s", fig: "BenchmarkSendThroughput sends/s",
		floor: "BenchmarkSendThroughput model-req/s", floorWhat: "the fake model alone, 1000 streamed requests at once (system prompt and text only, 140 bytes)",
		goal: "(a regression figure: the former ≥ 0.5× asked less of the engine than of the bare relay)", higherBetter: true},
	{area: "sends", what: "… agent-server's model request in it (every tool's schema; the fake model reads only the members it needs)", unit: "bytes",
		fig: "BenchmarkSendThroughput request-bytes", goal: "(the floor's and the relay's: 140 bytes)"},
	{area: "sends", what: "… floor: the bare relay (grpc-go Send in, one net/http SSE request out, no engine), N=1000", unit: "sends/s",
		fig: "BenchmarkSendThroughput relay-sends/s", floor: "BenchmarkSendThroughput model-req/s", floorWhat: "the fake model alone, 1000 streamed requests at once",
		goal: "(what any Go gRPC service reaches here)", higherBetter: true},
	{area: "sends", what: "… agent-server against the bare relay, N=1000", unit: "sends/s", fig: "BenchmarkSendThroughput sends/s",
		floor: "BenchmarkSendThroughput relay-sends/s", floorWhat: "the bare relay", goal: "(the engine's share)", higherBetter: true},
	{area: "sends", what: "… CPU per send of agent-server under that load", unit: "µs", fig: "BenchmarkSendThroughput server-cpu-µs/send",
		floor: "BenchmarkSendThroughput relay-cpu-µs/send", floorWhat: "the bare relay's", goal: "(six events per send against the relay's two)"},
	{area: "sends", what: "… CPU per send of the load itself (the clients and the fake model, on the same two cores)", unit: "µs", fig: "BenchmarkSendThroughput load-cpu-µs/send",
		floor: "BenchmarkSendThroughput relay-load-cpu-µs/send", floorWhat: "the same load through the bare relay", goal: "(what is left for agent-server)"},
	{area: "sends", what: "a warm tool call made by agent-server inside a run, p50", unit: "µs", fig: "BenchmarkToolCallInRun inrun-median-µs",
		floor: "BenchmarkToolCallInRun alone-limits-median-µs", floorWhat: "the call alone after 1 ms idle, under agent-server's default tool limits",
		goal: "≤ 1.3×", met: ratioAtMost(1.3)},
	{area: "sends", what: "… against the call alone without limits", unit: "µs", fig: "BenchmarkToolCallInRun inrun-median-µs",
		floor: "BenchmarkToolCallInRun alone-median-µs", floorWhat: "the call alone after 1 ms idle, no limits",
		goal: "(the limits counted in the ratio too)"},
	{area: "sends", what: "ListTools, every plugin's tools", unit: "req/s", fig: "BenchmarkListTools/ListTools req/s",
		floor: "BenchmarkListTools/GetAgent req/s", floorWhat: "GetAgent", higherBetter: true},

	// What the store adds.
	{area: "store", what: "SQLite store, added per model step, p50", unit: "µs", scale: 1000, absolute: true, fig: "BenchmarkStoreAddedLatency sqlite-added-p50-ms",
		floor: "BenchmarkStoreAddedLatency memory-step-p50-ms", floorWhat: "a step with the memory store",
		goal: "≤ 1 ms", met: func(fig, _ float64) bool { return fig <= 1000 }},
	{area: "store", what: "PostgreSQL store, added per model step, p50", unit: "µs", scale: 1000, absolute: true, fig: "BenchmarkStoreAddedLatency postgres-added-p50-ms",
		floor: "BenchmarkStoreAddedLatency memory-step-p50-ms", floorWhat: "a step with the memory store",
		goal: "≤ 2 ms", met: func(fig, _ float64) bool { return fig <= 2000 },
		missing: "(not measured: set AGENTCORE_TEST_POSTGRES)"},
	{area: "store", what: "Attach replay of a finished run from SQLite", unit: "events/s", fig: "BenchmarkAttachReplay events/s",
		goal: "≥ 50,000 events/s", met: func(fig, _ float64) bool { return fig >= 50000 }, higherBetter: true},
	{area: "store", what: "1,000 concurrent sends with the default store (SQLite), completed", unit: "sends", absolute: true,
		fig: "BenchmarkConcurrentSends/store=sqlite completed", floor: "BenchmarkConcurrentSends/store=sqlite sends", floorWhat: "sends started at once",
		goal: "all complete", met: func(fig, floor float64) bool { return floor > 0 && fig == floor }},
	{area: "store", what: "… added over the model's 1 s hold, p50", unit: "ms", delta: true,
		fig: "BenchmarkConcurrentSends/store=sqlite added-p50-ms", floor: "BenchmarkConcurrentSends/store=memory added-p50-ms",
		floorWhat: "the same 1,000 sends with the memory store", goal: "(1,000 sends start in the same instant on these cores)"},
	{area: "store", what: "… added over the hold, p99", unit: "ms", delta: true,
		fig: "BenchmarkConcurrentSends/store=sqlite added-p99-ms", floor: "BenchmarkConcurrentSends/store=memory added-p99-ms",
		floorWhat: "the same with the memory store"},
	{area: "store", what: "a tool call printing 1 GB in a run (SQLite): agent-server's peak RSS", unit: "MB", fig: "BenchmarkOutputFlood peak-rss-MB",
		goal: "< 200 MB (1,509 MB before live output was capped)", met: func(fig, _ float64) bool { return fig < 200 }},
	{area: "store", what: "… what it adds to the database (the WAL aside)", unit: "MB", fig: "BenchmarkOutputFlood db-MB/flood",
		goal: "≤ the cap (-max-live-output, 4 MiB) + 1 MB (1,045 MB before)", met: func(fig, _ float64) bool { return fig <= 5.2 }},
	{area: "store", what: "… its output events", unit: "events", fig: "BenchmarkOutputFlood events/flood",
		goal: "(39,593 before coalescing)"},
	{area: "store", what: "… its time", unit: "s", fig: "BenchmarkOutputFlood s/flood", goal: "(66 s before: the flood went into the store)"},
	{area: "store", what: "what a model step costs the default store (SQLite file, history and indexes included; 200 characters streamed in 20 pieces and a shell call)", unit: "bytes",
		fig: "BenchmarkStoreBytes db-bytes/step", floor: "BenchmarkStoreBytes event-bytes/step", floorWhat: "its events alone (GetRun's event_bytes)",
		goal: "(docs/durability.md: the disk a run needs)"},
	{area: "store", what: "… event bytes per byte a tool prints, under the live output cap", unit: "bytes", fig: "BenchmarkStoreBytes event-bytes/output-byte",
		goal: "(over the cap: nothing)"},
	{area: "store", what: "Stop on replica A of a run on replica B until it ended (PostgreSQL), p99", unit: "ms", absolute: true,
		fig: "BenchmarkReplicaAbort stop-p99-ms", floor: "BenchmarkReplicaAbort stop-p50-ms", floorWhat: "its p50",
		goal: "≤ 100 ms", met: func(fig, _ float64) bool { return fig <= 100 },
		missing: "(not measured: set AGENTCORE_TEST_POSTGRES)"},

	// Memory against the agents touched: the loaded agents' budget.
	{area: "memory", what: "agent-server RSS after 2,000 agents touched (200 messages of 200 characters each, SetHistory, SQLite), -agent-memory 64MiB, over its start", unit: "MiB",
		fig: "BenchmarkAgentsRSS budget-n2000-rss-MiB", floor: "BenchmarkAgentsRSS one-n2000-rss-MiB",
		floorWhat: "the same traffic keeping one agent in memory (-max-loaded-agents 1)", delta: true,
		goal: "the budget ±10 % (57.6–70.4 MiB)", met: func(fig, floor float64) bool { return fig-floor >= 0.9*64 && fig-floor <= 1.1*64 }},
	{area: "memory", what: "… after 1,000 agents", unit: "MiB", fig: "BenchmarkAgentsRSS budget-n1000-rss-MiB", floor: "BenchmarkAgentsRSS one-n1000-rss-MiB",
		floorWhat: "the same, one agent in memory", delta: true, goal: "≤ the budget + 10 % (70.4 MiB)", met: func(fig, floor float64) bool { return fig-floor <= 1.1*64 }},
	{area: "memory", what: "… after 500 agents", unit: "MiB", fig: "BenchmarkAgentsRSS budget-n500-rss-MiB", floor: "BenchmarkAgentsRSS one-n500-rss-MiB",
		floorWhat: "the same, one agent in memory", delta: true, goal: "≤ the budget + 10 % (70.4 MiB)", met: func(fig, floor float64) bool { return fig-floor <= 1.1*64 }},
	{area: "memory", what: "… every agent kept in memory (-agent-memory 0 -max-loaded-agents 0, as before the bound), 2,000 agents", unit: "MiB",
		fig: "BenchmarkAgentsRSS all-n2000-rss-MiB", floor: "BenchmarkAgentsRSS one-n2000-rss-MiB", floorWhat: "the same, one agent in memory", delta: true,
		goal: "(grows with every agent touched)"},
	{area: "memory", what: "first send to an agent dropped from memory (loaded again: its record and 200 messages read from SQLite), p50", unit: "ms",
		fig: "BenchmarkAgentsRSS reload-send-p50-ms", floor: "BenchmarkAgentsRSS loaded-send-p50-ms",
		floorWhat: "the first send to an agent still in memory (its history's tokens counted too)", delta: true, goal: "(what a drop costs the agent's next call)"},

	// What telemetry costs a loop step (CPU of the process; the three
	// variants take turns within one benchmark).
	{area: "telemetry", what: "loop step with telemetry, tracing off", unit: "µs", fig: "BenchmarkStep off-cpu-µs/step",
		floor: "BenchmarkStep none-cpu-µs/step", floorWhat: "the step without telemetry",
		goal: "no measurable change (≤ 1.1×: one run's noise)", met: ratioAtMost(1.1)},
	{area: "telemetry", what: "loop step with tracing on, 100 % sampling", unit: "µs", fig: "BenchmarkStep on-cpu-µs/step",
		floor: "BenchmarkStep none-cpu-µs/step", floorWhat: "the step without telemetry",
		goal: "≤ +20 µs", met: func(fig, floor float64) bool { return fig-floor <= 20 }, delta: true},
	{area: "telemetry", what: "… the same step's wall time (the work other cores do meanwhile, GC and the span processor, not counted)", unit: "µs",
		fig: "BenchmarkStep on-µs/step", floor: "BenchmarkStep none-µs/step", floorWhat: "the step without telemetry", delta: true,
		goal: "(the goal is checked on CPU time, above)"},
	{area: "telemetry", what: "… floor: the OpenTelemetry SDK alone making the same spans, per step (no engine)", unit: "µs", fig: "BenchmarkStep sdk-cpu-µs/step",
		goal: "(what the spans cost any instrumentation)"},
	{area: "telemetry", what: "… the observer alone (two spans and the metrics of a step)", unit: "µs", fig: "BenchmarkObserverStep/tracing=on cpu-µs/step",
		goal: "≤ 20 µs", met: func(fig, _ float64) bool { return fig <= 20 }},

	// A send's events over the HTTP gateway (server-sent events) against the gRPC stream.
	{area: "HTTP", what: "a send's events over SSE, 500 model deltas as fast as the model sends them", unit: "events/s",
		fig: "BenchmarkSSEDelivery/burst sse-events/s", floor: "BenchmarkSSEDelivery/burst grpc-events/s",
		floorWhat: "the same send over the gRPC stream (Go client)", goal: "within 1.5× per event (≥ 0.67× the rate)",
		met: ratioAtLeast(1 / 1.5), higherBetter: true},
	{area: "HTTP", what: "… one delta's latency, engine to decoded by the client, p50", unit: "µs", fig: "BenchmarkSSEDelivery/paced sse-lat-p50-µs",
		floor: "BenchmarkSSEDelivery/paced grpc-lat-p50-µs", floorWhat: "the same over the gRPC stream", delta: true,
		goal: "(what SSE adds)"},
	{area: "HTTP", what: "… p99", unit: "µs", fig: "BenchmarkSSEDelivery/paced sse-lat-p99-µs",
		floor: "BenchmarkSSEDelivery/paced grpc-lat-p99-µs", floorWhat: "the same over the gRPC stream", delta: true},

	// The token counter: its tables' cost to the garbage collector, its speed.
	{area: "tokens", what: "GC CPU per cycle, both token tables live", unit: "ms", fig: "BenchmarkGCMark/tables=agentcore gc-cpu-ms/cycle",
		floor: "BenchmarkGCMark/tables=none gc-cpu-ms/cycle", floorWhat: "no token tables",
		goal: "tables' share ≤ 1 ms", met: func(fig, floor float64) bool { return fig-floor <= 1 }, delta: true},
	{area: "tokens", what: "… with tiktoken-go's tables instead", unit: "ms", fig: "BenchmarkGCMark/tables=tiktoken-go gc-cpu-ms/cycle",
		floor: "BenchmarkGCMark/tables=none gc-cpu-ms/cycle", floorWhat: "no token tables", delta: true},
	{area: "tokens", what: "token counting, o200k_base", unit: "tokens/s", fig: "BenchmarkCount tokens/s",
		floor: "BenchmarkCountTiktoken tokens/s", floorWhat: "tiktoken-go's own encoder", goal: "counts identical (tested)", higherBetter: true},
}

func ratioAtMost(r float64) func(fig, floor float64) bool {
	return func(fig, floor float64) bool { return floor > 0 && fig/floor <= r }
}

func ratioAtLeast(r float64) func(fig, floor float64) bool {
	return func(fig, floor float64) bool { return floor > 0 && fig/floor >= r }
}

func main() {
	benchtime := flag.String("benchtime", "1s", "go test -benchtime for every benchmark")
	nrounds := flag.Int("rounds", 1, "how many times to run every suite, in turn; each figure is then the run whose ratio (or difference) is the median, and a column gives the range over the runs (an odd number gives a true median)")
	flag.Parse()
	start := time.Now()
	machine := describeMachine()
	rounds := make([]metrics, max(*nrounds, 1))
	for i := range rounds {
		rounds[i] = runSuites(*benchtime)
	}
	header := "| area | figure | measured | floor, in the same run | ratio or difference | goal | met |"
	rule := "| --- | --- | --- | --- | --- | --- | --- |"
	runs := ""
	if len(rounds) > 1 {
		header += fmt.Sprintf(" over %d runs |", len(rounds))
		rule += " --- |"
		runs = fmt.Sprintf(", %d runs, each figure from its median run", len(rounds))
	}
	fmt.Printf("Measured %s with `make bench-report` (%s, benchtime %s%s) on %s.\n\n", start.Format("2006-01-02"),
		time.Since(start).Round(time.Second), *benchtime, runs, machine)
	fmt.Println(header)
	fmt.Println(rule)
	met, unmet := 0, 0
	for _, r := range rows {
		line, verdict := r.line(rounds)
		fmt.Println(line)
		switch verdict {
		case "yes":
			met++
		case "**no**":
			unmet++
		}
	}
	fmt.Printf("\nGoals met: %d of %d checked here.\n", met, met+unmet)
	fmt.Printf("\nLoad average at the end: %s\n", loadAverage())
}

// runSuites runs every suite once and returns the metrics they reported.
func runSuites(benchtime string) metrics {
	m := metrics{}
	for _, s := range suites {
		if _, err := os.Stat(s.pkg); err != nil {
			fmt.Fprintf(os.Stderr, "bench-report: %s is not in this checkout: skipped\n", s.pkg)
			continue
		}
		if s.needs != "" && os.Getenv(s.needs) == "" {
			fmt.Fprintf(os.Stderr, "bench-report: %s %s needs %s: skipped\n", s.pkg, s.bench, s.needs)
			continue
		}
		bt := benchtime
		if d, err := time.ParseDuration(bt); err == nil && s.longer > 1 {
			bt = (d * time.Duration(s.longer)).String()
		}
		if s.benchtime != "" {
			bt = s.benchtime
		}
		args := []string{"test", "-run", "^$", "-bench", s.bench, "-benchtime", bt, "-count", "1", s.pkg}
		fmt.Fprintf(os.Stderr, "go %s\n", strings.Join(args, " "))
		cmd := exec.Command(goTool(), args...)
		var out bytes.Buffer
		cmd.Stdout = io.MultiWriter(&out, os.Stderr)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "bench-report: %s: %v\n", s.pkg, err)
			os.Exit(1)
		}
		parse(&out, m)
	}
	return m
}

// value is a row's figure and floor in one run, scaled.
type value struct {
	fig, floor float64
	floorOK    bool // the row has a floor and the run reported it
}

// measure reads the row's figure and floor from one run's metrics; ok is
// false when the figure is missing.
func (r row) measure(m metrics) (v value, ok bool) {
	scale := r.scale
	if scale == 0 {
		scale = 1
	}
	if v.fig, ok = m.sum(r.fig); !ok {
		return v, false
	}
	v.fig *= scale
	if r.floor != "" {
		v.floor, v.floorOK = m.sum(r.floor)
		v.floor *= scale
	}
	return v, true
}

// judged is what the row's goal is judged on: the figure alone, the
// difference to the floor, or the ratio.
func (r row) judged(v value) float64 {
	switch {
	case !v.floorOK || r.absolute:
		return v.fig
	case r.delta:
		return v.fig - v.floor
	case v.floor > 0:
		return v.fig / v.floor
	}
	return 0
}

// compared formats what judged returns for v, as the ratio column shows it.
func (r row) compared(v value) string {
	x := r.judged(v)
	switch {
	case r.absolute:
		return "—"
	case r.delta:
		return fmt.Sprintf("%+.2f %s", x, r.unit)
	case v.floor > 0:
		return fmt.Sprintf("%.2f×", x)
	}
	return ""
}

// line formats a row from the runs' metrics, and returns its verdict: the
// figures of the run whose judged value is the median, and with several
// runs, their range and how many met the goal.
func (r row) line(rounds []metrics) (string, string) {
	var vals []value
	for _, m := range rounds {
		if v, ok := r.measure(m); ok && (r.floor == "" || v.floorOK) {
			vals = append(vals, v)
		}
	}
	extra := ""
	if len(rounds) > 1 {
		extra = " |"
	}
	if len(vals) == 0 {
		v, ok := r.measure(rounds[0])
		switch {
		case !ok && r.missing != "":
			return fmt.Sprintf("| %s | %s | %s | | | %s | |%s", r.area, r.what, r.missing, r.goal, extra), ""
		case !ok:
			return fmt.Sprintf("| %s | %s | (missing: %s) | | | %s | |%s", r.area, r.what, r.fig, r.goal, extra), ""
		}
		return fmt.Sprintf("| %s | %s | %s %s | (missing: %s) | | %s | |%s", r.area, r.what, number(v.fig), r.unit, r.floor, r.goal, extra), ""
	}
	slices.SortStableFunc(vals, func(a, b value) int { return cmp.Compare(r.judged(a), r.judged(b)) })
	med := vals[len(vals)/2]
	v := verdict(r.met, med.fig, med.floor)
	if len(rounds) > 1 {
		lo, hi := vals[0], vals[len(vals)-1]
		spread := number(lo.fig) + " to " + number(hi.fig) + " " + r.unit
		if !r.absolute && med.floorOK {
			spread = r.compared(lo) + " to " + r.compared(hi)
		}
		if r.met != nil {
			n := 0
			for _, x := range vals {
				if r.met(x.fig, x.floor) {
					n++
				}
			}
			spread += fmt.Sprintf(", met in %d of %d", n, len(vals))
		}
		extra = " " + spread + " |"
	}
	measured := number(med.fig) + " " + r.unit
	if r.floor == "" {
		return fmt.Sprintf("| %s | %s | %s | | | %s | %s |%s", r.area, r.what, measured, r.goal, v, extra), v
	}
	return fmt.Sprintf("| %s | %s | %s | %s: %s %s | %s | %s | %s |%s", r.area, r.what, measured, r.floorWhat, number(med.floor), r.unit,
		r.compared(med), r.goal, v, extra), v
}

func verdict(met func(fig, floor float64) bool, fig, floor float64) string {
	switch {
	case met == nil:
		return ""
	case met(fig, floor):
		return "yes"
	}
	return "**no**"
}

// number prints a value with three significant digits or more.
func number(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// parse reads benchmark result lines: "BenchmarkX/sub-2  N  v unit  v unit…".
func parse(r io.Reader, m metrics) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[name+" "+f[i+1]] = v
			}
		}
	}
}

func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// describeMachine says what the figures were measured on.
func describeMachine() string {
	model := "an unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := ""
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = ", Linux " + strings.TrimSpace(string(data))
	}
	return fmt.Sprintf("%d × %s%s, %s, load average %s at the start", runtime.NumCPU(), model, kernel, runtime.Version(), loadAverage())
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
