package limits

import (
	"strings"
	"testing"
	"time"
)

func TestOutOfMemoryLine(t *testing.T) {
	for in, want := range map[string]string{
		"fatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw(…)\n":    "fatal error: runtime: out of memory",
		"Traceback (most recent call last):\n  File \"<string>\", line 3\nMemoryError": "MemoryError",
		"started\nerror: Cannot allocate memory (os error 12)\n":                       "error: Cannot allocate memory (os error 12)",
		"panic: boom\n\ngoroutine 1 [running]:\n":                                      "",
		// A Go program's dump, its first line lost.
		"\nruntime stack:\nruntime.throw({0xb8384d?, 0x2c2f?})\n\t/usr/local/go/src/runtime/panic.go:1229 +0x48\n" +
			"runtime.sysMapOS(0x30bddcc00000, 0x800000, {0xb75d81, 0x4})\n\t/usr/local/go/src/runtime/mem_linux.go:175 +0x13b\n": "runtime.sysMapOS(0x30bddcc00000, 0x800000, {0xb75d81, 0x4})",
		"goroutine 7 [running]:\nmain.handler()\n\t/src/main.go:9\n": "",
	} {
		if got := OutOfMemoryLine([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestCPUTimeBreach(t *testing.T) {
	for _, mech := range []Mechanism{Cgroup1, Rlimit} {
		t.Run(string(mech), func(t *testing.T) {
			var c *Controller
			if mech == Cgroup1 {
				c = realV1(t)
			} else {
				var err error
				if c, err = New(Options{Mechanism: Rlimit}); err != nil {
					t.Fatal(err)
				}
			}
			g, err := c.NewGroup(Limits{CPUTime: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			cmd, _ := run(t, g, "spin")
			stop := g.WatchCPU(300 * time.Millisecond)
			defer stop()
			start := time.Now()
			_ = cmd.Wait()
			if d := time.Since(start); d < 250*time.Millisecond {
				t.Errorf("killed after %v, before using its CPU time", d)
			}
			if br, ok := g.Breach(cmd.ProcessState, ""); !ok || br.Kind != CPUTime || !strings.Contains(br.String(), "300ms") {
				t.Fatalf("breach = %+v, %v", br, ok)
			}
		})
	}
}
