// Package limits bounds the resources of a process tree: its memory, how
// many processes (and threads) it holds, the CPU time one call of it may
// use, and the open files of each of its processes.
//
// A [Controller] is made once per host and picks the mechanism:
//
//   - cgroup v2, in a delegated subtree (systemd's Delegate=yes, most
//     container runtimes): the host finds its own cgroup in /proc/self/cgroup,
//     makes a subtree there named for the instance, and starts each tree in a
//     cgroup of its own (clone3's CLONE_INTO_CGROUP, so the first process is
//     in it before it runs). v2 forbids processes in a cgroup whose children
//     have controllers, so the host first moves itself into a leaf of its
//     subtree ("server").
//   - cgroup v1, the memory and pids controllers (and cpuacct when mounted),
//     as root under the host's current cgroups. The first process is forked
//     by a host thread that stands in the tree's cgroups for the fork, so it
//     is never outside them either.
//   - rlimits on the tree's first process (RLIMIT_DATA, RLIMIT_NOFILE),
//     where no cgroup can be made: a fallback that holds each process alone
//     (children get the same limits, not a share of them) and cannot count
//     processes.
//
// Whatever the mechanism, a [Group] is one tree: [Group.Start] forks its
// first process, [Group.Kill] kills every process in it (with a cgroup, a
// process that left its process group with setsid too), [Group.Empty] says
// whether the tree is dead, and [Group.Breach] says which limit, if any,
// the tree exceeded. A memory or process-count breach kills the whole tree
// at once; the CPU time of a call is watched by [Group.WatchCPU].
//
// Open files are capped per process with RLIMIT_NOFILE under every
// mechanism: there is no cgroup for them, and a process over the cap gets
// EMFILE rather than being killed.
package limits

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits bound one process tree. A zero field means no limit.
type Limits struct {
	// Memory is the memory of the whole tree, in bytes.
	Memory uint64
	// Processes is how many processes and threads the tree may hold at once.
	Processes uint32
	// CPUTime is the CPU time, user plus system, one call may use (see WatchCPU).
	CPUTime time.Duration
	// OpenFiles is the most file descriptors each process may hold.
	OpenFiles uint32
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

// String lists the limits, e.g. "memory 256 MiB, 64 processes".
func (l Limits) String() string {
	var parts []string
	if l.Memory > 0 {
		parts = append(parts, "memory "+FormatBytes(l.Memory))
	}
	if l.Processes > 0 {
		parts = append(parts, strconv.FormatUint(uint64(l.Processes), 10)+" processes")
	}
	if l.CPUTime > 0 {
		parts = append(parts, "CPU time "+l.CPUTime.String())
	}
	if l.OpenFiles > 0 {
		parts = append(parts, strconv.FormatUint(uint64(l.OpenFiles), 10)+" open files")
	}
	if len(parts) == 0 {
		return "no limits"
	}
	return strings.Join(parts, ", ")
}

// Mechanism is how limits are enforced.
type Mechanism string

// The mechanisms.
const (
	// Auto picks the best mechanism available (Controller options only).
	Auto Mechanism = "auto"
	// Cgroup2 is a delegated cgroup v2 subtree.
	Cgroup2 Mechanism = "cgroup2"
	// Cgroup1 is cgroup v1's memory and pids controllers.
	Cgroup1 Mechanism = "cgroup1"
	// Rlimit is rlimits on each tree's first process.
	Rlimit Mechanism = "rlimit"
	// Off enforces nothing.
	Off Mechanism = "off"
)

// ParseMechanism reads a mechanism name; empty means Auto.
func ParseMechanism(s string) (Mechanism, error) {
	switch m := Mechanism(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Auto, nil
	case Auto, Cgroup2, Cgroup1, Rlimit, Off:
		return m, nil
	}
	return "", fmt.Errorf("unknown limits mechanism %q: want auto, cgroup2, cgroup1, rlimit or off", s)
}

// Kind is one kind of limit.
type Kind int

// The kinds of limits.
const (
	Memory Kind = iota + 1
	Processes
	CPUTime
	OpenFiles
)

// Breach is a limit a tree exceeded.
type Breach struct {
	// Kind is the limit exceeded; zero means none.
	Kind Kind
	// Limits are the tree's limits when it happened.
	Limits Limits
	// Detail adds what was seen (the kernel's OOM kill, an exit status).
	Detail string
}

// String names the limit with its value, e.g. "memory limit of 256 MiB".
func (b Breach) String() string {
	switch b.Kind {
	case Memory:
		return "memory limit of " + FormatBytes(b.Limits.Memory)
	case Processes:
		return fmt.Sprintf("limit of %d processes", b.Limits.Processes)
	case CPUTime:
		return "CPU time limit of " + b.Limits.CPUTime.String()
	case OpenFiles:
		return fmt.Sprintf("limit of %d open files", b.Limits.OpenFiles)
	}
	return "no limit"
}

// FormatBytes prints a byte count in binary units: "256 MiB", "1.5 GiB", "512 B".
func FormatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatUint(n, 10) + " B"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + " " + units[i]
}
