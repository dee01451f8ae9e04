package conformance

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/limits"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// limitsController returns the limits mechanism agent-server would use
// (AGENTCORE_TOOL_LIMITS: auto, cgroup2, cgroup1, rlimit or off), closed
// once every contract is done.
func limitsController(t *testing.T) *limits.Controller {
	lim, err := limits.New(limits.Options{Mechanism: askedMechanism(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lim.Close(); err != nil {
			t.Errorf("limits controller: %v", err)
		}
	})
	t.Logf("tool limits: %s", lim)
	return lim
}

// askedMechanism is the limits mechanism AGENTCORE_TOOL_LIMITS asks for (auto when unset).
func askedMechanism(t *testing.T) limits.Mechanism {
	mech, err := limits.ParseMechanism(os.Getenv("AGENTCORE_TOOL_LIMITS"))
	if err != nil {
		t.Fatal(err)
	}
	return mech
}

// enforces ends the test unless lim enforces limits of kind k (for each
// process tree as a whole when tree is set). A mechanism that cannot by its
// nature is a skip saying so: rlimits count no processes and bound memory
// per process, not per tree, and "off" enforces nothing; both only when
// AGENTCORE_TOOL_LIMITS asked for them. Otherwise the mechanism or its
// controller is missing from this machine (no cgroup, no memory or pids
// controller, not root), which fails under CI: its machine has them.
func enforces(t *testing.T, lim *limits.Controller, k limits.Kind, tree bool) {
	t.Helper()
	if lim.Supports(k) && (!tree || cgroups(lim)) {
		return
	}
	if mech := lim.Mechanism(); mech == askedMechanism(t) && (mech == limits.Rlimit || mech == limits.Off) {
		t.Skipf("AGENTCORE_TOOL_LIMITS=%s cannot enforce this limit (%s)", mech, lim)
	}
	unavailable(t, "this limit needs a mechanism this machine lacks (root and cgroups with their memory and pids controllers): %s", lim)
}

// cgroups reports whether lim counts a process tree as a whole.
func cgroups(lim *limits.Controller) bool {
	return lim.Mechanism() == limits.Cgroup1 || lim.Mechanism() == limits.Cgroup2
}

// policy is the suite's host's limits: defaults for the tools that ask for
// none, and maximums below what greet asks for (256 MiB, 64 processes, 10s
// of CPU, 256 files) so that its limits show the cap. A process default
// (agent-server has one) and an open files default at the maximum let one
// process serve every tool: a process without a process limit cannot take
// one, and raising a hard rlimit takes CAP_SYS_RESOURCE, which containers
// lack. The memory default is for cgroups only: RLIMIT_DATA counts what a
// runtime reserves and its threads' stacks (Go and Python's gRPC hold
// about 128 MiB of it).
func policy(lim *limits.Controller) tool.LimitPolicy {
	p := tool.LimitPolicy{
		Default: limits.Limits{Processes: 256, OpenFiles: 128},
		Max:     limits.Limits{Memory: 224 << 20, Processes: 48, CPUTime: 5 * time.Second, OpenFiles: 128},
	}
	if cgroups(lim) {
		p.Default.Memory = 128 << 20
	}
	return p
}

// enforced checks that the host enforces the limits tools declare, capped
// by its maximums, on the SDKs' plugins: a call over its memory, process
// or CPU time limit is killed, its result names the limit (an outcome of
// its own, not a crash), and the next call works.
func enforced(t *testing.T, ctx context.Context, set *tool.Set, lim *limits.Controller) {
	pol := policy(lim)
	t.Run("capped by the host", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			want limits.Limits
		}{
			{"greet", pol.Max},
			{"swarm", limits.Limits{Memory: pol.Default.Memory, Processes: 32, OpenFiles: pol.Default.OpenFiles}},
			{"spin", limits.Limits{Memory: pol.Default.Memory, Processes: pol.Default.Processes, CPUTime: 250 * time.Millisecond, OpenFiles: pol.Default.OpenFiles}},
			{"count", pol.Default},
		} {
			if spec, _ := set.Lookup(c.tool); spec.Limits != lim.Enforced(c.want) {
				t.Errorf("%s's limits %v, want %v", c.tool, spec.Limits, lim.Enforced(c.want))
			}
		}
	})
	next := func(t *testing.T) {
		t.Helper()
		if c := run(ctx, set, "greet", `{"name":"again"}`); c.res.Error || c.text() != "Hello, again." {
			t.Errorf("the next call: %q (error %v)", c.text(), c.res.Error)
		}
	}
	breach := func(t *testing.T, c call, name, limit string) {
		t.Helper()
		want := fmt.Sprintf("tool %q exceeded its %s and was killed", name, limit)
		if !c.res.Error || !strings.Contains(c.text(), want) || c.res.Outcome != tool.OutcomeLimit {
			t.Fatalf("result %q (error %v, outcome %q), want %q", c.text(), c.res.Error, c.res.Outcome, want)
		}
	}

	t.Run("memory", func(t *testing.T) {
		// Under RLIMIT_DATA an allocation fails in one process, which may
		// survive it (Python's MemoryError is an exception): per tree only.
		enforces(t, lim, limits.Memory, true)
		limit := pol.Default.Memory
		callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var mu sync.Mutex
		reached := 0
		res := set.Execute(callCtx, "hog", []byte(`{}`), tool.Options{OnOutput: func(ch tool.Chunk) {
			mu.Lock()
			defer mu.Unlock()
			for _, line := range strings.Split(ch.Data, "\n") {
				fmt.Sscanf(line, "%d MiB", &reached)
			}
			if uint64(reached)<<20 > 4*limit {
				cancel() // not enforced: stop it before it eats the machine
			}
		}})
		breach(t, call{res: res}, "hog", "memory limit of "+limits.FormatBytes(limit))
		mu.Lock()
		defer mu.Unlock()
		if uint64(reached)<<20 > limit {
			t.Errorf("hog reported %d MiB under a limit of %s", reached, limits.FormatBytes(limit))
		}
		next(t)
	})

	t.Run("processes", func(t *testing.T) {
		enforces(t, lim, limits.Processes, false)
		// The next call is the next subtest's.
		breach(t, run(ctx, set, "swarm", `{"n":100}`), "swarm", "limit of 32 processes")
	})

	t.Run("CPU time", func(t *testing.T) {
		enforces(t, lim, limits.CPUTime, false)
		callCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		breach(t, run(callCtx, set, "spin", `{}`), "spin", "CPU time limit of 250ms")
		next(t)
	})

	t.Run("open files", func(t *testing.T) {
		enforces(t, lim, limits.OpenFiles, false)
		// A command started by the tool inherits its process's limit.
		c := run(ctx, set, "shell", `{"command":"ulimit -n"}`)
		if got := strings.TrimSpace(c.stream(agentv1.OutputStream_OUTPUT_STREAM_STDOUT)); got != strconv.Itoa(int(pol.Default.OpenFiles)) {
			t.Errorf("ulimit -n in a call of shell: %q, want %d", got, pol.Default.OpenFiles)
		}
	})
}

