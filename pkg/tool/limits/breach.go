package limits

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"time"
)

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
