package limits

import (
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// watchDirs watches cgroup directories with inotify: the kernel notifies
// a change of an event file (memory.events, pids.events) to watchers of
// its directory too.
func (g *Group) watchDirs(dirs ...string) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "cgroup-events")
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, d, unix.IN_MODIFY); err != nil {
			f.Close()
			return err
		}
	}
	g.watch(f, 4096)
	return nil
}

// watch reads f (an eventfd or inotify descriptor, through the runtime's
// poller) until Close closes it; each wake-up checks the counters and, on
// a breach, records it and kills the tree.
func (g *Group) watch(f *os.File, size int) {
	g.watchers = append(g.watchers, f)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		buf := make([]byte, size)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			if k, detail := g.countersBreached(); k != 0 {
				g.record(Breach{Kind: k, Limits: g.Limits(), Detail: detail})
			}
		}
	}()
}

// CPU returns the CPU time the tree has used: the cgroup's own account
// (v2 cpu.stat, v1 cpuacct), else the sum over its live processes and the
// children they reaped (under rlimits: the first process's).
func (g *Group) CPU() (time.Duration, error) {
	switch {
	case g.c.mech == Cgroup2:
		us, err := readKeyed(g.dir+"/cpu.stat", "usage_usec")
		return time.Duration(us) * time.Microsecond, err
	case g.c.mech == Cgroup1 && g.cpuDir != "":
		ns, err := readUint(g.cpuDir + "/cpuacct.usage")
		return time.Duration(ns), err
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

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// WatchCPU watches the CPU time the tree uses from now on: past budget it
// records the breach and kills the tree. It polls the tree's account no
// sooner than the budget left could be spent on every CPU at once. stop
// ends the watch and waits for it; call it when the call ends.
func (g *Group) WatchCPU(budget time.Duration) (stop func()) {
	if budget <= 0 {
		return func() {}
	}
	base, err := g.CPU()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	ncpu := time.Duration(max(runtime.NumCPU(), 1))
	go func() {
		defer close(finished)
		for {
			used, err := g.CPU()
			if err != nil {
				return
			}
			left := budget - (used - base)
			if left <= 0 {
				l := g.Limits()
				l.CPUTime = budget
				g.record(Breach{Kind: CPUTime, Limits: l, Detail: "the call used " + (used - base).Round(time.Millisecond).String() + " of CPU time"})
				return
			}
			t := time.NewTimer(min(max(left/ncpu, 10*time.Millisecond), time.Second))
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
