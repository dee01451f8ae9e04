package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

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
			if _, err := pr.callSession(context.Background(), req, &chunkDecoder{}, nil, nil); err != nil {
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
