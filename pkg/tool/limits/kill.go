package limits

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Kill sends SIGKILL to every process of the tree. It does not wait for
// them to die: Empty and Wait tell when they have.
func (g *Group) Kill() {
	g.killed.Store(true)
	g.mu.Lock()
	pid, closed := g.pid, g.closed
	g.mu.Unlock()
	if closed {
		return // its cgroups may hold another group's tree now
	}
	switch g.c.mech {
	case Cgroup2:
		if g.cgroupKill() {
			return
		}
		killProcs(filepath.Join(g.dir, "cgroup.procs"))
	case Cgroup1:
		if g.v2dir != "" && g.cgroupKill() {
			return
		}
		killProcs(filepath.Join(g.dir, "cgroup.procs"))
	default:
		if pid > 0 {
			_ = unix.Kill(-pid, unix.SIGKILL)
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// cgroupKill kills the tree with v2dir's cgroup.kill, which takes forks
// in flight too, and reports whether it could; nothing is written when the
// tree is empty.
func (g *Group) cgroupKill() bool {
	if g.Empty() {
		return true
	}
	g.cgroupKilled.Store(true)
	if g.killer == nil {
		return writeFile(filepath.Join(g.v2dir, "cgroup.kill"), "1") == nil
	}
	_, err := g.killer.Write([]byte("1"))
	return err == nil
}

// killProcs SIGKILLs the processes listed in a cgroup.procs file, again
// for those forked meanwhile, and returns how many it signalled.
func killProcs(procs string) int {
	seen := map[int]bool{}
	for range 4 {
		pids, err := readPids(procs)
		if err != nil {
			break
		}
		fresh := 0
		for _, pid := range pids {
			if !seen[pid] {
				seen[pid] = true
				fresh++
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		if fresh == 0 {
			break
		}
	}
	return len(seen)
}

// Empty reports whether the tree is dead: no process of it runs. With a
// cgroup that is the cgroup's own count (a zombie no longer counts: a
// process leaves its cgroups before its parent can see its exit): its
// cgroup v2 cgroup.events, one read of a small file, or the v1 memory
// cgroup's process list; without one the tree is the first process's
// process group, and Empty is ProcessGroupDead (its zombies count as dead,
// and cost a read of /proc while they are not reaped: the first process's
// too).
func (g *Group) Empty() bool {
	if g.v2dir != "" {
		var b []byte
		var err error
		if g.events != nil {
			var buf [64]byte
			var n int
			n, err = g.events.ReadAt(buf[:], 0)
			b = buf[:n]
		} else {
			b, err = os.ReadFile(filepath.Join(g.v2dir, "cgroup.events"))
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return false
		}
		populated, err := parseKeyed(b, "populated")
		return err == nil && populated == 0
	}
	if g.c.mech == Cgroup1 {
		pids, err := readPids(filepath.Join(g.dir, "cgroup.procs"))
		return err == nil && len(pids) == 0
	}
	g.mu.Lock()
	pid := g.pid
	g.mu.Unlock()
	if pid <= 0 {
		return true
	}
	return ProcessGroupDead(g.c.proc, pid)
}

// Cgroup reports whether the group is a cgroup (cgroup v1 or v2): then
// Empty counts every process of the tree, a daemon that left the process
// group too.
func (g *Group) Cgroup() bool { return g.c.mech == Cgroup1 || g.c.mech == Cgroup2 }

// Wait waits until the tree is dead (Empty) or ctx ends. With a cgroup v2
// cgroup (v2, or v1 tracked in v2) the kernel's notice that it emptied
// (cgroup.events, through inotify) wakes it, and it looks again every
// millisecond at first regardless; with a v1 cgroup alone it looks again
// after 50 µs, then less and less often (every 10 ms at most); without a
// cgroup it is WaitProcessGroup.
func (g *Group) Wait(ctx context.Context) error {
	if !g.Cgroup() {
		g.mu.Lock()
		pid := g.pid
		g.mu.Unlock()
		return WaitProcessGroup(ctx, g.c.proc, pid)
	}
	delay := 50 * time.Microsecond
	if g.v2dir != "" {
		delay = time.Millisecond
	}
	for !g.Empty() {
		if err := pause(ctx, delay, g.changed); err != nil {
			return err
		}
		delay = min(delay*2, 10*time.Millisecond)
	}
	return nil
}
