package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// The benchmarks report the median of their iterations as "median-µs",
// beside Go's mean (ns/op), so figures compare with the targets.

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

func benchHost(b *testing.B, cfg Config) *Set {
	b.Helper()
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
	dir, err := os.MkdirTemp(defaultSocketDir(), "toolbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startHelper runs this test binary as the helper kind (see TestMain)
// serving on sock, and waits until it is ready. It is killed at the end.
// It returns the helper's pid.
func startHelper(b *testing.B, kind, sock string, env ...string) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "TOOLTEST_HELPER="+kind, "TOOLTEST_SOCK="+sock), env...)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := readLine(out); err != nil {
		b.Fatal(err)
	}
	return cmd.Process.Pid
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
// ms on the machines here), so a shorter pause measures the cold start's
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

// BenchmarkFloorUnixEcho: a one-byte round trip on a unix socket to another
// process, the floor under a warm call.
func BenchmarkFloorUnixEcho(b *testing.B) {
	sock := filepath.Join(socketDir(b), "echo.sock")
	startHelper(b, "echo", sock)
	conn, err := netDialUnix(sock)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	buf := []byte{'x'}
	ts := make(timings, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		if _, err := conn.Write(buf); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Read(buf); err != nil {
			b.Fatal(err)
		}
		ts = append(ts, time.Since(t0))
	}
	ts.report(b)
}

// BenchmarkFloorGRPCSession: a call on a Session stream to a bare grpc-go
// server in another process (the plugin protocol's messages, the host's
// window settings, no go-plugin, no sdk/tool, no validation): what gRPC
// itself costs under a warm call.
func BenchmarkFloorGRPCSession(b *testing.B) { benchFloorGRPC(b, 0) }

// BenchmarkFloorGRPCSessionAfterIdle: the same after the server process
// was idle for a pause, the floor of BenchmarkWarmCallAfterIdle.
func BenchmarkFloorGRPCSessionAfterIdle(b *testing.B) {
	for _, pause := range []time.Duration{time.Millisecond, 20 * time.Millisecond, afterKillPause} {
		b.Run("pause="+pause.String(), func(b *testing.B) { benchFloorGRPC(b, pause) })
	}
}

