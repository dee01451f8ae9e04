package limits

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

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
