package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
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

func (ts timings) report(b *testing.B) {
	if len(ts) == 0 {
		return
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2].Nanoseconds())/1e3, "median-µs")
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
func startHelper(b *testing.B, kind, sock string) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TOOLTEST_HELPER="+kind, "TOOLTEST_SOCK="+sock)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := readLine(out); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWarmCall: one call on an idle process (a gRPC round trip on the
// plugin's unix socket, input validated). Target ≤ 80 µs, aim 50.
func BenchmarkWarmCall(b *testing.B) {
	benchEcho(b, benchHost(b, Config{MaxIdle: 1}))
}

// benchEcho times echo calls and reports their median.
func benchEcho(b *testing.B, set *Set) {
	input := json.RawMessage(`{"text":"ping"}`)
	ts := make(timings, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		res := set.Execute(context.Background(), "echo", input, Options{})
		ts = append(ts, time.Since(t0))
		if res.Error {
			b.Fatal(res.Output)
		}
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

// BenchmarkWarmCallLimits: BenchmarkWarmCall with the tool under limits
// (the best mechanism here). A call whose limits are those of the process
// writes nothing: it must not be slower than BenchmarkWarmCall.
func BenchmarkWarmCallLimits(b *testing.B) {
	benchEcho(b, benchHost(b, benchLimits(b, Config{MaxIdle: 1})))
}

// BenchmarkColdStartLimits: BenchmarkColdStart with each process in a
// limits group of its own (with cgroups: making the cgroups and forking
// into them; removing them happens after the result). Target: at most
// 0.5 ms over BenchmarkColdStart.
func BenchmarkColdStartLimits(b *testing.B) {
	benchEcho(b, benchHost(b, benchLimits(b, Config{MaxIdle: -1})))
}

// BenchmarkKillToResult: from cancelling a spinning call to its result, the
// process group killed and reaped. Target ≤ 3 ms.
func BenchmarkKillToResult(b *testing.B) {
	benchKill(b, benchHost(b, Config{MaxIdle: 4}))
}

// BenchmarkKillToResultLimits: BenchmarkKillToResult with the tree under
// limits: the kill takes the whole group too (cgroup.kill, or each process
// the cgroup lists), and the result still waits only for the plugin's reap.
func BenchmarkKillToResultLimits(b *testing.B) {
	benchKill(b, benchHost(b, benchLimits(b, Config{MaxIdle: 4})))
}

func benchKill(b *testing.B, set *Set) {
	ts := make(timings, 0, b.N)
	for b.Loop() {
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
func BenchmarkFloorGRPCSession(b *testing.B) {
	sock := filepath.Join(socketDir(b), "grpc.sock")
	startHelper(b, "grpcecho", sock)
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
	for b.Loop() {
		t0 := time.Now()
		if err := sess.Send(req); err != nil {
			b.Fatal(err)
		}
		if _, err := sess.Recv(); err != nil {
			b.Fatal(err)
		}
		ts = append(ts, time.Since(t0))
	}
	ts.report(b)
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
