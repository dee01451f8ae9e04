package limits

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ErrRegroup says a group cannot take new limits in place (a limit of a
// kind it was made without, or memory below what it already uses): start
// the tree again in a new group.
var ErrRegroup = errors.New("limits: the group cannot take these limits in place")

// Group is one process tree under limits. Start forks its first process;
// every process that one starts is in the group too. The zero Group is not
// usable: make one with Controller.NewGroup.
type Group struct {
	c    *Controller
	cgfd int // v2dir open, for CLONE_INTO_CGROUP; -1 without v2dir

	// v2dir is the group's cgroup in the cgroup v2 hierarchy: its cgroup
	// (v2), or the cgroup that tracks its tree (v1 with the controller's
	// v1track); "" otherwise. Its cgroup.events says when the tree is
	// empty, and notifies it; its cgroup.kill kills the tree. Both files
	// are kept open (events, killer): one system call each to use.
	v2dir          string
	events, killer *os.File

	// dir is the cgroup (v2), or the memory cgroup (v1) whose cgroup.procs
	// lists the tree; dirs are all its cgroup directories (v1: one per
	// controller), removed by Close.
	dir     string
	dirs    []string
	pidsDir string // v1: the pids cgroup, "" without one
	cpuDir  string // v1: the cpuacct cgroup, "" without one

	mu     sync.Mutex
	limits Limits // guarded by mu
	pid    int    // the first process; guarded by mu
	closed bool   // guarded by mu

	breach atomic.Pointer[Breach] // set by watchers: a breach they saw and acted on
	killed atomic.Bool            // Kill was called: a SIGKILL seen after it is the host's
	// cgroupKilled: Kill wrote cgroup.kill. Such a cgroup is not reused:
	// a kernel may go on killing, at once and for good, every process
	// cloned into a cgroup after its cgroup.kill (CLONE_INTO_CGROUP).
	cgroupKilled atomic.Bool
	// cpuRlimit is the first process's RLIMIT_CPU soft limit in seconds
	// (rlimit mechanism), set by WatchCPU; 0 when none.
	cpuRlimit atomic.Uint64
	// cpuBase is the cgroup's CPU account when the group took its cgroups
	// over from an earlier one (reuse), 0 for new ones: CPU counts from it.
	cpuBase  time.Duration
	watchers []*os.File // closed by Close; their goroutines end then
	wds      []int      // the group's watches in the controller's inotify instance
	wg       sync.WaitGroup

	// checkMu keeps Close from closing Check's descriptors under it: cgroup
	// v1's OOM eventfd (its file is in watchers too) and pids.events
	// (since Linux 6.12 the kernel notifies only cgroup v2's pids.events,
	// so a refused fork in a v1 group wakes no watcher). -1 when there is
	// none, and once Close has begun.
	checkMu       sync.Mutex
	oomFd, pidsFd int

	// changed gets a value (without blocking: capacity 1) when one of the
	// group's watched files changed: with cgroup v2, cgroup.events when
	// the group empties. Wait waits on it.
	changed chan struct{}
}

// Limits returns the group's limits.
func (g *Group) Limits() Limits {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limits
}

// Set changes the group's limits in place. ErrRegroup means it cannot:
// start the tree again in a new group.
func (g *Group) Set(l Limits) error {
	l = g.c.Enforced(l)
	g.mu.Lock()
	defer g.mu.Unlock()
	if l == g.limits {
		return nil
	}
	old := g.limits
	var err error
	switch g.c.mech {
	case Cgroup2:
		if l.Memory > 0 && (old.Memory == 0 || l.Memory < old.Memory) && g.c.v2memory {
			if cur, rerr := readUint(filepath.Join(g.dir, "memory.current")); rerr == nil && cur > l.Memory {
				return ErrRegroup
			}
		}
		err = g.applyV2(l, old)
	case Cgroup1:
		err = g.applyV1(l, old)
	}
	if err == nil && g.pid > 0 {
		err = g.prlimits(g.pid, l, old)
	}
	if err != nil {
		return err
	}
	g.limits = l
	return nil
}

// Close stops the watchers and removes the group's cgroups, or hands them
// to the controller for the next group with the same limits (see park):
// the group must not be used after Close. The tree must be dead (Empty); a
// cgroup still holding a process is left in place and its error returned.
func (g *Group) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.mu.Unlock()
	// The watchers first: a breach one saw is then recorded.
	g.checkMu.Lock()
	pidsFd := g.pidsFd
	g.oomFd, g.pidsFd = -1, -1
	g.checkMu.Unlock()
	for _, f := range g.watchers {
		f.Close()
	}
	g.wg.Wait()
	if g.reusable() {
		g.c.parkWatches(g.wds)
		return g.c.park(&parked{
			limits: g.limits, dir: g.dir, v2dir: g.v2dir, pidsDir: g.pidsDir, cpuDir: g.cpuDir,
			dirs: g.dirs, cgfd: g.cgfd, pidsFd: pidsFd, events: g.events, killer: g.killer, wds: g.wds,
		})
	}
	g.c.removeWatches(g.wds)
	if pidsFd >= 0 {
		unix.Close(pidsFd)
	}
	return g.remove()
}

// reusable reports whether the group's cgroups may serve another tree:
// they are cgroups, the tree is dead, no breach was seen or is counted
// (so the next tree's counters start at zero), and no cgroup.kill was
// written (see cgroupKilled): a tree that died with its process group,
// as pkg/tool kills its plugins, leaves its cgroups fit for reuse.
func (g *Group) reusable() bool {
	if !g.Cgroup() || len(g.dirs) == 0 || g.breach.Load() != nil || g.cgroupKilled.Load() || !g.Empty() {
		return false
	}
	k, _ := g.countersBreached()
	return k == 0
}

func (g *Group) remove() error {
	if g.cgfd >= 0 {
		unix.Close(g.cgfd)
		g.cgfd = -1
	}
	for _, f := range []*os.File{g.events, g.killer} {
		if f != nil {
			f.Close()
		}
	}
	g.events, g.killer = nil, nil
	var errs []error
	for i := len(g.dirs) - 1; i >= 0; i-- {
		if err := os.Remove(g.dirs[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
