package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

// The paired benchmarks measure a call with and without limits in the same
// iterations, on two hosts that differ only in Config.Limits and
// LimitPolicy (same plugin binary, same settings), the order turning each
// iteration, so that the machine's drift falls on both sides alike: the
// comparison of a warm call under limits with BenchmarkWarmCall, and of a
// cold start under limits with BenchmarkColdStart, without the minutes
// between two benchmarks.

// pairedSides returns the two sides' sets, without limits and with them.
func pairedSides(b *testing.B, cfg Config) (plain, limited *Set) {
	return benchHost(b, cfg), benchHost(b, benchLimits(b, cfg))
}

// echoOnce times one echo call.
func echoOnce(b *testing.B, set *Set) time.Duration {
	t0 := time.Now()
	res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"ping"}`), Options{})
	d := time.Since(t0)
	if res.Error {
		b.Fatal(res.Output)
	}
	return d
}

// BenchmarkLimitsWarmPaired: a warm call (BenchmarkWarmCall) on a host
// without limits and on one with the tool under limits (the best mechanism
// here, the server's default limits), one call each per iteration, in
// turns. It reports each side's median, and its plugin process's CPU time
// per call (peer-cpu-µs), and limits/plain, the ratio of the medians: a
// warm call must not get slower under limits.
//
// Where the limits are cgroups, a third side splits that ratio: a host
// without limits whose plugin process the benchmark moves into cgroups of
// the limited process's shape (beside its own, in the same hierarchies;
// see moveBeside), with no limit set and nothing read by the host
// (shaped). shaped/plain is what the kernel charges a process for being
// in those cgroups; limits/shaped what the host's checks add.
func BenchmarkLimitsWarmPaired(b *testing.B) {
	plain, limited := pairedSides(b, Config{MaxIdle: 1})
	sides := []*Set{plain, limited}
	names := []string{"plain", "limits"}
	var pids []int
	for _, s := range sides { // both processes started and their Sessions open
		echoOnce(b, s)
		pids = append(pids, pluginPid(b, s))
	}
	shaped := benchHost(b, Config{MaxIdle: 1})
	echoOnce(b, shaped)
	if pid := pluginPid(b, shaped); moveBeside(b, pid, pids[1]) {
		sides, names, pids = append(sides, shaped), append(names, "shaped"), append(pids, pid)
	}
	ts := make([]timings, len(sides))
	cpu0 := make([]time.Duration, len(sides))
	for side := range sides {
		cpu0[side] = procCPU(b, pids[side])
	}
	for i := 0; b.Loop(); i++ {
		for k := range sides {
			side := (i + k) % len(sides)
			ts[side] = append(ts[side], echoOnce(b, sides[side]))
		}
	}
	for side, name := range names {
		b.ReportMetric(ts[side].median(), name+"-median-µs")
		b.ReportMetric(float64((procCPU(b, pids[side])-cpu0[side]).Nanoseconds())/1e3/float64(len(ts[side])), name+"-peer-cpu-µs")
	}
	b.ReportMetric(ts[1].median()/ts[0].median(), "limits/plain")
	if len(sides) == 3 {
		b.ReportMetric(ts[2].median()/ts[0].median(), "shaped/plain")
		b.ReportMetric(ts[1].median()/ts[2].median(), "limits/shaped")
	}
}

// moveBeside moves process pid into a cgroup of its own beside each cgroup
// of process like that differs from pid's (the cgroups of a limits group):
// in the same hierarchy, under the same parent, with no limit set. It
// reports whether it moved it: not under rlimits, nor where this process
// may not make or move into those cgroups (it logs why). At the benchmark's
// end pid goes back to its cgroups and the new ones are removed.
func moveBeside(b *testing.B, pid, like int) bool {
	own, err := limits.ProcessCgroups(pid)
	if err != nil {
		b.Fatal(err)
	}
	theirs, err := limits.ProcessCgroups(like)
	if err != nil {
		b.Fatal(err)
	}
	moved := false
	for hier, dir := range theirs {
		back := own[hier]
		if back == dir || back == "" {
			continue
		}
		shaped := filepath.Join(filepath.Dir(dir), fmt.Sprintf("bench-shaped-%d", pid))
		if err := os.Mkdir(shaped, 0o755); err != nil {
			b.Logf("no shaped side: %v", err)
			return false
		}
		b.Cleanup(func() {
			_ = os.WriteFile(filepath.Join(back, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
			_ = os.Remove(shaped)
		})
		if err := os.WriteFile(filepath.Join(shaped, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			b.Logf("no shaped side: %v", err)
			return false
		}
		moved = true
	}
	return moved
}

// BenchmarkLimitsColdPaired: a cold start to first result
// (BenchmarkColdStart) on a host without limits and on one with each
// process in a limits group of its own, in turns. Each iteration runs, for
// one side and then the other (the order turning), two cold calls back to
// back once the hosts' background work (cleanups, groups made or removed)
// is done: the second call meets what the first left running, as cold
// starts in a row do, and that side's alone. It reports each side's median
// of the second calls (median-µs), of the first ones (first-median-µs),
// and the CPU time per cold start of this process and of the plugins it
// reaped, background work included (cpu-µs), and of this process alone
// (host-cpu-µs); added-µs is the difference of
// the second calls' medians (at most 0.5 ms), paired-added-µs the median of
// each iteration's difference.
func BenchmarkLimitsColdPaired(b *testing.B) {
	plain, limited := pairedSides(b, Config{MaxIdle: -1})
	sides := [2]*Set{plain, limited}
	var first, next [2]timings
	var cpu, host [2]time.Duration
	var diffs []float64
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			side := (i + k) % 2
			for _, s := range sides {
				quiesce(s)
			}
			c0, h0 := cpuWithChildren(b), selfCPU(b)
			first[side] = append(first[side], echoOnce(b, sides[side]))
			next[side] = append(next[side], echoOnce(b, sides[side]))
			quiesce(sides[side])
			cpu[side] += cpuWithChildren(b) - c0
			host[side] += selfCPU(b) - h0
		}
		diffs = append(diffs, float64((next[1][i]-next[0][i]).Nanoseconds())/1e3)
	}
	for side, name := range []string{"plain", "limits"} {
		b.ReportMetric(next[side].median(), name+"-median-µs")
		b.ReportMetric(first[side].median(), name+"-first-median-µs")
		n := float64(2 * len(next[side]))
		b.ReportMetric(float64(cpu[side].Nanoseconds())/1e3/n, name+"-cpu-µs")
		b.ReportMetric(float64(host[side].Nanoseconds())/1e3/n, name+"-host-cpu-µs")
	}
	b.ReportMetric(next[1].median()-next[0].median(), "added-µs")
	slices.Sort(diffs)
	b.ReportMetric(diffs[len(diffs)/2], "paired-added-µs")
}

// cpuWithChildren returns the CPU time of this process and of its reaped
// children so far.
func cpuWithChildren(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return selfCPU(b) + time.Duration(ru.Utime.Nano()+ru.Stime.Nano())
}

// quiesce waits until the host of set has nothing left running in the
// background. The benchmark calls it between calls only, when nothing can
// begin new background work meanwhile.
func quiesce(set *Set) {
	for _, e := range set.tools {
		e.pool.host.wg.Wait()
		return
	}
}
