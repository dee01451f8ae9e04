package limits

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

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
