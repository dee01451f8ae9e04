package limits

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkGroup: what a limits group costs a process start with the best
// mechanism here. pkg/tool makes a process's group ahead of its start (a
// spare per plugin), so a cold start pays running-µs over the plain fork's
// start-µs (StartThen's started, called once the process runs; start-µs
// adds the forking thread's way back out of the v1 cgroups); make-µs and
// remove-µs happen off its path: reused, the cgroups a closed group left
// (the way a plugin's processes follow one another), fresh, new ones each
// time (limits no closed group had).
func BenchmarkGroup(b *testing.B) {
	c, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
	}
	b.Run("plain", func(b *testing.B) {
		var starts []time.Duration
		for b.Loop() {
			cmd := exec.Command(truePath)
			t0 := time.Now()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			starts = append(starts, time.Since(t0))
			_ = cmd.Wait()
		}
		b.ReportMetric(median(starts), "start-µs")
	})
	for _, side := range []struct {
		name  string
		fresh bool
	}{{"reused", false}, {"fresh", true}} {
		b.Run(string(c.Mechanism())+"/"+side.name, func(b *testing.B) {
			var made, running, starts, removed []time.Duration
			for i := 0; b.Loop(); i++ {
				l := Limits{Memory: 1 << 30, Processes: 1024}
				if side.fresh { // limits no closed group had: nothing to reuse
					l.Memory += uint64(i+1) << 12
				}
				t0 := time.Now()
				g, err := c.NewGroup(l)
				if err != nil {
					b.Fatal(err)
				}
				made = append(made, time.Since(t0))
				cmd := exec.Command(truePath)
				t1 := time.Now()
				if err := g.StartThen(cmd, func(error) { running = append(running, time.Since(t1)) }); err != nil {
					b.Fatal(err)
				}
				starts = append(starts, time.Since(t1))
				_ = cmd.Wait()
				t2 := time.Now()
				if err := g.Close(); err != nil {
					b.Fatal(err)
				}
				removed = append(removed, time.Since(t2))
			}
			b.ReportMetric(median(made), "make-µs")
			b.ReportMetric(median(running), "running-µs")
			b.ReportMetric(median(starts), "start-µs")
			b.ReportMetric(median(removed), "remove-µs")
		})
	}
}

// BenchmarkCheck: what Check adds to every call of a tool under limits (the
// server's default limits; with cgroup v1, two reads), and that it
// allocates nothing.
func BenchmarkCheck(b *testing.B) {
	c, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	g, err := c.NewGroup(Limits{Memory: 1 << 30, Processes: 1024})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	b.ReportAllocs()
	for b.Loop() {
		if br, ok := g.Check(); ok {
			b.Fatal(br)
		}
	}
}
