package limits

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

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