// killTree starts a call whose plugin has a child and a grandchild, stops
// the call once their pids are out, and checks that all of them are gone.
func killTree(t *testing.T, ctx context.Context, set *tool.Set) {
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	pidLine := regexp.MustCompile(`pids (\d+) (\d+)`)
	pids := make(chan []int, 1)
	var out strings.Builder
	done := make(chan tool.Result, 1)
	go func() {
		done <- set.Execute(callCtx, "spawn", []byte(`{}`), tool.Options{OnOutput: func(ch tool.Chunk) {
			out.WriteString(ch.Data)
			if m := pidLine.FindStringSubmatch(out.String()); m != nil {
				a, _ := strconv.Atoi(m[1])
				b, _ := strconv.Atoi(m[2])
				select {
				case pids <- []int{a, b}:
				default:
				}
			}
		}})
	}()
	var tree []int
	select {
	case tree = <-pids:
	case res := <-done:
		t.Fatalf("spawn ended before reporting its pids: %q", tool.OutputText(res.Output))
	case <-time.After(30 * time.Second):
		t.Fatal("spawn reported no pids within 30s")
	}
	for _, pid := range tree {
		if !alive(pid) {
			t.Fatalf("process %d is not running before the cancel", pid)
		}
	}
	stop()
	res := <-done
	if !res.Error || !strings.Contains(tool.OutputText(res.Output), "stopped") {
		t.Errorf("result %q (error %v)", tool.OutputText(res.Output), res.Error)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range tree {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs after the call was stopped", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