func benchFloorGRPC(b *testing.B, pause time.Duration) {
	sock := filepath.Join(socketDir(b), "grpc.sock")
	pid := startHelper(b, "grpcecho", sock)
	conn, err := grpc.NewClient("unix://"+sock, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dialOptions...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := pluginv1.NewToolPluginServiceClient(conn).Session(ctx)
	if err != nil {
		b.Fatal(err)
	}
	req := &pluginv1.SessionRequest{Kind: &pluginv1.SessionRequest_Execute{Execute: &pluginv1.ExecuteRequest{Tool: "echo", InputJson: `{"text":"ping"}`}}}
	ts := make(timings, 0, b.N)
	cpu := startCPU(b, pid)
	for b.Loop() {
		if pause > 0 {
			time.Sleep(pause)
		}
		t0 := time.Now()
		if err := sess.Send(req); err != nil {
			b.Fatal(err)
		}
		if _, err := sess.Recv(); err != nil {
			b.Fatal(err)
		}
		ts = append(ts, time.Since(t0))
	}
	if pause == 0 {
		cpu.report()
	}
	ts.report(b)
}

// BenchmarkFloorKillReap: SIGKILL of an idle plugin process (the test
// plugin after its handshake) and its reap, the floor under kill to result.
func BenchmarkFloorKillReap(b *testing.B) {
	start := floorKiller(b)
	ts := make(timings, 0, b.N)
	for b.Loop() {
		ts = append(ts, start()())
	}
	ts.report(b)
}

// floorKiller returns a function that starts the test plugin and waits for
// its handshake, and returns a function that times its SIGKILL and reap.
func floorKiller(b *testing.B) func() (kill func() time.Duration) {
	start := pluginStarter(b)
	return func() func() time.Duration {
		cmd, _ := start()
		return func() time.Duration { return killReap(cmd) }
	}
}

// pluginStarter returns a function that starts the test plugin as the host
// would (its environment, GOMAXPROCS included) and returns it with its
// handshake line; the benchmark fails (the process killed) if it does not
// print one.
func pluginStarter(b *testing.B) func() (*exec.Cmd, string) {
	path := filepath.Join(dirs.good, "testplug")
	// The host's environment for its plugins: GOMAXPROCS as the host sets it.
	env := append(os.Environ(), "AGENTCORE_TOOL_PLUGIN=tool-plugin-v1", "PLUGIN_UNIX_SOCKET_DIR="+socketDir(b),
		"GOMAXPROCS="+strconv.Itoa(DefaultPluginProcs))
	return func() (*exec.Cmd, string) {
		cmd := exec.Command(path)
		cmd.Env = env
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := readLine(out)
		if err != nil {
			killReap(cmd)
			b.Fatal(err)
		}
		return cmd, line
	}
}

// killReap SIGKILLs and reaps a process, and returns how long it took.
func killReap(cmd *exec.Cmd) time.Duration {
	t0 := time.Now()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return time.Since(t0)
}

// busyFloorKiller returns a function that starts the test plugin (with
// the environment the host gives it, GOMAXPROCS included) and connects to
// it with plain grpc-go, as the host does; the function it
// returns makes a warm call, starts the spinning tool, and once its first
// output arrived times the SIGKILL and reap of the process.
func busyFloorKiller(b *testing.B) func() (kill func() time.Duration) {
	start := pluginStarter(b)
	return func() func() time.Duration {
		cmd, line := start()
		fail := func(err error) {
			killReap(cmd)
			b.Fatal(err)
		}
		// go-plugin's handshake: CORE-VERSION|APP-VERSION|NETWORK|ADDRESS|PROTOCOL
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) < 4 || f[2] != "unix" {
			fail(fmt.Errorf("handshake %q", line))
		}
		conn, err := grpc.NewClient("unix://"+f[3], append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dialOptions...)...)
		if err != nil {
			fail(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		sess, err := pluginv1.NewToolPluginServiceClient(conn).Session(ctx)
		if err != nil {
			fail(err)
		}
		call := func(tool, input string) {
			err := sess.Send(&pluginv1.SessionRequest{Kind: &pluginv1.SessionRequest_Execute{Execute: &pluginv1.ExecuteRequest{Tool: tool, InputJson: input}}})
			if err == nil {
				_, err = sess.Recv()
			}
			if err != nil {
				fail(err)
			}
		}
		call("echo", `{"text":"x"}`)
		return func() time.Duration {
			call("loop", "{}") // its first message is the "started" output
			d := killReap(cmd)
			cancel()
			conn.Close()
			return d
		}
	}
}

// BenchmarkFloorForkExec: fork/exec and wait of a trivial binary, the floor
// under a cold start.
func BenchmarkFloorForkExec(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	ts := make(timings, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command(truePath).Run(); err != nil {
			b.Fatal(err)
		}
		ts = append(ts, time.Since(t0))
	}
	ts.report(b)
}

// BenchmarkFloorPluginHandshake: fork/exec of the test plugin until it
// prints go-plugin's handshake line, then a kill: the plugin binary's own
// start-up (Go runtime, package init, go-plugin's listener), the floor
// under a cold start that the host cannot shorten.
func BenchmarkFloorPluginHandshake(b *testing.B) {
	path := filepath.Join(dirs.good, "testplug")
	env := append(os.Environ(), "AGENTCORE_TOOL_PLUGIN=tool-plugin-v1", "PLUGIN_UNIX_SOCKET_DIR="+socketDir(b))
	ts := make(timings, 0, b.N)
	for b.Loop() {
		cmd := exec.Command(path)
		cmd.Env = env
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if line, err := readLine(out); err != nil || !strings.HasPrefix(line, "1|1|unix|") {
			b.Fatalf("handshake %q: %v", line, err)
		}
		ts = append(ts, time.Since(t0))
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	ts.report(b)
}

// BenchmarkWarmCallParts alternates, in blocks of calls, the layers of a
// warm call on the same plugin process and a bare grpc-go server, so that
// their ratios hold under changing load: execute is Set.Execute (input
// validation, contexts, pool, result conversion), session is the Session
// round trip on the same process without the host's layers (sdk/tool and
// go-plugin's server remain), floor is the bare server of
// BenchmarkFloorGRPCSession, and floor1 the same server started with the
// GOMAXPROCS the host gives its plugins (DefaultPluginProcs), which alone
// makes a Go server's round trip faster on these two cores. It reports
// each part's median latency and its CPU time per call in this process
// (host-cpu) and in the other one (peer-cpu).
func BenchmarkWarmCallParts(b *testing.B) {
	set := benchHost(b, Config{MaxIdle: 1})
	input := json.RawMessage(`{"text":"ping"}`)
	sess, floorPid := floorSession(b, "grpc.sock")
	sess1, floor1Pid := floorSession(b, "grpc1.sock", "GOMAXPROCS="+strconv.Itoa(DefaultPluginProcs))
	e := set.tools["echo"]
	plugPid := pluginPid(b, set)
	req := &pluginv1.ExecuteRequest{Tool: "echo", InputJson: string(input)}
	floorReq := &pluginv1.SessionRequest{Kind: &pluginv1.SessionRequest_Execute{Execute: req}}
	type part struct {
		name      string
		peer      int
		call      func()
		lat       timings
		host, cpu time.Duration
	}
	parts := []*part{
		{name: "execute", peer: plugPid, call: func() {
			if res := set.Execute(context.Background(), "echo", input, Options{}); res.Error {
				b.Fatal(res.Output)
			}
		}},
		{name: "session", peer: plugPid, call: func() {
			pr, err := e.pool.get(context.Background(), e.spec.Limits)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := pr.callSession(req, &chunkDecoder{}, nil); err != nil {
				b.Fatal(err)
			}
			e.pool.put(pr)
		}},
		{name: "floor", peer: floorPid, call: func() {
			if err := sess.Send(floorReq); err != nil {
				b.Fatal(err)
			}
			if _, err := sess.Recv(); err != nil {
				b.Fatal(err)
			}
		}},
		{name: "floor1", peer: floor1Pid, call: func() {
			if err := sess1.Send(floorReq); err != nil {
				b.Fatal(err)
			}
			if _, err := sess1.Recv(); err != nil {
				b.Fatal(err)
			}
		}},
	}
	const block = 20
	orders := [][]int{{0, 1, 2, 3}, {1, 2, 3, 0}, {2, 3, 0, 1}, {3, 0, 1, 2}, {0, 3, 2, 1}, {3, 2, 1, 0}, {2, 1, 0, 3}, {1, 0, 3, 2}}
	for i := 0; b.Loop(); i++ {
		for _, k := range orders[i%len(orders)] {
			p := parts[k]
			peer0 := procCPU(b, p.peer)
			host0 := selfCPU(b)
			for range block {
				t0 := time.Now()
				p.call()
				p.lat = append(p.lat, time.Since(t0))
			}
			p.host += selfCPU(b) - host0
			p.cpu += procCPU(b, p.peer) - peer0
		}
	}
	for _, p := range parts {
		n := float64(len(p.lat))
		b.ReportMetric(p.lat.median(), p.name+"-median-µs")
		b.ReportMetric(float64(p.host.Nanoseconds())/1e3/n, p.name+"-host-cpu-µs")
		b.ReportMetric(float64(p.cpu.Nanoseconds())/1e3/n, p.name+"-peer-cpu-µs")
	}
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

// floorSession starts the bare grpc-go helper and opens a Session on it;
// it returns the helper's pid too.
func floorSession(b *testing.B, name string, env ...string) (grpc.BidiStreamingClient[pluginv1.SessionRequest, pluginv1.SessionResponse], int) {
	sock := filepath.Join(socketDir(b), name)
	pid := startHelper(b, "grpcecho", sock, env...)
	conn, err := grpc.NewClient("unix://"+sock, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, dialOptions...)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	sess, err := pluginv1.NewToolPluginServiceClient(conn).Session(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return sess, pid
}

// The paired benchmarks measure a call with and without limits in the same
// iterations, on two hosts that differ only in Config.Limits and
// LimitPolicy (same plugin binary, same settings), the order turning each
// iteration, so that the machine's drift falls on both sides alike: the
// comparison of a warm call under limits with BenchmarkWarmCall, and of a
// cold start under limits with BenchmarkColdStart, without the minutes
// between two benchmarks.

// pairedSides returns the two sides' sets, without limits and with them.
func pairedSides(b *testing.B, cfg Config) (plain, limited *Set) {
	return benchHost(b, cfg), benchHost(b, benchLimits(b, cfg))
}

// echoOnce times one echo call.
func echoOnce(b *testing.B, set *Set) time.Duration {
	t0 := time.Now()
	res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"ping"}`), Options{})
	d := time.Since(t0)
	if res.Error {
		b.Fatal(res.Output)
	}
	return d
}

// BenchmarkLimitsWarmPaired: a warm call (BenchmarkWarmCall) on a host
// without limits and on one with the tool under limits (the best mechanism
// here, the server's default limits), one call each per iteration, in
// turns. It reports each side's median, and its plugin process's CPU time
// per call (peer-cpu-µs), and limits/plain, the ratio of the medians: a
// warm call must not get slower under limits.
//
// Where the limits are cgroups, a third side splits that ratio: a host
// without limits whose plugin process the benchmark moves into cgroups of
// the limited process's shape (beside its own, in the same hierarchies;
// see moveBeside), with no limit set and nothing read by the host
// (shaped). shaped/plain is what the kernel charges a process for being
// in those cgroups; limits/shaped what the host's checks add.
func BenchmarkLimitsWarmPaired(b *testing.B) {
	plain, limited := pairedSides(b, Config{MaxIdle: 1})
	sides := []*Set{plain, limited}
	names := []string{"plain", "limits"}
	var pids []int
	for _, s := range sides { // both processes started and their Sessions open
		echoOnce(b, s)
		pids = append(pids, pluginPid(b, s))
	}
	shaped := benchHost(b, Config{MaxIdle: 1})
	echoOnce(b, shaped)
	if pid := pluginPid(b, shaped); moveBeside(b, pid, pids[1]) {
		sides, names, pids = append(sides, shaped), append(names, "shaped"), append(pids, pid)
	}
	ts := make([]timings, len(sides))
	cpu0 := make([]time.Duration, len(sides))
	for side := range sides {
		cpu0[side] = procCPU(b, pids[side])
	}
	for i := 0; b.Loop(); i++ {
		for k := range sides {
			side := (i + k) % len(sides)
			ts[side] = append(ts[side], echoOnce(b, sides[side]))
		}
	}
	for side, name := range names {
		b.ReportMetric(ts[side].median(), name+"-median-µs")
		b.ReportMetric(float64((procCPU(b, pids[side])-cpu0[side]).Nanoseconds())/1e3/float64(len(ts[side])), name+"-peer-cpu-µs")
	}
	b.ReportMetric(ts[1].median()/ts[0].median(), "limits/plain")
	if len(sides) == 3 {
		b.ReportMetric(ts[2].median()/ts[0].median(), "shaped/plain")
		b.ReportMetric(ts[1].median()/ts[2].median(), "limits/shaped")
	}
}

// moveBeside moves process pid into a cgroup of its own beside each cgroup
// of process like that differs from pid's (the cgroups of a limits group):
// in the same hierarchy, under the same parent, with no limit set. It
// reports whether it moved it: not under rlimits, nor where this process
// may not make or move into those cgroups (it logs why). At the benchmark's
// end pid goes back to its cgroups and the new ones are removed.
func moveBeside(b *testing.B, pid, like int) bool {
	own, err := limits.ProcessCgroups(pid)
	if err != nil {
		b.Fatal(err)
	}
	theirs, err := limits.ProcessCgroups(like)
	if err != nil {
		b.Fatal(err)
	}
	moved := false
	for hier, dir := range theirs {
		back := own[hier]
		if back == dir || back == "" {
			continue
		}
		shaped := filepath.Join(filepath.Dir(dir), fmt.Sprintf("bench-shaped-%d", pid))
		if err := os.Mkdir(shaped, 0o755); err != nil {
			b.Logf("no shaped side: %v", err)
			return false
		}
		b.Cleanup(func() {
			_ = os.WriteFile(filepath.Join(back, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
			_ = os.Remove(shaped)
		})
		if err := os.WriteFile(filepath.Join(shaped, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			b.Logf("no shaped side: %v", err)
			return false
		}
		moved = true
	}
	return moved
}

// BenchmarkLimitsColdPaired: a cold start to first result
// (BenchmarkColdStart) on a host without limits and on one with each
// process in a limits group of its own, in turns. Each iteration runs, for
// one side and then the other (the order turning), two cold calls back to
// back once the hosts' background work (cleanups, groups made or removed)
// is done: the second call meets what the first left running, as cold
// starts in a row do, and that side's alone. It reports each side's median
// of the second calls (median-µs), of the first ones (first-median-µs),
// and the CPU time per cold start of this process and of the plugins it
// reaped, background work included (cpu-µs), and of this process alone
// (host-cpu-µs); added-µs is the difference of
// the second calls' medians (at most 0.5 ms), paired-added-µs the median of
// each iteration's difference.
func BenchmarkLimitsColdPaired(b *testing.B) {
	plain, limited := pairedSides(b, Config{MaxIdle: -1})
	sides := [2]*Set{plain, limited}
	var first, next [2]timings
	var cpu, host [2]time.Duration
	var diffs []float64
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			side := (i + k) % 2
			for _, s := range sides {
				quiesce(s)
			}
			c0, h0 := cpuWithChildren(b), selfCPU(b)
			first[side] = append(first[side], echoOnce(b, sides[side]))
			next[side] = append(next[side], echoOnce(b, sides[side]))
			quiesce(sides[side])
			cpu[side] += cpuWithChildren(b) - c0
			host[side] += selfCPU(b) - h0
		}
		diffs = append(diffs, float64((next[1][i]-next[0][i]).Nanoseconds())/1e3)
	}
	for side, name := range []string{"plain", "limits"} {
		b.ReportMetric(next[side].median(), name+"-median-µs")
		b.ReportMetric(first[side].median(), name+"-first-median-µs")
		n := float64(2 * len(next[side]))
		b.ReportMetric(float64(cpu[side].Nanoseconds())/1e3/n, name+"-cpu-µs")
		b.ReportMetric(float64(host[side].Nanoseconds())/1e3/n, name+"-host-cpu-µs")
	}
	b.ReportMetric(next[1].median()-next[0].median(), "added-µs")
	slices.Sort(diffs)
	b.ReportMetric(diffs[len(diffs)/2], "paired-added-µs")
}

// cpuWithChildren returns the CPU time of this process and of its reaped
// children so far.
func cpuWithChildren(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return selfCPU(b) + time.Duration(ru.Utime.Nano()+ru.Stime.Nano())
}

// quiesce waits until the host of set has nothing left running in the
// background. The benchmark calls it between calls only, when nothing can
// begin new background work meanwhile.
func quiesce(set *Set) {
	for _, e := range set.tools {
		e.pool.host.wg.Wait()
		return
	}
}
