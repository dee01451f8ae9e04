package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	"github.com/agentcore/agentcore/pkg/tool/sockdir"
)

// The benchmarks report the median of their iterations as "median-µs",
// beside Go's mean (ns/op): a few slow iterations (a machine's hiccup)
// move a mean but not a median, which the documented figures state.

// timings collects per-iteration durations and reports their median.
type timings []time.Duration

func (ts timings) report(b *testing.B) { ts.reportAs(b, "median-µs") }

// reportAs reports the median under another unit name.
func (ts timings) reportAs(b *testing.B, unit string) {
	if len(ts) == 0 {
		return
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2].Nanoseconds())/1e3, unit)
}

// benchHost returns the tools of a host with cfg, which starts processes
// ahead and sets the plugins' GOMAXPROCS as agent-server's defaults do:
// the benchmarks measure the host agent-server runs.
func benchHost(b *testing.B, cfg Config) *Set {
	b.Helper()
	cfg.MinIdle, cfg.PluginProcs = DefaultMinIdle, DefaultPluginProcs
	cfg.SocketDir = socketDir(b)
	h := NewHost(cfg)
	b.Cleanup(func() { h.Close() })
	set, err := h.Scan(context.Background(), dirs.good)
	if err != nil {
		b.Fatal(err)
	}
	return set
}

