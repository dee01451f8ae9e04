package limits

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watchDirs watches cgroup directories with the controller's inotify
// instance: the kernel notifies a change of an event file (memory.events,
// pids.events) to watchers of its directory too.
func (g *Group) watchDirs(dirs ...string) error {
	for _, d := range dirs {
		wd, err := g.c.addWatch(d, g)
		if err != nil {
			return err
		}
		g.wds = append(g.wds, wd)
	}
	return nil
}

// addWatch adds dir to the controller's inotify instance, made (with the
// goroutine reading it) at the first watch. One instance serves every
// group: closing an inotify descriptor waits for an RCU grace period,
// milliseconds that a group of its own would add to every process.
func (c *Controller) addWatch(dir string, g *Group) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errors.New("limits: controller is closed")
	}
	if c.ino == nil {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			return 0, err
		}
		c.ino = os.NewFile(uintptr(fd), "cgroup-events")
		c.watched = map[int]*Group{}
		c.inoDone = make(chan struct{})
		go c.readEvents(c.ino, c.inoDone)
	}
	wd, err := unix.InotifyAddWatch(int(c.ino.Fd()), dir, unix.IN_MODIFY)
	if err != nil {
		return 0, err
	}
	c.watched[wd] = g
	return wd, nil
}

// removeWatches forgets a group's watches.
func (c *Controller) removeWatches(wds []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, wd := range wds {
		if c.watched[wd] != nil {
			delete(c.watched, wd)
			if c.ino != nil {
				_, _ = unix.InotifyRmWatch(int(c.ino.Fd()), uint32(wd))
			}
		}
	}
}

// readEvents reads the inotify instance until Close closes it, and has
// the group of each event check its counters (unless the event is only
// cgroup.events: the tree filling or emptying) and wake its Wait. The
// events of the host's own writes (hostWritten) are dropped: each start
// moves its forking thread through the watched directories' tasks, which
// would read the counters twice per process for nothing.
func (c *Controller) readEvents(f *os.File, done chan struct{}) {
	defer close(done)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		counters := map[*Group]bool{}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			c.mu.Lock()
			g := c.watched[int(ev.Wd)]
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(c.watched, int(ev.Wd))
			}
			c.mu.Unlock()
			if g == nil {
				continue
			}
			switch file := string(bytes.TrimRight(name, "\x00")); {
			case hostWritten(file):
				// The host's own write (a thread moved in to fork, a kill,
				// a limit): no counter changed, and the tree neither
				// filled nor emptied.
			case file == "cgroup.events":
				if _, ok := counters[g]; !ok {
					counters[g] = false // a wake, no counters to read
				}
			default:
				counters[g] = true
			}
		}
		for g, read := range counters {
			g.check(read)
		}
	}
}

// hostWritten says whether file, in a watched cgroup directory, is one
// that only the host writes: its events say nothing about the tree.
func hostWritten(file string) bool {
	switch file {
	case "tasks", "cgroup.procs", "cgroup.kill", "cgroup.event_control",
		"memory.max", "memory.swap.max", "memory.oom.group", "pids.max",
		"memory.limit_in_bytes", "memory.memsw.limit_in_bytes":
		return true
	}
	return false
}

// check reads the group's counters, when counters says one may have
// changed, and acts on a breach; and it wakes Wait.
func (g *Group) check(counters bool) {
	if counters {
		if k, detail := g.countersBreached(); k != 0 {
			g.record(Breach{Kind: k, Limits: g.Limits(), Detail: detail})
		}
	}
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// watchOOM reads the v1 OOM eventfd until Close closes it. The kernel
// signals it when the group's memory is at its limit and nothing can be
// reclaimed, before its OOM killer picks a process: that is the breach
// (the counters may not show it yet).
func (g *Group) watchOOM(f *os.File) {
	g.watchers = append(g.watchers, f)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		buf := make([]byte, 8)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			g.recordOOM()
		}
	}()
}

func (g *Group) recordOOM() {
	g.record(Breach{Kind: Memory, Limits: g.Limits(), Detail: "the kernel's OOM killer ended a process of the call"})
}

// Check reports a breach already seen, or one the kernel has signalled
// but the watcher has not handled yet (a call that ends right after its
// tool's child was OOM-killed), or, with cgroup v1, a fork its process
// limit refused (which no kernel since 6.12 notifies); it records and acts
// on it. It costs an atomic load, and with cgroup v1 one non-blocking read
// of the OOM eventfd and, for a group with a process limit, one pread of
// pids.events; it allocates nothing.
func (g *Group) Check() (Breach, bool) {
	if b := g.breach.Load(); b != nil {
		return *b, true
	}
	g.checkMu.Lock()
	refused, oom := g.readV1()
	g.checkMu.Unlock()
	switch {
	case refused:
		g.record(Breach{Kind: Processes, Limits: g.Limits(), Detail: "a process could not start: the tree was at its limit"})
	case oom:
		g.recordOOM()
	default:
		return Breach{}, false
	}
	return *g.breach.Load(), true
}

