package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

// controller returns the best limits mechanism this machine has (cgroup
// v2, v1 or rlimits), closed at the end of the test.
func controller(t *testing.T) *limits.Controller {
	t.Helper()
	c, err := limits.New(limits.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("limits controller Close: %v", err)
		}
	})
	t.Logf("limits: %s", c)
	return c
}

func TestMemoryLimitKillsTheCallAndTheNextCallWorks(t *testing.T) {
	c := controller(t)
	if !c.Supports(limits.Memory) {
		t.Skip("no memory limits here: " + c.String())
	}
	h := newHost(t, Config{Limits: c, LimitPolicy: LimitPolicy{Default: limits.Limits{Memory: 256 << 20}}})
	set := scan(t, h, dirs.good)
	if spec, _ := set.Lookup("hog"); spec.Limits.Memory != 256<<20 {
		t.Fatalf("hog's limits = %+v", spec.Limits)
	}
	var last time.Time
	reached := 0
	res := set.Execute(context.Background(), "hog", nil, Options{OnOutput: func(ch Chunk) {
		fmt.Sscanf(ch.Data, "%d MiB", &reached)
		last = time.Now()
	}})
	took := time.Since(last)
	want := `tool "hog" exceeded its memory limit of 256 MiB and was killed`
	if !res.Error || !strings.Contains(OutputText(res.Output), want) {
		t.Fatalf("result = %v", OutputText(res.Output))
	}
	if reached < 128 || reached > 256 {
		t.Errorf("the tool got to %d MiB under a 256 MiB limit", reached)
	}
	if took > time.Second {
		t.Errorf("the result came %v after the tool's last allocation", took)
	}
	if next := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"after"}`), Options{}); next.Error || OutputText(next.Output) != "after" {
		t.Fatalf("the next call = %+v", next)
	}
	// A child killed at the limit, and the tool answering at once: the
	// breach is the result, not the tool's answer.
	res = set.Execute(context.Background(), "child_hog", nil, Options{})
	if !res.Error || !strings.Contains(OutputText(res.Output), `tool "child_hog" exceeded its memory limit of 256 MiB and was killed`) {
		t.Fatalf("child_hog = %v", OutputText(res.Output))
	}
}

func TestToolAsksForItsOwnLimits(t *testing.T) {
	c := controller(t)
	h := newHost(t, Config{Limits: c, LimitPolicy: LimitPolicy{
		Default: limits.Limits{Memory: 256 << 20},
		Max:     limits.Limits{Memory: 1 << 30},
	}})
	set := scan(t, h, dirs.good)
	tests := []struct {
		tool string
		want limits.Limits
	}{
		{"echo", c.Enforced(limits.Limits{Memory: 256 << 20})},
		{"small_hog", c.Enforced(limits.Limits{Memory: 64 << 20})},
		// It asks for 1 TiB: the host's maximum caps it.
		{"nofile", c.Enforced(limits.Limits{Memory: 1 << 30, OpenFiles: 99})},
		{"spin_cpu", c.Enforced(limits.Limits{Memory: 256 << 20, CPUTime: 300 * time.Millisecond, OpenFiles: 99})},
	}
	for _, tt := range tests {
		if spec, _ := set.Lookup(tt.tool); spec.Limits != tt.want {
			t.Errorf("%s: limits %+v, want %+v", tt.tool, spec.Limits, tt.want)
		}
	}
	// One process serves tools with different limits: each call gets its own.
	if res := set.Execute(context.Background(), "nofile", nil, Options{}); OutputText(res.Output) != "99" {
		t.Errorf("open files under nofile = %v", OutputText(res.Output))
	}
	if c.Supports(limits.Memory) {
		res := set.Execute(context.Background(), "small_hog", nil, Options{})
		if !strings.Contains(OutputText(res.Output), "exceeded its memory limit of 64 MiB") {
			t.Errorf("small_hog = %v", OutputText(res.Output))
		}
	}
	if c.Supports(limits.CPUTime) {
		res := set.Execute(context.Background(), "spin_cpu", nil, Options{})
		if !strings.Contains(OutputText(res.Output), `tool "spin_cpu" exceeded its CPU time limit of 300ms and was killed`) {
			t.Errorf("spin_cpu = %v", OutputText(res.Output))
		}
	}
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{}); res.Error {
		t.Errorf("echo after the breaches = %v", res.Output)
	}
}

func ptr[T any](v T) *T { return &v }

func TestLimitPolicy(t *testing.T) {
	p := LimitPolicy{
		Default: limits.Limits{Memory: 1 << 30, Processes: 512},
		Max:     limits.Limits{Memory: 4 << 30, CPUTime: time.Minute},
		Overrides: map[string]LimitOverride{
			"shell":      {Memory: ptr(uint64(2 << 30)), CPUTime: ptr(time.Duration(0))},
			"read_file":  {Memory: ptr(uint64(128 << 20))},
			"files":      {Memory: ptr(uint64(512 << 20)), OpenFiles: ptr(uint32(64))},
			"x.mcp.json": {Processes: ptr(uint32(16))},
		},
	}
	tests := []struct {
		name, plugin, tool string
		asked, want        limits.Limits
	}{
		{"defaults", "math", "add", limits.Limits{}, limits.Limits{Memory: 1 << 30, Processes: 512}},
		{"asks for less", "math", "add", limits.Limits{Memory: 64 << 20}, limits.Limits{Memory: 64 << 20, Processes: 512}},
		{"asks for more than the maximum", "math", "add", limits.Limits{Memory: 8 << 30, CPUTime: time.Hour}, limits.Limits{Memory: 4 << 30, Processes: 512, CPUTime: time.Minute}},
		{"no maximum", "math", "add", limits.Limits{Processes: 9999}, limits.Limits{Memory: 1 << 30, Processes: 9999}},
		{"plugin override, zero lifts a limit", "shell", "shell", limits.Limits{CPUTime: time.Second}, limits.Limits{Memory: 2 << 30, Processes: 512}},
		{"tool override beats its plugin's", "files", "read_file", limits.Limits{}, limits.Limits{Memory: 128 << 20, Processes: 512, OpenFiles: 64}},
		{"plugin override for every tool of it", "files", "list_dir", limits.Limits{}, limits.Limits{Memory: 512 << 20, Processes: 512, OpenFiles: 64}},
		{"MCP definition", "x.mcp.json", "x_echo", limits.Limits{}, limits.Limits{Memory: 1 << 30, Processes: 16}},
	}
	for _, tt := range tests {
		if got := p.apply(tt.plugin, tt.tool, tt.asked); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestColdStartsReuseCgroups: with no idle process kept, every call starts
// a plugin process of its own, and a process whose tree died with its
// process group leaves its cgroups to a later one: among five cold calls
// under a cgroup mechanism, a later call runs in the cgroups of an earlier
// one (limits.Group.Close), and every call works.
func TestColdStartsReuseCgroups(t *testing.T) {
	c, err := limits.New(limits.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mechanism() != limits.Cgroup1 && c.Mechanism() != limits.Cgroup2 {
		c.Close()
		t.Skipf("no cgroups here: %s", c)
	}
	h := newHost(t, Config{Limits: c, MaxIdle: -1, LimitPolicy: LimitPolicy{Default: limits.Limits{Memory: 1 << 30, Processes: 1024}}})
	t.Cleanup(func() {
		h.Close()
		if err := c.Close(); err != nil {
			t.Errorf("limits controller Close: %v", err)
		}
	})
	set := scan(t, h, dirs.good)
	seen := map[string]int{}
	reused := false
	for i := range 5 {
		res := set.Execute(context.Background(), "cgroup", nil, Options{})
		if res.Error {
			t.Fatalf("call %d: %s", i, OutputText(res.Output))
		}
		lines := OutputText(res.Output)
		if j, ok := seen[lines]; ok {
			t.Logf("call %d ran in the cgroups of call %d", i, j)
			reused = true
		}
		seen[lines] = i
		quiesce(set) // the call's process gone, its group closed
	}
	if !reused {
		t.Fatalf("five cold calls, five sets of cgroups: %v", seen)
	}
}

// TestSetsidDaemonDiesWithTheCall: a daemon that left the plugin's process
// group is dead when the killed call's result arrives, under each cgroup
// mechanism this machine has (the result waits for the group to be empty,
// not for the reap).
func TestSetsidDaemonDiesWithTheCall(t *testing.T) {
	for _, m := range []limits.Mechanism{limits.Cgroup1, limits.Cgroup2} {
		t.Run(string(m), func(t *testing.T) {
			c, err := limits.New(limits.Options{Mechanism: m})
			if err != nil {
				t.Skipf("a daemon escapes a process group; only a cgroup holds it: %v", err)
			}
			h := newHost(t, Config{Limits: c})
			t.Cleanup(func() { // the host's groups first, then the controller, then newHost's checks
				h.Close()
				if err := c.Close(); err != nil {
					t.Errorf("limits controller Close: %v", err)
				}
			})
			set := scan(t, h, dirs.good)
			for range 3 {
				ctx, cancel := context.WithCancel(context.Background())
				daemon := 0
				res := set.Execute(ctx, "daemon", nil, Options{OnOutput: func(ch Chunk) {
					if _, err := fmt.Sscanf(ch.Data, "daemon %d", &daemon); err == nil {
						cancel()
					}
				}})
				if !res.Error || daemon == 0 {
					t.Fatalf("result = %v (daemon %d)", OutputText(res.Output), daemon)
				}
				if alive(daemon) {
					t.Fatalf("daemon %d still runs when the result arrives", daemon)
				}
			}
		})
	}
}

// TestRlimitsOfAnotherUser: plugins that run as another user take rlimits
// (open files here) only from a host with CAP_SYS_RESOURCE; without it
// (a container's default capabilities) the host leaves them out and says
// so, instead of failing every start, and a tool moving to a higher open
// files limit gets a new process instead of a failed Set.
func TestRlimitsOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running plugins as another user needs root")
	}
	c := controller(t)
	// The plugin user must reach the binary and its socket directory.
	dir, err := os.MkdirTemp("", "tu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(dirs.good, "testplug"), filepath.Join(dir, "tools", "testplug"), 0o755)
	sockets := filepath.Join(dir, "s")
	if err := os.Mkdir(sockets, 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Config{Limits: c, SocketDir: sockets, Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}},
		LimitPolicy: LimitPolicy{Default: limits.Limits{OpenFiles: 64}}})
	set := scan(t, h, filepath.Join(dir, "tools"))
	capable := limits.CanRaiseHardRlimits()
	want, wantDefault := uint32(99), uint32(64)
	if !capable {
		want, wantDefault = 0, 0
	}
	if spec, _ := set.Lookup("nofile"); spec.Limits.OpenFiles != want {
		t.Errorf("nofile's open files limit = %d, want %d (CAP_SYS_RESOURCE: %v)", spec.Limits.OpenFiles, want, capable)
	}
	if spec, _ := set.Lookup("echo"); spec.Limits.OpenFiles != wantDefault {
		t.Errorf("echo's open files limit = %d, want %d", spec.Limits.OpenFiles, wantDefault)
	}
	for _, call := range []struct{ tool, input string }{{"echo", `{"text":"x"}`}, {"nofile", `{}`}, {"echo", `{"text":"x"}`}} {
		res := set.Execute(context.Background(), call.tool, json.RawMessage(call.input), Options{})
		if res.Error {
			t.Fatalf("%s: %v", call.tool, OutputText(res.Output))
		}
		if call.tool == "nofile" && capable && OutputText(res.Output) != "99" {
			t.Errorf("open files under nofile = %v", OutputText(res.Output))
		}
	}
}
