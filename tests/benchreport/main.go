// Command benchreport runs the benchmarks behind the README's figures and
// their floors in one go, on this machine, and prints each figure beside
// its floor with the ratio and the goal (make bench-report). The floors are
// measured in the same run as the figures, so the ratios hold on any
// machine; the absolute numbers are this machine's.
//
// It runs `go test -bench` once per package, one package at a time (the
// benchmarks would disturb each other), and reads the metrics the
// benchmarks report.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// suites are the benchmark runs, one per package.
var suites = []struct{ pkg, bench string }{
	{"./pkg/tool/", "^(BenchmarkWarmCallParts|BenchmarkWarmCallAfterIdle|BenchmarkCallAfterKill|BenchmarkColdStart|BenchmarkFloorPluginHandshake|BenchmarkKillToResult|BenchmarkFloorKillReap|BenchmarkRSSGrowth200Cycles)$"},
	{"./tests/", "^(BenchmarkSendCPU|BenchmarkSendThroughput|BenchmarkStepOverhead|BenchmarkToolCallInRun|BenchmarkListTools)$"},
	{"./pkg/tokens/", "^(BenchmarkGCMark|BenchmarkCount|BenchmarkCountTiktoken)$"},
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
	what, unit   string
	fig, floor   string // metric keys (summed with +)
	floorWhat    string
	scale        float64 // multiplies both values (e.g. ms to µs); 0 means 1
	goal         string
	met          func(fig, floor float64) bool // nil: no goal to check here
	higherBetter bool
}

var rows = []row{
	{what: "warm tool call, p50", unit: "µs", fig: "BenchmarkWarmCallParts execute-median-µs",
		floor: "BenchmarkWarmCallParts floor-median-µs", floorWhat: "bare grpc-go bidi round trip",
		goal: "≤ 1.15×", met: ratioAtMost(1.15)},
	{what: "CPU per warm call, both processes", unit: "µs",
		fig:   "BenchmarkWarmCallParts execute-host-cpu-µs+BenchmarkWarmCallParts execute-peer-cpu-µs",
		floor: "BenchmarkWarmCallParts floor-host-cpu-µs+BenchmarkWarmCallParts floor-peer-cpu-µs", floorWhat: "the same for the bidi round trip",
		goal: "≤ 1.15×", met: ratioAtMost(1.15)},
	{what: "… the Session round trip alone on the plugin, p50", unit: "µs", fig: "BenchmarkWarmCallParts session-median-µs",
		floor: "BenchmarkWarmCallParts floor-median-µs", floorWhat: "bare grpc-go bidi round trip", goal: "(sdk/tool and go-plugin's share)"},
	{what: "the same call made by agent-server inside a run, p50", unit: "µs", fig: "BenchmarkToolCallInRun inrun-median-µs",
		floor: "BenchmarkToolCallInRun alone-median-µs", floorWhat: "the call alone after 1 ms idle",
		goal: "≤ 1.3×", met: ratioAtMost(1.3)},
	{what: "a call 20 ms after a kill (prewarmed), p50", unit: "µs", fig: "BenchmarkCallAfterKill median-µs",
		floor: "BenchmarkWarmCallAfterIdle/pause=20ms median-µs", floorWhat: "a warm call after 20 ms idle",
		goal: "a warm call (≤ 1.15×)", met: ratioAtMost(1.15)},
	{what: "cold start to first result, p50", unit: "µs", fig: "BenchmarkColdStart median-µs",
		floor: "BenchmarkFloorPluginHandshake median-µs", floorWhat: "the plugin binary's own start to handshake", goal: "(rare: processes are reused and prewarmed)"},
	{what: "cancel → call returns, p50", unit: "µs", fig: "BenchmarkKillToResult median-µs",
		floor: "BenchmarkFloorKillReap median-µs", floorWhat: "SIGKILL and reap of an idle plugin",
		goal: "≤ 1.1× (kill-to-result: pending)", met: ratioAtMost(1.1)},
	{what: "agent-server CPU per Send, one model round, every plugin's tools offered", unit: "µs", fig: "BenchmarkSendCPU/tools=all server-cpu-µs/send",
		floor: "BenchmarkSendCPU/tools=none server-cpu-µs/send", floorWhat: "the same send offering no tools",
		goal: "≤ ½ of before, i.e. tools ≈ free: ≤ 1.2× (before: 1.7–2.3×)", met: ratioAtMost(1.2)},
	{what: "concurrent Sends, N=1000, one model round each", unit: "sends/s", fig: "BenchmarkSendThroughput sends/s",
		floor: "BenchmarkSendThroughput model-req/s", floorWhat: "the fake model alone, 1000 streamed requests at once",
		goal: "≥ 0.5×", met: ratioAtLeast(0.5), higherBetter: true},
	{what: "one model round through agent-server, added p50", unit: "µs", scale: 1000, fig: "BenchmarkStepOverhead added-p50-ms",
		floor: "BenchmarkStepOverhead model-p50-ms", floorWhat: "the fake model's own answer, p50",
		goal: "≤ 300 µs", met: func(fig, _ float64) bool { return fig <= 300 }},
	{what: "… added p99", unit: "µs", scale: 1000, fig: "BenchmarkStepOverhead added-p99-ms",
		floor: "BenchmarkStepOverhead model-p99-ms", floorWhat: "the fake model's own answer, p99", goal: "≤ 5 ms (issue 5)",
		met: func(fig, _ float64) bool { return fig <= 5000 }},
	{what: "ListTools, every plugin's tools", unit: "req/s", fig: "BenchmarkListTools/ListTools req/s",
		floor: "BenchmarkListTools/GetAgent req/s", floorWhat: "GetAgent", goal: "(was 0.32×)", higherBetter: true},
	{what: "GC CPU per cycle, both token tables live", unit: "ms", fig: "BenchmarkGCMark/tables=agentcore gc-cpu-ms/cycle",
		floor: "BenchmarkGCMark/tables=none gc-cpu-ms/cycle", floorWhat: "no token tables",
		goal: "tables' share ≤ 1 ms", met: func(fig, floor float64) bool { return fig-floor <= 1 }},
	{what: "… with tiktoken-go's tables instead (before)", unit: "ms", fig: "BenchmarkGCMark/tables=tiktoken-go gc-cpu-ms/cycle",
		floor: "BenchmarkGCMark/tables=none gc-cpu-ms/cycle", floorWhat: "no token tables"},
	{what: "token counting, o200k_base", unit: "tokens/s", fig: "BenchmarkCount tokens/s",
		floor: "BenchmarkCountTiktoken tokens/s", floorWhat: "tiktoken-go's own encoder", goal: "counts identical (tested)", higherBetter: true},
	{what: "host RSS growth over 200 start→call→kill cycles", unit: "MB", fig: "BenchmarkRSSGrowth200Cycles rss-growth-MB",
		goal: "≤ 2 MB", met: func(fig, _ float64) bool { return fig <= 2 }},
}

