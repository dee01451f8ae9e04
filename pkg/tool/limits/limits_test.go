package limits

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// TestMain runs this binary as a helper process when LIMITSTEST_HELPER says which.
func TestMain(m *testing.M) {
	switch os.Getenv("LIMITSTEST_HELPER") {
	case "hog": // allocate and touch memory without end
		var keep [][]byte
		for {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
			runtime.KeepAlive(keep) // every block stays resident: the memory limit must stop it
		}
	case "spin": // burn CPU without end
		h := fnv.New64a()
		for {
			_, _ = h.Write([]byte{1})
		}
	case "nofile": // print the open-files limit, then wait
		var rl unix.Rlimit
		_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
		fmt.Println(rl.Cur)
		select {}
	case "escape": // a setsid grandchild that outlives this process group
		cmd := exec.Command("sleep", "1000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // done before Start returns
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		fmt.Println(cmd.Process.Pid)
		select {}
	case "fork": // start processes until refused, then fail
		for i := 0; ; i++ {
			if err := exec.Command("sleep", "1000").Start(); err != nil {
				fmt.Println("refused after", i)
				os.Exit(3)
			}
		}
	}
	os.Exit(m.Run())
}

func helper(name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LIMITSTEST_HELPER="+name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// startLocked runs g.Start on a goroutine locked to its thread, as pkg/tool's spawner does.
func startLocked(g *Group, cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- g.Start(cmd)
	}()
	return <-errc
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{256 << 20: "256 MiB", 1 << 30: "1 GiB", 3 << 29: "1.5 GiB", 512: "512 B", 64 << 10: "64 KiB", 0: "0 B"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestProcessCgroups: each cgroup directory found for this process lists
// it in its cgroup.procs, and a v1 hierarchy is keyed by its controllers.
func TestProcessCgroups(t *testing.T) {
	dirs, err := ProcessCgroups(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Skip("no cgroup hierarchy mounted here")
	}
	self := strconv.Itoa(os.Getpid())
	for hier, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			t.Errorf("%q: %v", hier, err)
			continue
		}
		if !slices.Contains(strings.Fields(string(data)), self) {
			t.Errorf("%q: %s does not list this process", hier, dir)
		}
	}
	if _, err := ProcessCgroups(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

func TestParseProcFiles(t *testing.T) {
	cg := parseProcCgroup([]byte("9:name=systemd:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/user.slice/a b\n"))
	if len(cg) != 4 || !has(cg[2].controllers, "cpuacct") || cg[1].path != "/process_api/abc" || len(cg[3].controllers) != 0 || cg[3].path != "/user.slice/a b" {
		t.Fatalf("cgroup lines = %+v", cg)
	}
	mi := parseMountinfo([]byte(
		"30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n" +
			"31 25 0:27 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n" +
			"32 25 0:28 / /sys/fs/cgroup/my\\040dir rw - cgroup2 cgroup2 rw,nsdelegate\n" +
			"33 25 0:29 / /proc rw - proc proc rw\n"))
	if len(mi) != 3 {
		t.Fatalf("mounts = %+v", mi)
	}
	if d, ok := mi[0].dirOf("/process_api/abc"); !ok || d != "/sys/fs/cgroup/memory/process_api/abc" {
		t.Errorf("memory dir = %s %v", d, ok)
	}
	if d, ok := mi[1].dirOf("/docker/x"); !ok || d != "/sys/fs/cgroup/pids" {
		t.Errorf("pids dir of the mount root = %s %v", d, ok)
	}
	if _, ok := mi[1].dirOf("/elsewhere"); ok {
		t.Error("a path outside the mount was placed in it")
	}
	if !mi[2].v2 || mi[2].point != "/sys/fs/cgroup/my dir" {
		t.Errorf("cgroup2 mount = %+v", mi[2])
	}
}

// fakeSystem writes a fake /proc (self/cgroup, self/mountinfo, self/stat)
// whose cgroup2 mount is a plain directory, and the host's cgroup in it.
func fakeSystem(t *testing.T, controllers string, root bool) (proc, cur string) {
	t.Helper()
	dir := t.TempDir()
	proc, mnt := filepath.Join(dir, "proc"), filepath.Join(dir, "cgroup")
	cur = filepath.Join(mnt, "kubepods", "pod1")
	for _, d := range []string{filepath.Join(proc, "self"), cur} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(proc, "self", "cgroup"):    "0::/kubepods/pod1\n",
		filepath.Join(proc, "self", "mountinfo"): "40 30 0:30 / " + mnt + " rw - cgroup2 cgroup2 rw\n",
		filepath.Join(proc, "self", "stat"):      "4242 (agent-server) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 8 0 777 0 0\n",
		filepath.Join(cur, "cgroup.controllers"): controllers + "\n",
		filepath.Join(cur, "cgroup.procs"):       strconv.Itoa(os.Getpid()) + "\n",
	}
	if !root {
		files[filepath.Join(cur, "cgroup.type")] = "domain\n"
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proc, cur
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestCgroup2OnAFakeHierarchy checks what the v2 mechanism writes: the host
// moves itself into a leaf, enables memory and pids for its subtree, makes a
// cgroup per group with the limits, and removes the subtrees of dead
// instances.
func TestCgroup2OnAFakeHierarchy(t *testing.T) {
	defer goleak.VerifyNone(t)
	proc, cur := fakeSystem(t, "cpuset cpu io memory pids", false)
	stale := filepath.Join(cur, "agentcore-0-999999-5", "p3")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Proc: proc})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mechanism() != Cgroup2 || !c.Supports(Memory) || !c.Supports(Processes) {
		t.Fatalf("mechanism %s: %s", c.Mechanism(), c)
	}
	if _, err := os.Stat(filepath.Dir(stale)); !os.IsNotExist(err) {
		t.Errorf("the subtree of a dead instance is still there: %v", err)
	}
	base := filepath.Join(cur, "agentcore-0-"+strconv.Itoa(os.Getpid())+"-777")
	if got := readString(t, filepath.Join(base, "server", "cgroup.procs")); got != strconv.Itoa(os.Getpid()) {
		t.Errorf("the host did not move itself into its leaf: %q", got)
	}
	for _, f := range []string{filepath.Join(cur, "cgroup.subtree_control"), filepath.Join(base, "cgroup.subtree_control")} {
		if got := readString(t, f); got != "+memory +pids" {
			t.Errorf("%s = %q", f, got)
		}
	}
	g, err := c.NewGroup(Limits{Memory: 256 << 20, Processes: 64, OpenFiles: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"memory.max": "268435456", "memory.swap.max": "0", "pids.max": "64", "memory.oom.group": "1"}
	for f, v := range want {
		if got := readString(t, filepath.Join(g.dir, f)); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	if err := g.Set(Limits{Memory: 512 << 20, Processes: 64}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(g.dir, "memory.max")); got != "536870912" {
		t.Errorf("memory.max after Set = %q", got)
	}
	if _, ok := g.Breach(nil, ""); ok {
		t.Fatal("a breach before any event")
	}
	// The kernel counts an OOM kill: the watcher sees the file change.
	if err := os.WriteFile(filepath.Join(g.dir, "memory.events"), []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for g.breach.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b, ok := g.Breach(nil, "")
	if !ok || b.Kind != Memory || b.String() != "memory limit of 512 MiB" {
		t.Fatalf("breach = %+v, %v", b, ok)
	}
	// The watcher records the breach, then kills: cgroup.kill may not be
	// written yet.
	for b, _ := os.ReadFile(filepath.Join(g.dir, "cgroup.kill")); strings.TrimSpace(string(b)) != "1"; b, _ = os.ReadFile(filepath.Join(g.dir, "cgroup.kill")) {
		if time.Now().After(deadline) {
			t.Fatal("the breach did not kill the group (cgroup.kill)")
		}
		time.Sleep(time.Millisecond)
	}
	// A fake cgroup keeps its files: remove them as the kernel would.
	files, _ := os.ReadDir(g.dir)
	for _, f := range files {
		os.Remove(filepath.Join(g.dir, f.Name()))
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.dir); !os.IsNotExist(err) {
		t.Errorf("group cgroup left: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCgroup2FallsBack checks the v2 cases that must not be used, and that
// Auto then falls back instead of failing.
func TestCgroup2FallsBack(t *testing.T) {
	t.Run("no memory controller", func(t *testing.T) {
		proc, _ := fakeSystem(t, "cpu io", false)
		c, err := New(Options{Proc: proc})
		if err != nil {
			t.Fatal(err)
		}
		if c.Mechanism() == Cgroup2 || !strings.Contains(c.String(), "no memory controller") {
			t.Fatalf("chose %s", c)
		}
		if _, err := New(Options{Proc: proc, Mechanism: Cgroup1}); err == nil {
			t.Fatal("cgroup1 asked for where there is none: no error")
		}
	})
	t.Run("the root cgroup is used in place", func(t *testing.T) {
		proc, cur := fakeSystem(t, "memory pids", true)
		c, err := New(Options{Proc: proc})
		if err != nil || c.Mechanism() != Cgroup2 {
			t.Fatalf("New = %v, %v", c, err)
		}
		if c.v2server != "" {
			t.Errorf("the host moved itself out of the root cgroup to %s", c.v2server)
		}
		os.Remove(filepath.Join(c.v2base, "cgroup.subtree_control")) // a fake cgroup keeps its files
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(cur)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "agentcore-") {
				t.Errorf("left in the cgroup: %s", e.Name())
			}
		}
	})
	t.Run("no proc", func(t *testing.T) {
		c, err := New(Options{Proc: t.TempDir()})
		if err != nil || c.Mechanism() != Rlimit {
			t.Fatalf("New = %v, %v", c, err)
		}
	})
}

// realV1 returns a cgroup v1 controller, or skips where there is none.
func realV1(t *testing.T) *Controller { return realV1Opts(t, Options{}) }

// realV1Opts returns a cgroup v1 controller made with opts, closed at the
// end of the test, which checks that its subtrees are gone.
func realV1Opts(t *testing.T, opts Options) *Controller {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroup v1 needs root")
	}
	opts.Mechanism = Cgroup1
	c, err := New(opts)
	if err != nil {
		t.Skipf("no cgroup v1 here: %v", err)
	}
	bases := []string{c.v1track}
	for _, h := range c.v1 {
		bases = append(bases, h.base)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, b := range bases {
			if _, err := os.Stat(b); b != "" && !os.IsNotExist(err) {
				t.Errorf("subtree left: %s", b)
			}
		}
	})
	return c
}

// v1Modes runs f under cgroup v1 with each tree tracked in cgroup v2 (where
// this machine has a v2 hierarchy beside the v1 ones, as systemd's hybrid
// layout does) and with the v1 cgroups alone.
func v1Modes(t *testing.T, f func(t *testing.T, c *Controller)) {
	for _, alone := range []bool{false, true} {
		name := "tracked in v2"
		if alone {
			name = "v1 alone"
		}
		t.Run(name, func(t *testing.T) {
			c := realV1Opts(t, Options{noTrack: alone})
			if !alone && c.v1track == "" {
				t.Skip("no cgroup v2 hierarchy beside the v1 ones: " + c.String())
			}
			f(t, c)
		})
	}
}

// run starts a helper in g and returns it with a function that reaps it.
func run(t *testing.T, g *Group, name string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := helper(name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &strings.Builder{}
	if err := startLocked(g, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killAndClose(t, g, cmd) })
	return cmd, bufio.NewReader(out)
}

// killAndClose kills g's tree, reaps cmd, its first process, and checks
// that the tree dies and the group goes.
func killAndClose(t *testing.T, g *Group, cmd *exec.Cmd) {
	t.Helper()
	g.Kill()
	_ = cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Wait(ctx); err != nil {
		t.Errorf("the tree did not die: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("group Close: %v", err)
	}
}

func TestCgroup1MemoryBreachKillsTheTree(t *testing.T) { v1Modes(t, testCgroup1MemoryBreach) }

func testCgroup1MemoryBreach(t *testing.T, c *Controller) {
	g, err := c.NewGroup(Limits{Memory: 64 << 20, Processes: 64})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd, _ := run(t, g, "hog")
	// The first process is in the group from its first instruction.
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	if !strings.Contains(string(b), g.dir[strings.Index(g.dir, "/agentcore-"):]) {
		t.Errorf("the process is not in its group: %s", b)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("hog ended with %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("killed after %v", d)
	}
	br, ok := g.Breach(cmd.ProcessState, "")
	if !ok || br.Kind != Memory || br.String() != "memory limit of 64 MiB" {
		t.Fatalf("breach = %+v, %v", br, ok)
	}
}

func TestCgroup1ProcessLimitAndEscapes(t *testing.T) { v1Modes(t, testCgroup1ProcessLimitAndEscapes) }

func testCgroup1ProcessLimitAndEscapes(t *testing.T, c *Controller) {
	if !c.Supports(Processes) {
		t.Skip("no pids controller")
	}
	t.Run("process limit", func(t *testing.T) {
		g, err := c.NewGroup(Limits{Processes: 24})
		if err != nil {
			t.Fatal(err)
		}
		cmd, _ := run(t, g, "fork")
		// The helper fails at the refused fork (a plain build's runtime
		// may already die there, unable to start a thread), and the group
		// names the breach: no kernel since 6.12 notifies it under v1.
		err = cmd.Wait()
		if err == nil {
			t.Fatal("the fork helper ended by itself")
		}
		if br, ok := g.Breach(cmd.ProcessState, ""); !ok || br.Kind != Processes || br.String() != "limit of 24 processes" {
			t.Fatalf("breach = %+v, %v", br, ok)
		}
	})
	t.Run("a refused fork the tree survives", func(t *testing.T) {
		// sh exits at the refused fork, its sleeps stay: no crash shows
		// the breach, and cgroup v1 notifies none since Linux 6.12.
		g, err := c.NewGroup(Limits{Processes: 4})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6; do sleep 5 & done; wait")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := startLocked(g, cmd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { killAndClose(t, g, cmd) })
		_ = cmd.Wait()
		if br, ok := g.Check(); !ok || br.Kind != Processes || br.String() != "limit of 4 processes" {
			t.Fatalf("Check = %+v, %v after sh ended with %v", br, ok, cmd.ProcessState)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := g.Wait(ctx); err != nil {
			t.Fatalf("the sleeps outlived the breach: %v", err)
		}
	})
	t.Run("setsid escape dies with the group", func(t *testing.T) {
		g, err := c.NewGroup(Limits{})
		if err != nil {
			t.Fatal(err)
		}
		cmd, out := run(t, g, "escape")
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		sleep, _ := strconv.Atoi(strings.TrimSpace(line))
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL) // what a process-group kill reaches
		_ = cmd.Wait()
		if unix.Kill(sleep, 0) != nil {
			t.Fatal("the escaped sleep died with the process group: the test proves nothing")
		}
		if g.v2dir != "" { // tracked: the escape is in the v2 cgroup too
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sleep))
			if !strings.Contains(string(b), "0::/") || !strings.Contains(string(b), "/"+filepath.Base(g.v2dir)+"\n") {
				t.Errorf("the escaped sleep is not in the group's cgroup v2 cgroup %s: %s", g.v2dir, b)
			}
		}
		if g.Empty() {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sleep))
			p, _ := os.ReadFile(g.dir + "/cgroup.procs")
			t.Fatalf("Empty with the escaped sleep alive: %s in %s; procs %q", b, g.dir, p)
		}
		g.Kill()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := g.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		// The sleep was re-parented to init (or a subreaper): it is gone or a zombie.
		if !zombieOrGone(sleep) {
			t.Fatalf("sleep %d survived the group's kill", sleep)
		}
	})
}

// TestHostWritten: the events of the files the host writes are dropped,
// those of the files the kernel changes (the tree's counters, its
// populated state) are not.
func TestHostWritten(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"tasks", true}, {"cgroup.procs", true}, {"cgroup.kill", true}, {"cgroup.event_control", true},
		{"memory.max", true}, {"memory.swap.max", true}, {"memory.oom.group", true}, {"pids.max", true},
		{"memory.limit_in_bytes", true}, {"memory.memsw.limit_in_bytes", true},
		{"cgroup.events", false}, {"memory.events", false}, {"memory.events.local", false},
		{"pids.events", false}, {"memory.oom_control", false}, {"", false},
	} {
		if got := hostWritten(tc.file); got != tc.want {
			t.Errorf("hostWritten(%q) = %v, want %v", tc.file, got, tc.want)
		}
	}
}

