package limits

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Start starts cmd as the group's first process, with the limits on it.
// With cgroup v1 the calling goroutine's thread joins the group's cgroups
// for the fork (Start keeps the goroutine on it meanwhile); a caller whose
// children need a parent-death signal forks from a thread of its own.
func (g *Group) Start(cmd *exec.Cmd) error { return g.StartThen(cmd, nil) }

// StartThen is Start, and calls started (when not nil) as soon as the
// process runs under its limits, or with the error that stopped it: with
// cgroup v1 that is before the forking thread leaves the group's cgroups,
// two writes that StartThen makes then, off the path of a caller that
// waits for started only. It returns once the thread is back.
func (g *Group) StartThen(cmd *exec.Cmd, started func(error)) error {
	// Under cgroup v1 the moves and the fork must happen on one thread (a
	// no-op when the caller has locked it already, as pkg/tool's spawner
	// has), the way back included.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g.mu.Lock()
	defer g.mu.Unlock()
	back, err := g.start(cmd)
	if started != nil {
		started(err)
	}
	if back != nil {
		back()
	}
	return err
}

func (g *Group) start(cmd *exec.Cmd) (back func(), err error) {
	if g.closed {
		return nil, errors.New("limits: the group is closed")
	}
	if g.pid != 0 {
		return nil, errors.New("limits: the group has started its process already")
	}
	switch g.c.mech {
	case Cgroup2:
		err = g.fork(cmd)
	case Cgroup1:
		back, err = g.startV1(cmd)
	default:
		err = cmd.Start()
	}
	if err != nil {
		return back, err
	}
	g.pid = cmd.Process.Pid
	if err := g.prlimits(g.pid, g.limits, Limits{}); err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return back, fmt.Errorf("setting rlimits: %w", err)
	}
	return back, nil
}

// fork starts cmd, straight into v2dir when the group has one
// (CLONE_INTO_CGROUP: the child is there before it runs), else in the
// cgroups of the calling thread.
func (g *Group) fork(cmd *exec.Cmd) error {
	if g.cgfd < 0 {
		return cmd.Start()
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, g.cgfd
	err := cmd.Start()
	if err == nil || !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.E2BIG) {
		return err
	}
	// No clone3 (Linux < 5.7): start, then move the process.
	cmd.SysProcAttr.UseCgroupFD = false
	cmd.Process = nil
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(g.v2dir, "cgroup.procs"), strconv.Itoa(cmd.Process.Pid)); err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return err
	}
	return nil
}

// startV1 forks from this thread while it stands in the group's cgroups,
// so the child is born in them, and returns what brings the thread back
// (nil when it is back already: the moves failed).
func (g *Group) startV1(cmd *exec.Cmd) (back func(), err error) {
	tid := "0" // this thread: the kernel then skips its global lock (no RCU grace period)
	type move struct{ to, back string }
	var moved []move
	moveBack := func() error {
		var errs []error
		for i := len(moved) - 1; i >= 0; i-- {
			if err := writeFile(moved[i].back, tid); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for _, d := range g.dirs {
		h := g.hierOf(d)
		if h == nil {
			continue
		}
		if err := writeFile(filepath.Join(d, "tasks"), tid); err != nil {
			if berr := moveBack(); berr != nil {
				return nil, fmt.Errorf("%w; and the forking thread could not go back: %v", err, berr)
			}
			return nil, err
		}
		moved = append(moved, move{to: d, back: filepath.Join(h.self, "tasks")})
	}
	return func() {
		if berr := moveBack(); berr != nil {
			// The thread stays in the group's cgroups: later forks would land
			// there. Say so loudly; the group cannot be removed meanwhile.
			g.c.log.Error("the forking thread could not leave a tool's cgroups", "error", berr)
		}
	}, g.fork(cmd)
}

func (g *Group) hierOf(dir string) *hierarchy {
	for _, h := range g.c.v1 {
		if filepath.Dir(dir) == h.base {
			return h
		}
	}
	return nil
}
