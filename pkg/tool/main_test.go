package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// Plugin directories built once by TestMain.
var dirs struct {
	root      string
	good      string // testplug
	ready     string // plugins/hello
	badschema string
	notplugin string
	plain     string // a plugin without sdk/tool
}

// TestMain builds the plugins once, or runs this binary as a helper process
// (a host to be SIGKILLed, an echo server for the benchmark floor).
func TestMain(m *testing.M) {
	switch os.Getenv("TOOLTEST_HELPER") {
	case "host":
		helperHost()
		return
	case "echo":
		helperEcho()
		return
	case "grpcecho":
		helperGRPCEcho()
		return
	}
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	root, err := os.MkdirTemp("", "tooltest")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(root)
	dirs.root = root
	dirs.good = filepath.Join(root, "good")
	dirs.ready = filepath.Join(root, "ready")
	dirs.badschema = filepath.Join(root, "badschema")
	dirs.notplugin = filepath.Join(root, "notplugin")
	dirs.plain = filepath.Join(root, "plain")
	// One go build for all: it compiles the packages in parallel.
	bin := filepath.Join(root, "bin")
	cmd := exec.Command("go", "build", "-o", bin+"/",
		"./testdata/plugins/testplug", "./testdata/plugins/badschema", "./testdata/plugins/notplugin", "./testdata/plugins/plainplug", "../../plugins/hello")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("building the plugins: %w", err)
	}
	built, err := os.ReadDir(bin)
	if err != nil {
		return 0, err
	}
	for _, f := range built {
		dst := map[string]string{"testplug": dirs.good, "badschema": dirs.badschema, "notplugin": dirs.notplugin, "plainplug": dirs.plain}[f.Name()]
		if dst == "" {
			dst = dirs.ready
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return 0, err
		}
		if err := os.Rename(filepath.Join(bin, f.Name()), filepath.Join(dst, f.Name())); err != nil {
			return 0, err
		}
	}
	return m.Run(), nil
}

// helperHost scans the directory in TOOLTEST_DIR, starts the grandchild tool
// and prints the pids it reports, then waits to be killed. Its sockets go
// to TOOLTEST_SOCKETS.
func helperHost() {
	h := NewHost(Config{SocketDir: os.Getenv("TOOLTEST_SOCKETS")})
	set, err := h.Scan(context.Background(), os.Getenv("TOOLTEST_DIR"))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	set.Execute(context.Background(), "grandchild", json.RawMessage(`{"shell":true}`), Options{
		OnOutput: func(c Chunk) { fmt.Print(c.Data) },
	})
	select {}
}

// helperEcho echoes bytes on a unix socket whose path is in TOOLTEST_SOCK.
func helperEcho() {
	l, err := net.Listen("unix", os.Getenv("TOOLTEST_SOCK"))
	if err != nil {
		os.Exit(1)
	}
	fmt.Println("ready")
	c, err := l.Accept()
	if err != nil {
		os.Exit(1)
	}
	_, _ = io.Copy(c, c)
	os.Exit(0)
}

// helperGRPCEcho serves, on a unix socket whose path is in TOOLTEST_SOCK,
// a Session that answers every call with a text result at once: a bare
// grpc-go server with the plugin protocol and nothing of sdk/tool.
func helperGRPCEcho() {
	l, err := net.Listen("unix", os.Getenv("TOOLTEST_SOCK"))
	if err != nil {
		os.Exit(1)
	}
	s := grpc.NewServer(grpc.InitialWindowSize(4<<20), grpc.InitialConnWindowSize(4<<20))
	pluginv1.RegisterToolPluginServiceServer(s, echoSession{})
	fmt.Println("ready")
	_ = s.Serve(l)
	os.Exit(0)
}

type echoSession struct {
	pluginv1.UnimplementedToolPluginServiceServer
}

func (echoSession) Session(s grpc.BidiStreamingServer[pluginv1.SessionRequest, pluginv1.SessionResponse]) error {
	for {
		req, err := s.Recv()
		if err != nil {
			return nil
		}
		res := &pluginv1.ToolResult{Output: &pluginv1.ToolResult_Text{Text: req.GetExecute().GetInputJson()}}
		if err := s.Send(&pluginv1.SessionResponse{Kind: &pluginv1.SessionResponse_Execute{
			Execute: &pluginv1.ExecuteResponse{Event: &pluginv1.ExecuteResponse_Result{Result: res}}}}); err != nil {
			return err
		}
	}
}

// newHost returns a host closed at the end of the test, which also checks
// that no goroutine, child process or socket file is left behind.
func newHost(t testing.TB, cfg Config) *Host {
	t.Helper()
	if cfg.SocketDir == "" {
		cfg.SocketDir = shortTempDir(t)
	}
	h := NewHost(cfg)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if kids := children(); len(kids) > 0 {
			t.Errorf("child processes left after Close: %v", kids)
		}
		if left, _ := os.ReadDir(cfg.SocketDir); len(left) > 0 {
			t.Errorf("socket directory not empty after Close: %v", left)
		}
		if _, ok := t.(*testing.T); ok {
			// A limits controller, the test's, outlives the host: its
			// inotify reader ends with it (pkg/tool/limits checks that).
			goleak.VerifyNone(t.(*testing.T), goleak.IgnoreAnyFunction("github.com/agentcore/agentcore/pkg/tool/limits.(*Controller).readEvents"))
		}
	})
	return h
}

// shortTempDir makes a temporary directory with a short path: unix socket
// paths inside it must stay under 108 bytes.
func shortTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "ts")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func scan(t testing.TB, h *Host, paths ...string) *Set {
	t.Helper()
	set, err := h.Scan(context.Background(), paths...)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return set
}

// children lists the processes whose parent is this process, zombies included.
func children() []string {
	var out []string
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		ppid, state, ok := procStat(e.Name())
		if ok && ppid == self {
			out = append(out, e.Name()+":"+state)
		}
	}
	return out
}

// procStat reads the parent pid and state of a process.
func procStat(pid string) (ppid int, state string, ok bool) {
	f := procFields(pid)
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0], true
}

// procFields returns the fields of /proc/PID/stat after the command (its
// state first), none when it cannot be read.
func procFields(pid string) []string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// liveInGroup lists the processes of process group pgid that run (zombies do not).
func liveInGroup(pgid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if f := procFields(e.Name()); len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, e.Name()+":"+f[0])
		}
	}
	return out
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	_, state, ok := procStat(strconv.Itoa(pid))
	return ok && state != "Z"
}

// waitGone waits until none of pids runs.
func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// openFDs counts this process's open file descriptors.
func openFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

// pidsFrom parses "pids P S" from a grandchild chunk.
func pidsFrom(line string) (plugin, sleep int, err error) {
	_, err = fmt.Sscanf(strings.TrimSpace(line), "pids %d %d", &plugin, &sleep)
	return plugin, sleep, err
}

func readLine(r io.Reader) (string, error) {
	return bufio.NewReader(r).ReadString('\n')
}

func netDialUnix(path string) (net.Conn, error) { return net.Dial("unix", path) }

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// pidOfPlugin calls the pid tool and returns the pid of the plugin process
// that served the call.
func pidOfPlugin(t *testing.T, set *Set) int {
	res := set.Execute(context.Background(), "pid", nil, Options{})
	var pid int
	if err := json.Unmarshal([]byte(res.Output.GetJson()), &pid); err != nil {
		t.Fatalf("pid: %v", res.Output)
	}
	return pid
}