// readV1 reads what Check reads under cgroup v1: whether pids.events
// counts a refused fork, and whether the OOM eventfd was signalled. The
// caller holds checkMu.
func (g *Group) readV1() (refused, oom bool) {
	if g.pidsFd >= 0 {
		var buf [64]byte
		if n, err := unix.Pread(g.pidsFd, buf[:], 0); err == nil {
			count, _ := parseKeyed(buf[:n], "max")
			refused = count > 0
		}
	}
	if g.oomFd >= 0 {
		var buf [8]byte
		n, _ := unix.Read(g.oomFd, buf[:])
		oom = n == 8
	}
	return refused, oom
}

// CPU returns the CPU time the tree has used: the cgroup's own account
// (v2 cpu.stat, v1 cpuacct), else the sum over its live processes and the
// children they reaped (under rlimits: the first process's).
func (g *Group) CPU() (time.Duration, error) {
	if d, ok, err := g.cgroupCPU(); ok {
		return d - g.cpuBase, err
	}
	var pids []int
	if g.c.mech == Cgroup1 {
		var err error
		if pids, err = readPids(g.dir + "/cgroup.procs"); err != nil {
			return 0, err
		}
	} else {
		g.mu.Lock()
		pids = []int{g.pid}
		g.mu.Unlock()
	}
	var ticks uint64
	for _, pid := range pids {
		if n, err := procCPU(g.c.proc, pid); err == nil {
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// cgroupCPU reads the cgroup's own CPU account, which counts every tree
// its cgroups held; ok is false where there is none.
func (g *Group) cgroupCPU() (d time.Duration, ok bool, err error) {
	switch {
	case g.c.mech == Cgroup2:
		us, err := readKeyed(g.dir+"/cpu.stat", "usage_usec")
		return time.Duration(us) * time.Microsecond, true, err
	case g.c.mech == Cgroup1 && g.cpuDir != "":
		ns, err := readUint(g.cpuDir + "/cpuacct.usage")
		return time.Duration(ns), true, err
	}
	return 0, false, nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// WatchCPU watches the CPU time the tree uses from now on: past budget it
// records the breach and kills the tree. It polls the tree's account no
// sooner than the budget left could be spent on every CPU at once. stop
// ends the watch, waits for it, and looks at the account once more, which
// records the breach of a call that went over its budget since the last
// look; call it when the call ends, before Check (it may be called again).
//
// Under the rlimit mechanism the account is the first process's and that
// of the children it reaped: a child's CPU time counts once it has ended.
// So that a child cannot spin unseen, WatchCPU also sets the first
// process's RLIMIT_CPU (cpuRlimit), which its children inherit.
func (g *Group) WatchCPU(budget time.Duration) (stop func()) {
	if budget <= 0 {
		return func() {}
	}
	base, err := g.CPU()
	if err != nil {
		return func() {}
	}
	if g.c.mech == Rlimit {
		g.setCPURlimit(budget)
	}
	breached := func(used time.Duration) bool {
		if used-base < budget {
			return false
		}
		l := g.Limits()
		l.CPUTime = budget
		g.record(Breach{Kind: CPUTime, Limits: l, Detail: "the call used " + (used - base).Round(time.Millisecond).String() + " of CPU time"})
		return true
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	ncpu := time.Duration(max(runtime.NumCPU(), 1))
	go func() {
		defer close(finished)
		for {
			used, err := g.CPU()
			if err != nil || breached(used) {
				return
			}
			left := budget - (used - base)
			t := time.NewTimer(min(max(left/ncpu, 10*time.Millisecond), time.Second))
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
			if g.breach.Load() == nil {
				if used, err := g.CPU(); err == nil {
					breached(used)
				}
			}
		})
	}
}

// setCPURlimit sets the first process's RLIMIT_CPU for a call of budget:
// the soft limit at the CPU time the process has used so far plus budget,
// up to the next whole second (the limit's unit; past the budget, so that
// a child it ends has used more than the budget, which the watch then
// sees), where SIGXCPU ends a process that keeps its default action; the hard limit a second later,
// where SIGKILL ends one that does not (Go programs ignore SIGXCPU). A
// process the host cannot raise the hard limit of again for the next call
// (without CAP_SYS_RESOURCE) keeps its hard limit, and only the soft one
// and the watch bound it. Its children inherit the limits, and a child's
// own count starts at zero: a child may use up to the soft limit, and the
// account shows it once the child has ended. It is a backstop: the watch
// sees the first process's own time sooner.
func (g *Group) setCPURlimit(budget time.Duration) {
	g.mu.Lock()
	pid := g.pid
	g.mu.Unlock()
	if pid <= 0 {
		return
	}
	own, err := procOwnCPU(g.c.proc, pid)
	if err != nil {
		return
	}
	soft := uint64((own+budget)/time.Second) + 1
	lim := unix.Rlimit{Cur: soft, Max: soft + 1}
	if !g.c.raiseHard {
		var old unix.Rlimit
		if unix.Prlimit(pid, unix.RLIMIT_CPU, nil, &old) != nil {
			return
		}
		lim.Max = old.Max
		lim.Cur = min(soft, old.Max)
	}
	if unix.Prlimit(pid, unix.RLIMIT_CPU, &lim, nil) == nil {
		g.cpuRlimit.Store(lim.Cur)
	}
}