func ratioAtMost(r float64) func(fig, floor float64) bool {
	return func(fig, floor float64) bool { return floor > 0 && fig/floor <= r }
}

func ratioAtLeast(r float64) func(fig, floor float64) bool {
	return func(fig, floor float64) bool { return floor > 0 && fig/floor >= r }
}

func main() {
	benchtime := flag.String("benchtime", "1s", "go test -benchtime for every benchmark")
	flag.Parse()
	start := time.Now()
	machine := describeMachine()
	m := metrics{}
	for _, s := range suites {
		args := []string{"test", "-run", "^$", "-bench", s.bench, "-benchtime", *benchtime, "-count", "1", s.pkg}
		fmt.Fprintf(os.Stderr, "go %s\n", strings.Join(args, " "))
		cmd := exec.Command(goTool(), args...)
		var out bytes.Buffer
		cmd.Stdout = io.MultiWriter(&out, os.Stderr)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "benchreport: %s: %v\n", s.pkg, err)
			os.Exit(1)
		}
		parse(&out, m)
	}
	fmt.Printf("Measured %s with `make bench-report` (%s, benchtime %s) on %s.\n\n", start.Format("2006-01-02"),
		time.Since(start).Round(time.Second), *benchtime, machine)
	fmt.Println("| figure | measured | floor, in the same run | ratio | goal | met |")
	fmt.Println("| --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Println(r.line(m))
	}
	fmt.Printf("\nLoad average at the end: %s\n", loadAverage())
}

// line formats a row from the metrics.
func (r row) line(m metrics) string {
	scale := r.scale
	if scale == 0 {
		scale = 1
	}
	fig, ok := m.sum(r.fig)
	if !ok {
		return fmt.Sprintf("| %s | (missing: %s) | | | %s | |", r.what, r.fig, r.goal)
	}
	fig *= scale
	measured := number(fig) + " " + r.unit
	if r.floor == "" {
		return fmt.Sprintf("| %s | %s | | | %s | %s |", r.what, measured, r.goal, verdict(r.met, fig, 0))
	}
	floor, ok := m.sum(r.floor)
	if !ok {
		return fmt.Sprintf("| %s | %s | (missing: %s) | | %s | |", r.what, measured, r.floor, r.goal)
	}
	floor *= scale
	ratio := ""
	if floor > 0 {
		ratio = fmt.Sprintf("%.2f×", fig/floor)
	}
	return fmt.Sprintf("| %s | %s | %s: %s %s | %s | %s | %s |", r.what, measured, r.floorWhat, number(floor), r.unit, ratio, r.goal, verdict(r.met, fig, floor))
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
