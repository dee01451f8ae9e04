package tool

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// onlyPool returns the host's one pool.
func onlyPool(t *testing.T, h *Host) *pool {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pools) != 1 {
		t.Fatalf("%d pools, want 1", len(h.pools))
	}
	for _, pl := range h.pools {
		return pl
	}
	return nil
}

// settled waits until no process is being started ahead and no killed
// process is left, then returns the pids of the idle processes.
func settled(t *testing.T, h *Host, pl *pool) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pl.mu.Lock()
		starting, idle := pl.starting, make([]int, 0, len(pl.idle))
		for _, pr := range pl.idle {
			idle = append(idle, pr.p.pid)
		}
		pl.mu.Unlock()
		h.mu.Lock()
		procs := len(h.procs)
		h.mu.Unlock()
		if starting == 0 && procs == len(idle) {
			return idle
		}
		if time.Now().After(deadline) {
			t.Fatalf("not settled: %d starting, %d idle, %d processes", starting, len(idle), procs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPrewarmReplacesLostProcesses: after a cancel, a timeout or a crash
// killed the only process, another is started ahead, and the next call
// runs on it.
func TestPrewarmReplacesLostProcesses(t *testing.T) {
	h := newHost(t, Config{MinIdle: 1})
	set := scan(t, h, dirs.good)
	pl := onlyPool(t, h)
	tests := []struct {
		name string
		lose func()
	}{
		{"cancel", func() {
			ctx, cancel := context.WithCancel(context.Background())
			set.Execute(ctx, "loop", nil, Options{OnOutput: func(Chunk) { cancel() }})
		}},
		{"timeout", func() { set.Execute(context.Background(), "loop_timeout", nil, Options{}) }},
		{"crash", func() { set.Execute(context.Background(), "exit", json.RawMessage(`{"code":3}`), Options{}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := settled(t, h, pl)
			if len(before) != 1 {
				t.Fatalf("idle before: %v, want one process", before)
			}
			tt.lose()
			after := settled(t, h, pl)
			if len(after) != 1 || after[0] == before[0] {
				t.Fatalf("idle after: %v (before %v), want one new process", after, before)
			}
			if pid := pidOfPlugin(t, set); pid != after[0] {
				t.Fatalf("the next call ran in %d, not in the process started ahead (%d)", pid, after[0])
			}
		})
	}
}

// TestCallWaitsForTheProcessStartedAhead: a call made while the
// replacement is still starting takes it instead of starting another.
func TestCallWaitsForTheProcessStartedAhead(t *testing.T) {
	h := newHost(t, Config{MinIdle: 1})
	set := scan(t, h, dirs.good)
	pl := onlyPool(t, h)
	settled(t, h, pl)
	ctx, cancel := context.WithCancel(context.Background())
	set.Execute(ctx, "loop", nil, Options{OnOutput: func(Chunk) { cancel() }})
	pid := pidOfPlugin(t, set) // at once: the replacement has only begun
	if idle := settled(t, h, pl); len(idle) != 1 || idle[0] != pid {
		t.Fatalf("idle %v after a call in %d: want only that process", idle, pid)
	}
}

func TestMinIdleAtLoad(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		wantIdle int
	}{
		{"agent-server's default", Config{MinIdle: DefaultMinIdle}, 1},
		{"three", Config{MinIdle: 3}, 3},
		{"capped by MaxIdle", Config{MinIdle: 3, MaxIdle: 2}, 2},
		{"none ahead", Config{MaxIdle: -1}, 0},
		{"none kept, none ahead", Config{MinIdle: 1, MaxIdle: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, tt.cfg)
			scan(t, h, dirs.good)
			pl := onlyPool(t, h)
			if idle := settled(t, h, pl); len(idle) != tt.wantIdle {
				t.Fatalf("idle after load: %v, want %d", idle, tt.wantIdle)
			}
			pl.mu.Lock()
			defer pl.mu.Unlock()
			for _, pr := range pl.idle {
				if pr.sess == nil {
					t.Errorf("process %d is idle without its warm-up call (no Session open)", pr.p.pid)
				}
			}
		})
	}
}

// TestCloseStopsStartsAhead closes the host while a replacement is being
// started; newHost's cleanup checks that no process, goroutine or socket
// is left.
func TestCloseStopsStartsAhead(t *testing.T) {
	h := newHost(t, Config{MinIdle: 2})
	set := scan(t, h, dirs.good)
	ctx, cancel := context.WithCancel(context.Background())
	set.Execute(ctx, "loop", nil, Options{OnOutput: func(Chunk) { cancel() }})
	pl := onlyPool(t, h)
	pl.mu.Lock()
	starting := pl.starting
	pl.mu.Unlock()
	if starting == 0 {
		t.Fatal("no process being started ahead after the kill")
	}
	h.Close()
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{}); !res.Error {
		t.Fatalf("a call after Close ran: %v", res.Output)
	}
}