func TestOutOfMemoryLine(t *testing.T) {
	for in, want := range map[string]string{
		"fatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw(…)\n":    "fatal error: runtime: out of memory",
		"Traceback (most recent call last):\n  File \"<string>\", line 3\nMemoryError": "MemoryError",
		"started\nerror: Cannot allocate memory (os error 12)\n":                       "error: Cannot allocate memory (os error 12)",
		"panic: boom\n\ngoroutine 1 [running]:\n":                                      "",
		// A Go program's dump, its first line lost.
		"\nruntime stack:\nruntime.throw({0xb8384d?, 0x2c2f?})\n\t/usr/local/go/src/runtime/panic.go:1229 +0x48\n" +
			"runtime.sysMapOS(0x30bddcc00000, 0x800000, {0xb75d81, 0x4})\n\t/usr/local/go/src/runtime/mem_linux.go:175 +0x13b\n": "runtime.sysMapOS(0x30bddcc00000, 0x800000, {0xb75d81, 0x4})",
		"goroutine 7 [running]:\nmain.handler()\n\t/src/main.go:9\n": "",
	} {
		if got := OutOfMemoryLine([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestStatAlive(t *testing.T) {
	for _, tt := range []struct {
		stat  string
		alive bool
	}{
		{"7 (sleep) S 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", true},
		{"7 (sleep) S 1 43 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", false}, // another group
		{"7 (sleep) Z 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", false},
		// A thread group leader that exited while its other threads run.
		{"7 (go) Z 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 3 0 144263", true},
		{"7 (a) b (c)) R 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", true},
		{"7 (cut", false},
	} {
		if got := statAlive([]byte(tt.stat), []byte("42")); got != tt.alive {
			t.Errorf("%q: alive %v, want %v", tt.stat, got, tt.alive)
		}
	}
}

// TestProcessGroupDead: a group is dead when its processes are gone or
// zombies, whoever has yet to reap them; a live member keeps it alive
// after its leader died.
func TestProcessGroupDead(t *testing.T) {
	cmd := exec.Command("bash", "-c", "sleep 1000 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = unix.Kill(-pgid, unix.SIGKILL)
		_ = cmd.Wait()
	})
	var sleep int
	if _, err := fmt.Fscan(out, &sleep); err != nil {
		t.Fatal(err)
	}
	if ProcessGroupDead("", pgid) {
		t.Fatal("a running group is dead")
	}
	// The leader dies, and is not reaped: its zombie keeps the group to kill.
	_ = unix.Kill(pgid, unix.SIGKILL)
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pgid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if ProcessGroupDead("", pgid) {
		t.Fatalf("dead with sleep %d running", sleep)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := WaitProcessGroup(ctx, "", pgid); err == nil {
		t.Fatal("WaitProcessGroup returned with sleep running")
	}
	// The orphaned sleep dies; this machine's init may never reap it.
	_ = unix.Kill(sleep, unix.SIGKILL)
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := WaitProcessGroup(ctx, "", pgid); err != nil {
		t.Fatalf("WaitProcessGroup with its processes zombies: %v", err)
	}
	if !zombieOrGone(sleep) {
		t.Fatalf("sleep %d runs", sleep)
	}
	_ = cmd.Wait()
	if !ProcessGroupDead("", pgid) {
		t.Fatal("not dead after the reap")
	}
}

// zombieOrGone reports whether pid has ended: a zombie, or reaped.
func zombieOrGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

func TestCPUTimeBreach(t *testing.T) {
	for _, mech := range []Mechanism{Cgroup1, Rlimit} {
		t.Run(string(mech), func(t *testing.T) {
			var c *Controller
			if mech == Cgroup1 {
				c = realV1(t)
			} else {
				var err error
				if c, err = New(Options{Mechanism: Rlimit}); err != nil {
					t.Fatal(err)
				}
			}
			g, err := c.NewGroup(Limits{CPUTime: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			cmd, _ := run(t, g, "spin")
			stop := g.WatchCPU(300 * time.Millisecond)
			defer stop()
			start := time.Now()
			_ = cmd.Wait()
			if d := time.Since(start); d < 250*time.Millisecond {
				t.Errorf("killed after %v, before using its CPU time", d)
			}
			if br, ok := g.Breach(cmd.ProcessState, ""); !ok || br.Kind != CPUTime || !strings.Contains(br.String(), "300ms") {
				t.Fatalf("breach = %+v, %v", br, ok)
			}
		})
	}
}

// TestCPURlimit: under the rlimit mechanism WatchCPU also sets RLIMIT_CPU,
// the backstop for what its watch cannot see (a child's CPU time until the
// child ends): SIGXCPU at the soft limit, SIGKILL a second later for a
// process that ignores SIGXCPU (a Go program), and either is the CPU time
// breach, not a crash; a process the host killed is none.
func TestCPURlimit(t *testing.T) {
	c, err := New(Options{Mechanism: Rlimit})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cmd    func() *exec.Cmd
		signal syscall.Signal
		breach bool
	}{
		{"SIGXCPU at the soft limit", func() *exec.Cmd { return exec.Command("sh", "-c", "while :; do :; done") }, syscall.SIGXCPU, true},
		// A hard limit of 2 s, in case the host may not set it (without CAP_SYS_RESOURCE).
		{"SIGKILL at the hard limit", func() *exec.Cmd {
			cmd := exec.Command("sh", "-c", `ulimit -t 2 && exec "$0" -test.run='^$'`, os.Args[0])
			cmd.Env = helper("spin").Env
			return cmd
		}, syscall.SIGKILL, true},
		{"killed by the host", func() *exec.Cmd { return exec.Command("sleep", "100") }, syscall.SIGKILL, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := c.NewGroup(Limits{CPUTime: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			cmd := tt.cmd()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := startLocked(g, cmd); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killAndClose(t, g, cmd) })
			g.setCPURlimit(500 * time.Millisecond) // the rlimit alone: no watch
			var lim unix.Rlimit
			if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_CPU, nil, &lim); err != nil || lim.Cur != 1 || c.raiseHard && lim.Max != 2 {
				t.Fatalf("RLIMIT_CPU %+v, %v; want 1 s (and 2 s): the next second past 500ms", lim, err)
			}
			if !tt.breach {
				g.Kill()
			}
			_ = cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != tt.signal {
				t.Fatalf("ended with %v, want %v", cmd.ProcessState, tt.signal)
			}
			br, ok := g.Breach(cmd.ProcessState, "")
			if ok != tt.breach || ok && (br.Kind != CPUTime || !strings.Contains(br.Detail, "RLIMIT_CPU") || br.String() != "CPU time limit of 500ms") {
				t.Fatalf("breach %+v %v, want %v", br, ok, tt.breach)
			}
		})
	}
}

func TestRlimitMemoryAndOpenFiles(t *testing.T) {
	c, err := New(Options{Mechanism: Rlimit})
	if err != nil {
		t.Fatal(err)
	}
	if c.Supports(Processes) || !c.Supports(Memory) {
		t.Fatalf("rlimit supports: %s", c)
	}
	g, err := c.NewGroup(Limits{Memory: 128 << 20, OpenFiles: 77, Processes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if g.Limits().Processes != 0 {
		t.Error("a process limit the mechanism cannot enforce was kept")
	}
	cmd, out := run(t, g, "nofile")
	if line, _ := out.ReadString('\n'); strings.TrimSpace(line) != "77" {
		t.Errorf("RLIMIT_NOFILE in the child = %q", line)
	}
	g.Kill()
	_ = cmd.Wait()

	g2, err := c.NewGroup(Limits{Memory: 128 << 20})
	if err != nil {
		t.Fatal(err)
	}
	hog, _ := run(t, g2, "hog")
	_ = hog.Wait()
	stderr := hog.Stderr.(*strings.Builder).String()
	br, ok := g2.Breach(hog.ProcessState, stderr)
	if !ok || br.Kind != Memory || br.String() != "memory limit of 128 MiB" {
		t.Fatalf("breach = %+v, %v; stderr %.200s", br, ok, stderr)
	}
}

// TestCgroup2Real uses this machine's cgroup v2 hierarchy, if it has one
// the host can write, for what works without controllers: the first process
// born in its cgroup, the kill of the whole tree, Empty, CPU accounting.
func TestCgroup2Real(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	c, err := New(Options{Mechanism: Cgroup2})
	if err != nil {
		t.Skipf("no writable cgroup v2 here: %v", err)
	}
	defer c.Close()
	g, err := c.NewGroup(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cmd, out := run(t, g, "escape")
	line, _ := out.ReadString('\n')
	sleep, _ := strconv.Atoi(strings.TrimSpace(line))
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	if !strings.Contains(string(b), "0::/"+strings.TrimPrefix(g.dir, "/sys/fs/cgroup/unified/")) && !strings.Contains(string(b), filepath.Base(g.dir)) {
		t.Errorf("not born in its cgroup: %s", b)
	}
	if g.Empty() {
		t.Fatal("Empty while running")
	}
	if _, err := g.CPU(); err != nil {
		t.Errorf("CPU: %v", err)
	}
	g.Kill()
	_ = cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if !zombieOrGone(sleep) {
		t.Fatalf("escaped sleep %d survived", sleep)
	}
}

func TestStaleV1SubtreeIsKilledAndRemoved(t *testing.T) {
	c := realV1(t)
	mem := c.v1hier("memory")
	stale := filepath.Join(mem.self, "agentcore-"+Self("").NS+"-999999-1", "p1")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "1000")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "cgroup.procs"), []byte(strconv.Itoa(sleep.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	c2, err := New(Options{Mechanism: Cgroup1})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := sleep.Wait(); err == nil {
		t.Fatal("the process left in a dead instance's cgroup was not killed")
	}
	if _, err := os.Stat(filepath.Dir(stale)); !os.IsNotExist(err) {
		t.Fatalf("stale subtree still there: %v", err)
	}
	// A live instance's subtree (the first controller's) stays.
	if _, err := os.Stat(mem.base); err != nil {
		t.Fatalf("a live instance's subtree was removed: %v", err)
	}
}

// BenchmarkGroup: what a limits group costs a process start with the best
// mechanism here. pkg/tool makes a process's group ahead of its start (a
// spare per plugin), so a cold start pays running-µs over the plain fork's
// start-µs (StartThen's started, called once the process runs; start-µs
// adds the forking thread's way back out of the v1 cgroups); make-µs and
// remove-µs happen off its path: reused, the cgroups a closed group left
// (the way a plugin's processes follow one another), fresh, new ones each
// time (limits no closed group had).
func BenchmarkGroup(b *testing.B) {
	c, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	}
	b.Run("plain", func(b *testing.B) {
		var starts []time.Duration
		for b.Loop() {
			cmd := exec.Command(truePath)
			t0 := time.Now()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			starts = append(starts, time.Since(t0))
			_ = cmd.Wait()
		}
		b.ReportMetric(median(starts), "start-µs")
	})
	for _, side := range []struct {
		name  string
		fresh bool
	}{{"reused", false}, {"fresh", true}} {
		b.Run(string(c.Mechanism())+"/"+side.name, func(b *testing.B) {
			var made, running, starts, removed []time.Duration
			for i := 0; b.Loop(); i++ {
				l := Limits{Memory: 1 << 30, Processes: 1024}
				if side.fresh { // limits no closed group had: nothing to reuse
					l.Memory += uint64(i+1) << 12
				}
				t0 := time.Now()
				g, err := c.NewGroup(l)
				if err != nil {
					b.Fatal(err)
				}
				made = append(made, time.Since(t0))
				cmd := exec.Command(truePath)
				t1 := time.Now()
				if err := g.StartThen(cmd, func(error) { running = append(running, time.Since(t1)) }); err != nil {
					b.Fatal(err)
				}
				starts = append(starts, time.Since(t1))
				_ = cmd.Wait()
				t2 := time.Now()
				if err := g.Close(); err != nil {
					b.Fatal(err)
				}
				removed = append(removed, time.Since(t2))
			}
			b.ReportMetric(median(made), "make-µs")
			b.ReportMetric(median(running), "running-µs")
			b.ReportMetric(median(starts), "start-µs")
			b.ReportMetric(median(removed), "remove-µs")
		})
	}
}

// BenchmarkCheck: what Check adds to every call of a tool under limits (the
// server's default limits; with cgroup v1, two reads), and that it
// allocates nothing.
func BenchmarkCheck(b *testing.B) {
	c, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	g, err := c.NewGroup(Limits{Memory: 1 << 30, Processes: 1024})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	b.ReportAllocs()
	for b.Loop() {
		if br, ok := g.Check(); ok {
			b.Fatal(br)
		}
	}
}

// TestCgroupReuse: a group closed after a tree that died within its limits
// leaves its cgroups to the next group with the same limits, which starts
// its tree there and still sees its own breach; a group that saw a breach
// leaves nothing behind, nor one with other limits; Close removes what is
// kept.
func TestCgroupReuse(t *testing.T) { v1Modes(t, testCgroupReuse) }

func testCgroupReuse(t *testing.T, c *Controller) {
	l := Limits{Memory: 64 << 20, Processes: 64}
	clean := func(g *Group) {
		t.Helper()
		cmd := exec.Command("sleep", "10")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := startLocked(g, cmd); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if err := unix.Kill(cmd.Process.Pid, 0); err != nil {
			t.Fatalf("the tree died at start in %s: %v", g.dir, cmd.Wait())
		}
		// As pkg/tool kills a plugin: its process group, the reap, then
		// what is left of the tree (nothing).
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		_ = cmd.Wait()
		killAndClose(t, g, cmd)
	}
	g1, err := c.NewGroup(l)
	if err != nil {
		t.Fatal(err)
	}
	dir1 := g1.dir
	clean(g1)
	if _, err := os.Stat(dir1); err != nil {
		t.Fatalf("the cgroup was not kept: %v", err)
	}
	g2, err := c.NewGroup(l)
	if err != nil {
		t.Fatal(err)
	}
	if g2.dir != dir1 {
		t.Fatalf("the next group made %s instead of reusing %s", g2.dir, dir1)
	}
	clean(g2) // a second tree runs in it, and does not inherit a kill
	g3, err := c.NewGroup(l)
	if err != nil {
		t.Fatal(err)
	}
	if g3.dir != dir1 {
		t.Fatalf("the third group made %s instead of reusing %s", g3.dir, dir1)
	}
	if br, ok := g3.Check(); ok {
		t.Fatalf("a reused group starts with a breach: %v", br)
	}
	cmd := helper("hog")
	if err := startLocked(g3, cmd); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if br, ok := g3.Breach(cmd.ProcessState, ""); !ok || br.Kind != Memory {
		t.Fatalf("the reused group missed the hog's breach: %+v, %v (hog: %v)", br, ok, err)
	}
	killAndClose(t, g3, cmd)
	if _, err := os.Stat(dir1); !os.IsNotExist(err) {
		t.Fatalf("a group that saw a breach was kept: %v", err)
	}
	g4, err := c.NewGroup(l)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.NewGroup(Limits{Memory: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if other.dir == g4.dir || g4.dir == dir1 {
		t.Fatalf("groups share cgroups: %s, %s (the breached one was %s)", g4.dir, other.dir, dir1)
	}
	clean(g4)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	kept := []string{g4.dir, other.dir}
	// A tree killed while it runs: reused or not (not after cgroup.kill,
	// see cgroupKilled), the next tree runs.
	g5, err := c.NewGroup(l)
	if err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "10")
	if err := startLocked(g5, sleep); err != nil {
		t.Fatal(err)
	}
	killAndClose(t, g5, sleep)
	g6, err := c.NewGroup(l)
	if err != nil {
		t.Fatal(err)
	}
	clean(g6)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, d := range kept {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("Close left the kept cgroup %s", d)
		}
	}
}
