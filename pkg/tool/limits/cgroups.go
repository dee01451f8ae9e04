package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

func (g *Group) initV2(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	g.dir, g.dirs, g.v2dir = dir, []string{dir}, dir
	if err := g.applyV2(g.limits, Limits{}); err != nil {
		return err
	}
	if g.c.v2memory {
		// The kernel's OOM killer then takes the whole tree, not one process.
		if err := writeFile(filepath.Join(dir, "memory.oom.group"), "1"); err != nil {
			return err
		}
	}
	if err := g.openV2(); err != nil {
		return err
	}
	// The watch sees the breaches (memory.events, pids.events) and the
	// group emptying (cgroup.events), which Wait waits for.
	return g.watchDirs(dir)
}

// openV2 opens v2dir for CLONE_INTO_CGROUP, and its cgroup.events and
// cgroup.kill.
func (g *Group) openV2() error {
	fd, err := unix.Open(g.v2dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	g.cgfd = fd
	// Without them (cgroup.kill is Linux 5.14 on), Empty and Kill open
	// them each time (and Kill lists the processes if it cannot).
	if f, err := os.Open(filepath.Join(g.v2dir, "cgroup.events")); err == nil {
		g.events = f
	}
	if f, err := os.OpenFile(filepath.Join(g.v2dir, "cgroup.kill"), os.O_WRONLY, 0); err == nil {
		g.killer = f
	}
	return nil
}

// applyV2 writes the limits that differ from old.
func (g *Group) applyV2(l, old Limits) error {
	if g.c.v2memory && (l.Memory != old.Memory || old == Limits{}) {
		if err := writeFile(filepath.Join(g.dir, "memory.max"), maxValue(l.Memory)); err != nil {
			return err
		}
		// No swap: a tree over its limit is killed, not slowed to a crawl.
		if l.Memory > 0 {
			if err := writeFile(filepath.Join(g.dir, "memory.swap.max"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
				return err
			}
		}
	}
	if g.c.v2pids && (l.Processes != old.Processes || old == Limits{}) {
		if err := writeFile(filepath.Join(g.dir, "pids.max"), maxValue(uint64(l.Processes))); err != nil {
			return err
		}
	}
	return nil
}

func maxValue(n uint64) string {
	if n == 0 {
		return "max"
	}
	return strconv.FormatUint(n, 10)
}

func (g *Group) initV1(name string) error {
	for _, h := range g.c.v1 {
		switch {
		case h.controller == "memory":
		case h.controller == "pids" && g.limits.Processes > 0:
		case h.controller == "cpuacct" && g.limits.CPUTime > 0:
		default:
			continue
		}
		dir := filepath.Join(h.base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		g.dirs = append(g.dirs, dir)
		switch h.controller {
		case "memory":
			g.dir = dir
		case "pids":
			g.pidsDir = dir
		case "cpuacct":
			g.cpuDir = dir
		}
	}
	if err := g.applyV1(g.limits, Limits{}); err != nil {
		return err
	}
	if err := g.notifyOOM(); err != nil {
		return err
	}
	if g.c.v1track != "" {
		// The tree's cgroup v2 twin, forked into with the v1 ones: its
		// cgroup.events is what Empty reads and Wait is woken by.
		track := filepath.Join(g.c.v1track, name)
		if err := os.Mkdir(track, 0o755); err != nil {
			return err
		}
		g.dirs, g.v2dir = append(g.dirs, track), track
		if err := g.openV2(); err != nil {
			return err
		}
		if err := g.watchDirs(track); err != nil {
			return err
		}
	}
	if g.pidsDir != "" {
		fd, err := unix.Open(filepath.Join(g.pidsDir, "pids.events"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open pids.events: %w", err)
		}
		g.pidsFd = fd
		// Kernels before 6.12 notify a refused fork; later ones leave it to Check.
		return g.watchDirs(g.pidsDir)
	}
	return nil
}

// notifyOOM registers the cgroup v1 OOM notification of the group's
// memory cgroup, an eventfd signalled for memory.oom_control, and starts
// its watcher. Each tree has its own: Close closes it.
func (g *Group) notifyOOM() error {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return err
	}
	ev := os.NewFile(uintptr(efd), "oom-eventfd")
	ctl, err := os.Open(filepath.Join(g.dir, "memory.oom_control"))
	if err != nil {
		ev.Close()
		return err
	}
	err = writeFile(filepath.Join(g.dir, "cgroup.event_control"), fmt.Sprintf("%d %d", efd, ctl.Fd()))
	ctl.Close()
	if err != nil {
		ev.Close()
		return err
	}
	g.oomFd = efd
	g.watchOOM(ev)
	return nil
}

// applyV1 writes the limits that differ from old.
func (g *Group) applyV1(l, old Limits) error {
	if l.Processes > 0 && g.pidsDir == "" {
		return ErrRegroup
	}
	if l.Memory != old.Memory || old == (Limits{}) {
		v := "-1"
		if l.Memory > 0 {
			v = strconv.FormatUint(l.Memory, 10)
		}
		memsw := filepath.Join(g.dir, "memory.memsw.limit_in_bytes")
		_, swErr := os.Stat(memsw)
		// memsw must stay at least the memory limit: raise memory first
		// when lowering, memsw first when raising.
		lower := old.Memory == 0 || l.Memory != 0 && l.Memory < old.Memory
		if swErr == nil && !lower {
			if err := writeFile(memsw, v); err != nil {
				return err
			}
		}
		if err := writeFile(filepath.Join(g.dir, "memory.limit_in_bytes"), v); err != nil {
			if errors.Is(err, unix.EBUSY) {
				return ErrRegroup
			}
			return err
		}
		if swErr == nil && lower {
			if err := writeFile(memsw, v); err != nil {
				return err
			}
		}
	}
	if g.pidsDir != "" && (l.Processes != old.Processes || old == Limits{}) {
		if err := writeFile(filepath.Join(g.pidsDir, "pids.max"), maxValue(uint64(l.Processes))); err != nil {
			return err
		}
	}
	return nil
}
