package limits

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
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
	// on Linux 6.18 (seen here) the kernel then kills every process cloned
	// into it (CLONE_INTO_CGROUP) at once, for good.
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

// prlimits sets the rlimits of pid that differ from old (those it has):
// open files always, memory (as RLIMIT_DATA) under the rlimit mechanism.
//
// Memory is RLIMIT_DATA, not RLIMIT_AS. Both count address space, not
// memory in use, but RLIMIT_AS counts every mapping, reservations the
// program never touches included, and runtimes reserve a lot at start: a
// trivial Go program maps 1.2 GiB (VmSize; its heap arena index, page
// summaries and arena hints) and will not start under 1 GiB of RLIMIT_AS
// ("failed to reserve page summary memory"); glibc gives each thread of a
// Python or C program a 64 MiB malloc arena; a JVM reserves its whole heap.
// An RLIMIT_AS low enough to bound a tool would stop most of them starting.
// RLIMIT_DATA (Linux 4.7 and later) counts only private writable mappings:
// the heap, anonymous mmaps, writable data. The same Go program has 40 MiB
// of it, and a gRPC plugin starts from about 128 MiB (below, Go fails
// allocating its heap arena map). It still counts what is mapped rather
// than touched, so it is an upper bound the tool reaches a little early;
// a cgroup counts the pages themselves.
// A limit is lifted or raised only where the kernel lets this process do
// it (raising a hard limit takes CAP_SYS_RESOURCE): else ErrRegroup, as
// lifting open files always is (a new process gets the host's own).
func (g *Group) prlimits(pid int, l, old Limits) error {
	set := func(res int, v, had uint64) error {
		err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: v, Max: v}, nil)
		if errors.Is(err, unix.EPERM) && (had != 0 && v > had) {
			return ErrRegroup
		}
		return err
	}
	if l.OpenFiles != old.OpenFiles {
		if l.OpenFiles == 0 {
			return ErrRegroup
		}
		if err := set(unix.RLIMIT_NOFILE, uint64(l.OpenFiles), uint64(old.OpenFiles)); err != nil {
			return err
		}
	}
	if g.c.mech == Rlimit && l.Memory != old.Memory {
		v, had := uint64(unix.RLIM_INFINITY), old.Memory
		if l.Memory > 0 {
			v = l.Memory
		}
		if err := set(unix.RLIMIT_DATA, v, had); err != nil {
			return err
		}
	}
	return nil
}

// CanRaiseHardRlimits reports whether this process has CAP_SYS_RESOURCE in
// its effective set, which raising a hard rlimit takes, and setting any
// rlimit of another user's process.
func CanRaiseHardRlimits() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	const c = unix.CAP_SYS_RESOURCE
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0
}

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

// Breach says which limit the tree exceeded, if any: one a watcher saw and
// acted on (memory, processes, CPU time), or, for a tree whose first
// process has ended (state, and stderr: the tail of its stderr and any
// line of it OutOfMemoryLine found before a long dump), what its end shows.
func (g *Group) Breach(state *os.ProcessState, stderr string) (Breach, bool) {
	if b := g.breach.Load(); b != nil {
		return *b, true
	}
	l := g.Limits()
	switch g.c.mech {
	case Cgroup2, Cgroup1:
		if k, detail := g.countersBreached(); k != 0 {
			return Breach{Kind: k, Limits: l, Detail: detail}, true
		}
	case Rlimit:
		if l.Memory > 0 && state != nil && !state.Success() && outOfMemory.MatchString(stderr) {
			return Breach{Kind: Memory, Limits: l, Detail: "the process could not allocate more under RLIMIT_DATA"}, true
		}
		if detail, ok := g.cpuRlimitEnded(state); ok {
			return Breach{Kind: CPUTime, Limits: l, Detail: detail}, true
		}
	}
	return Breach{}, false
}

// cpuRlimitEnded reports whether RLIMIT_CPU ended the first process: it
// died of SIGXCPU (the soft limit), or of a SIGKILL the host did not send
// after using the CPU time of its soft limit (the hard limit, for a
// process that ignores SIGXCPU, as Go programs do).
func (g *Group) cpuRlimitEnded(state *os.ProcessState) (string, bool) {
	soft := g.cpuRlimit.Load()
	if state == nil || soft == 0 {
		return "", false
	}
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	used := state.UserTime() + state.SystemTime()
	switch {
	case ws.Signal() == syscall.SIGXCPU:
	case ws.Signal() == syscall.SIGKILL && !g.killed.Load() && used >= time.Duration(soft)*time.Second:
	default:
		return "", false
	}
	return fmt.Sprintf("RLIMIT_CPU ended the process (%s) after %s of CPU time", ws.Signal(), used.Round(time.Millisecond)), true
}

// outOfMemory matches what runtimes print when an allocation fails. A Go
// program's "fatal error: runtime: out of memory" goes to fd 2 only, which
// sdk/tool captures as a call's output and loses when the process dies; the
// dump after it, which reaches the host (debug.SetCrashOutput), begins
// with the frames of the runtime growing its heap, from where it threw.
var outOfMemory = regexp.MustCompile(`(?i)out of memory|MemoryError|Cannot allocate memory|bad_alloc|heap out of memory|OutOfMemoryError` +
	`|(?m:^runtime\.(sysMapOS|\(\*mheap\)\.(grow|sysAlloc)|persistentalloc1)\()`)

// OutOfMemoryLine returns the first line of b that says an allocation
// failed, as runtimes print it ("fatal error: runtime: out of memory",
// Python's MemoryError, …), or "". A Go program's line comes before a dump
// of every goroutine, longer than a stderr tail keeps: the host looks for
// it as stderr comes.
func OutOfMemoryLine(b []byte) string {
	loc := outOfMemory.FindIndex(b)
	if loc == nil {
		return ""
	}
	start := bytes.LastIndexByte(b[:loc[0]], '\n') + 1
	end := len(b)
	if i := bytes.IndexByte(b[loc[1]:], '\n'); i >= 0 {
		end = loc[1] + i
	}
	return string(b[start:end])
}

// countersBreached reads the cgroup's event counters: an OOM kill, or a
// fork refused for the process limit.
func (g *Group) countersBreached() (Kind, string) {
	switch g.c.mech {
	case Cgroup2:
		if g.c.v2memory {
			if n, _ := readKeyed(filepath.Join(g.dir, "memory.events"), "oom_kill"); n > 0 {
				return Memory, "the kernel's OOM killer ended the call's processes"
			}
		}
		if g.c.v2pids {
			if n, _ := readKeyed(filepath.Join(g.dir, "pids.events"), "max"); n > 0 {
				return Processes, "a process could not start: the tree was at its limit"
			}
		}
	case Cgroup1:
		if n, _ := readKeyed(filepath.Join(g.dir, "memory.oom_control"), "oom_kill"); n > 0 {
			return Memory, "the kernel's OOM killer ended a process of the call"
		}
		if n, _ := readKeyed(filepath.Join(g.dir, "memory.oom_control"), "under_oom"); n > 0 {
			return Memory, "the call's processes were out of memory"
		}
		if g.pidsDir != "" {
			if n, _ := readKeyed(filepath.Join(g.pidsDir, "pids.events"), "max"); n > 0 {
				return Processes, "a process could not start: the tree was at its limit"
			}
		}
	}
	return 0, ""
}

// record keeps the first breach seen and kills the tree.
func (g *Group) record(b Breach) {
	if g.breach.CompareAndSwap(nil, &b) {
		g.c.log.Debug("tool process tree over its limit: killed", "limit", b.String(), "detail", b.Detail)
		g.Kill()
	}
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