// socketDir makes a directory for a benchmark's sockets on the file system
// a host puts them on by default (see Config.SocketDir).
func socketDir(b *testing.B) string {
	dir, err := os.MkdirTemp(sockdir.Default(), "toolbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// procCPU returns the CPU time a process has used so far, summed over its
// threads (schedstat: nanoseconds, where rusage of another process only
// has clock ticks).
func procCPU(b *testing.B, pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// cpuMeter measures the CPU time of this process and another.
type cpuMeter struct {
	b   *testing.B
	pid int
	t0  time.Duration
}

func startCPU(b *testing.B, pid int) *cpuMeter {
	m := &cpuMeter{b: b, pid: pid}
	m.t0 = procCPU(b, os.Getpid()) + procCPU(b, pid)
	return m
}

// report reports the CPU time of both processes per iteration.
func (m *cpuMeter) report() {
	spent := procCPU(m.b, os.Getpid()) + procCPU(m.b, m.pid) - m.t0
	m.b.ReportMetric(float64(spent.Nanoseconds())/1e3/float64(m.b.N), "cpu-µs/call")
}

// BenchmarkWarmCall: one call on an idle process (a gRPC round trip on the
// plugin's unix socket, input validated), back to back; cpu-µs/call is the
// CPU time of both processes per call.
func BenchmarkWarmCall(b *testing.B) {
	benchEcho(b, benchHost(b, Config{MaxIdle: 1}))
}

// benchEcho times echo calls; on a set that keeps its one process (warm
// calls) it reports the CPU time of both processes per call too.
func benchEcho(b *testing.B, set *Set) {
	input := json.RawMessage(`{"text":"ping"}`)
	ts := make(timings, 0, b.N)
	var cpu *cpuMeter
	if e := set.tools["echo"]; e.pool.host.cfg.MaxIdle > 0 {
		cpu = startCPU(b, pluginPid(b, set))
	}
	for b.Loop() {
		t0 := time.Now()
		res := set.Execute(context.Background(), "echo", input, Options{})
		ts = append(ts, time.Since(t0))
		if res.Error {
			b.Fatal(res.Output)
		}
	}
	if cpu != nil {
		cpu.report()
	}
	ts.report(b)
}

// pluginPid returns the pid of the idle plugin process a call would use.
func pluginPid(b *testing.B, set *Set) int {
	res := set.Execute(context.Background(), "pid", nil, Options{})
	pid, err := strconv.Atoi(res.Output.GetJson())
	if err != nil {
		b.Fatalf("pid: %v", res.Output)
	}
	return pid
}

// BenchmarkWarmCallAfterIdle: a warm call after the plugin process has
// been idle for a pause (its threads asleep), as calls come in a run.
func BenchmarkWarmCallAfterIdle(b *testing.B) {
	for _, pause := range []time.Duration{time.Millisecond, 20 * time.Millisecond, afterKillPause} {
		b.Run("pause="+pause.String(), func(b *testing.B) {
			echoAfter(b, benchHost(b, Config{MaxIdle: 1}), pause, func() {})
		})
	}
}

// afterKillPause stands for the model round between a killed call and the
// next call of a run (the model reads the kill's result first): a fast
// one. The process started ahead after the kill is a cold start (5 to 30
// ms, by the machine), so a shorter pause measures the cold start's
// remainder, not whether the next call finds a warm process.
const afterKillPause = 100 * time.Millisecond

// BenchmarkCallAfterKill: a call a fast model round (afterKillPause) after
// a call was killed, which with MinIdle finds a process started ahead in
// the background; compare with BenchmarkWarmCallAfterIdle/pause=100ms.
func BenchmarkCallAfterKill(b *testing.B) {
	set := benchHost(b, Config{})
	echoAfter(b, set, afterKillPause, func() {
		ctx, cancel := context.WithCancel(context.Background())
		if res := set.Execute(ctx, "loop", nil, Options{OnOutput: func(Chunk) { cancel() }}); !res.Error {
			b.Fatal("loop ended on its own")
		}
	})
}

// echoAfter times, b.N times, an echo call made a pause after before ran,
// as the host measures a call (Result.Duration), and reports the median.
func echoAfter(b *testing.B, set *Set, pause time.Duration, before func()) {
	input := json.RawMessage(`{"text":"ping"}`)
	ts := make(timings, 0, b.N)
	for b.Loop() {
		before()
		time.Sleep(pause)
		res := set.Execute(context.Background(), "echo", input, Options{})
		if res.Error {
			b.Fatal(res.Output)
		}
		ts = append(ts, res.Duration)
	}
	ts.report(b)
}

// BenchmarkColdStart: a call that must start its plugin process: fork/exec,
// handshake, connect, call. Target ≤ 6 ms.
func BenchmarkColdStart(b *testing.B) {
	benchEcho(b, benchHost(b, Config{MaxIdle: -1}))
}

// benchLimits sets cfg up with the best limits mechanism here and the
// server's default limits (1 GiB of memory, 1024 processes).
func benchLimits(b *testing.B, cfg Config) Config {
	c, err := limits.New(limits.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if c.Mechanism() == limits.Rlimit {
		b.Logf("no cgroups here: %s", c)
	}
	cfg.Limits = c
	cfg.LimitPolicy = LimitPolicy{Default: limits.Limits{Memory: 1 << 30, Processes: 1024}}
	return cfg
}

// BenchmarkKillToResult: from cancelling a spinning call to its result, the
// plugin process known dead (the reap follows in the background). Goal ≤
// 1.1× the kernel's kill and reap of a Go process. It measures two floors
// in each iteration, just before its own kill, so that on a busy machine
// all see the same load: busy-floor-median-µs, the kill and reap of the
// same plugin binary in the same state (started by the benchmark, spinning
// in the same tool over a plain gRPC connection: the part the host cannot
// shorten), and floor-median-µs, BenchmarkFloorKillReap's idle plugin.
func BenchmarkKillToResult(b *testing.B) {
	benchKill(b, benchHost(b, Config{MaxIdle: 4}))
}

// BenchmarkKillToResultLimits: BenchmarkKillToResult with the tree under
// limits: the kill takes the whole group too (cgroup.kill, or each process
// the cgroup lists), and the result waits until the group is empty.
func BenchmarkKillToResultLimits(b *testing.B) {
	benchKill(b, benchHost(b, benchLimits(b, Config{MaxIdle: 4})))
}

func benchKill(b *testing.B, set *Set) {
	idle, busy := floorKiller(b), busyFloorKiller(b)
	ts, fs, bs := make(timings, 0, b.N), make(timings, 0, b.N), make(timings, 0, b.N)
	for b.Loop() {
		floor := idle()
		busyFloor := busy()
		// A warm call: the process started ahead after the last kill is up,
		// and the floors' have been idle a few milliseconds, like it.
		if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{}); res.Error {
			b.Fatal(OutputText(res.Output))
		}
		fs = append(fs, floor())
		bs = append(bs, busyFloor())
		ctx, cancel := context.WithCancel(context.Background())
		var t0 time.Time
		res := set.Execute(ctx, "loop", nil, Options{OnOutput: func(c Chunk) {
			t0 = time.Now()
			cancel()
		}})
		ts = append(ts, time.Since(t0))
		if !res.Error {
			b.Fatal("loop ended on its own")
		}
	}
	ts.report(b)
	fs.reportAs(b, "floor-median-µs")
	bs.reportAs(b, "busy-floor-median-µs")
}

// BenchmarkRSSGrowth200Cycles: host RSS growth over 200 start→call→kill
// cycles, after a warm-up. Target ≤ 2 MB.
func BenchmarkRSSGrowth200Cycles(b *testing.B) {
	set := benchHost(b, Config{MaxIdle: -1})
	input := json.RawMessage(`{"text":"ping"}`)
	cycle := func(n int) {
		for range n {
			if res := set.Execute(context.Background(), "echo", input, Options{}); res.Error {
				b.Fatal(res.Output)
			}
		}
	}
	cycle(50)
	before := settledRSS()
	for b.Loop() {
		cycle(200)
	}
	b.ReportMetric(float64(settledRSS()-before)/(1<<20), "rss-growth-MB")
}

// settledRSS returns the resident set size after a GC that returns freed
// memory to the system.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	time.Sleep(50 * time.Millisecond)
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// selfCPU returns this process's CPU time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (ts timings) median() float64 {
	s := slices.Clone(ts)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1e3
}