// TestPluginGOMAXPROCS: plugin processes start with Config.PluginProcs as
// GOMAXPROCS (agent-server's default: 1), over the host's own variable; a
// zero PluginProcs leaves the host's.
func TestPluginGOMAXPROCS(t *testing.T) {
	tests := []struct {
		name    string
		procs   int
		hostEnv string // GOMAXPROCS in the host's environment; "" unset
		want    int
		wantEnv string
	}{
		{name: "agent-server's default", procs: DefaultPluginProcs, want: 1, wantEnv: "1"},
		{name: "agent-server's default over the host's", procs: DefaultPluginProcs, hostEnv: "2", want: 1, wantEnv: "1"},
		{name: "set", procs: 3, want: 3, wantEnv: "3"},
		{name: "the host's", hostEnv: "3", want: 3, wantEnv: "3"},
		{name: "the runtime's", want: runtimeDefaultProcs()},
		{name: "negative: the host's", procs: -1, hostEnv: "3", want: 3, wantEnv: "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.hostEnv != "" {
				t.Setenv("GOMAXPROCS", tc.hostEnv)
			} else if v, ok := os.LookupEnv("GOMAXPROCS"); ok {
				t.Setenv("GOMAXPROCS", v) // restored after
				os.Unsetenv("GOMAXPROCS")
			}
			set := scan(t, newHost(t, Config{PluginProcs: tc.procs}), dirs.good)
			res := set.Execute(context.Background(), "procinfo", nil, Options{})
			var info struct {
				GOMAXPROCS int    `json:"gomaxprocs"`
				Env        string `json:"env_gomaxprocs"`
			}
			if res.Error || json.Unmarshal([]byte(res.Output.GetJson()), &info) != nil {
				t.Fatalf("procinfo: %v", res.Output)
			}
			if info.GOMAXPROCS != tc.want || info.Env != tc.wantEnv {
				t.Errorf("plugin runs with GOMAXPROCS %d (variable %q), want %d (%q)", info.GOMAXPROCS, info.Env, tc.want, tc.wantEnv)
			}
		})
	}
}

// runtimeDefaultProcs is the GOMAXPROCS the Go runtime picks for a process
// here when the variable is unset: this test's own, unless the variable
// set it (then the CPUs, as no CPU quota is assumed).
func runtimeDefaultProcs() int {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return runtime.NumCPU()
	}
	return runtime.GOMAXPROCS(0)
}

// TestPluginEnvironment: a plugin gets the host's environment as it is when
// the plugin starts, without the variables of HideEnv, even those set after
// the host was made.
func TestPluginEnvironment(t *testing.T) {
	t.Setenv("TOOLTEST_SECRET", "hidden-1")
	t.Setenv("TOOLTEST_KEPT", "kept-1")
	h := newHost(t, Config{HideEnv: []string{"TOOLTEST_SECRET", "TOOLTEST_LATER_SECRET"}})
	set := scan(t, h, dirs.good)
	env := func() []string {
		t.Helper()
		res := set.Execute(context.Background(), "env", nil, Options{})
		var vars []string
		if res.Error || json.Unmarshal([]byte(res.Output.GetJson()), &vars) != nil {
			t.Fatalf("env: %v", res.Output)
		}
		return vars
	}
	vars := env()
	if !slices.Contains(vars, "TOOLTEST_KEPT=kept-1") || !slices.ContainsFunc(vars, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Errorf("the host's environment is not the plugin's: %q", vars)
	}
	if slices.ContainsFunc(vars, func(kv string) bool { return strings.HasPrefix(kv, "TOOLTEST_SECRET=") }) {
		t.Errorf("a hidden variable reached the plugin: %q", vars)
	}
	// Set in the host's environment now: a process started after gets the
	// one, never the other.
	t.Setenv("TOOLTEST_LATER_SECRET", "hidden-2")
	t.Setenv("TOOLTEST_LATER", "kept-2")
	set.Execute(context.Background(), "exit", json.RawMessage(`{"code":3}`), Options{})
	vars = env()
	if !slices.Contains(vars, "TOOLTEST_LATER=kept-2") {
		t.Fatalf("the plugin did not start after the change: %q", vars)
	}
	if slices.ContainsFunc(vars, func(kv string) bool { return strings.HasPrefix(kv, "TOOLTEST_LATER_SECRET=") }) {
		t.Errorf("a hidden variable set later reached the plugin: %q", vars)
	}
}

func TestIdleProcessesAreReused(t *testing.T) {
	t.Run("kept", func(t *testing.T) {
		set := scan(t, newHost(t, Config{MaxIdle: 1}), dirs.good)
		if a, b := pidOfPlugin(t, set), pidOfPlugin(t, set); a != b {
			t.Fatalf("sequential calls ran in %d and %d", a, b)
		}
	})
	t.Run("none kept", func(t *testing.T) {
		set := scan(t, newHost(t, Config{MaxIdle: -1}), dirs.good)
		if a, b := pidOfPlugin(t, set), pidOfPlugin(t, set); a == b {
			t.Fatal("with MaxIdle -1 a process was reused")
		}
	})
}
