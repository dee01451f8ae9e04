package bench

import (
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

func report(b *testing.B, name string, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(percentile(d, 50).Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(percentile(d, 99).Microseconds())/1000, name+"-p99-ms")
}

// procCPU returns the CPU time a process has used so far, summed over its
// threads from /proc (nanosecond resolution, unlike rusage's clock ticks
// for another process).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(data))
		if len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// procSleeps returns how many times the threads of a process have gone to
// sleep so far (voluntary context switches, from /proc): each is a thread
// that found no goroutine to run, so they count the hand-offs between
// goroutines that leave a thread idle, which load does not change as much
// as it changes time.
func procSleeps(b *testing.B, pid int) int64 {
	b.Helper()
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		b.Fatal(err)
	}
	var sum int64
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/status")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum
}

// serverMallocs returns how many heap objects the benchmarks' agent-server
// has allocated so far (go_memstats_mallocs_total on its metrics listener),
// or -1 when it serves none (AGENTCORE_BENCH_PPROF unset).
func serverMallocs(b *testing.B) float64 {
	b.Helper()
	addr := os.Getenv("AGENTCORE_BENCH_PPROF")
	if addr == "" {
		return -1
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_mallocs_total "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no go_memstats_mallocs_total on", addr)
	return -1
}
