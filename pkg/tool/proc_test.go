package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

func TestCrashesBecomeResults(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	tests := []struct {
		tool, input string
		want        []string
	}{
		{"exit", `{"code":3}`, []string{"crashed", "exited with status 3"}},
		{"segfault", `{}`, []string{"crashed", "exited with status 2", "SIGSEGV", "nil pointer dereference"}},
		{"sigkill", `{}`, []string{"crashed", "killed by signal 9"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := set.Execute(context.Background(), tt.tool, json.RawMessage(tt.input), Options{})
			if !res.Error {
				t.Fatalf("not an error: %v", res.Output)
			}
			textHas(tt.want...)(t, res.Output)
			if next := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"after"}`), Options{}); next.Error || OutputText(next.Output) != "after" {
				t.Fatalf("next call = %+v", next)
			}
		})
	}
}

func TestTimeoutAndCancelKill(t *testing.T) {
	h := newHost(t, Config{MaxIdle: 1})
	set := scan(t, h, dirs.good)

	t.Run("declared timeout", func(t *testing.T) {
		pid := pidOfPlugin(t, set) // the idle process the loop will run on
		start := time.Now()
		res := set.Execute(context.Background(), "loop_timeout", nil, Options{})
		if !res.Error || !strings.Contains(OutputText(res.Output), `"loop_timeout" timed out after 300ms and was killed`) {
			t.Fatalf("result = %+v", res)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Fatalf("returned after %v", d)
		}
		if alive(pid) {
			t.Fatalf("plugin %d survived its timeout", pid)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		pid := pidOfPlugin(t, set)
		ctx, cancel := context.WithCancel(context.Background())
		res := set.Execute(ctx, "loop", nil, Options{OnOutput: func(c Chunk) {
			if c.Data == "started" {
				cancel()
			}
		}})
		if !res.Error || !strings.Contains(OutputText(res.Output), `"loop" was stopped: context canceled`) {
			t.Fatalf("result = %+v", res)
		}
		if alive(pid) {
			t.Fatalf("plugin %d survived the cancel", pid)
		}
	})
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"still here"}`), Options{}); res.Error {
		t.Fatalf("after kills: %+v", res)
	}
}

// TestGrandchildDiesWithTheCall: when a cancelled call's result arrives, no
// process of the plugin's process group runs any more, its grandchild
// included, and one whose death takes a while (memory to free) too: without
// a cgroup the result waits until the group is dead, not only the plugin.
func TestGrandchildDiesWithTheCall(t *testing.T) {
	kids := []struct{ name, input string }{
		{"direct", `{}`},
		{"via bash", `{"shell":true}`},
		{"holding memory", `{"hold_mib":256}`},
	}
	// "": a host without a limits controller.
	for _, mech := range []limits.Mechanism{"", limits.Off, limits.Rlimit} {
		for _, kid := range kids {
			t.Run(fmt.Sprintf("%s/%s", cmp.Or(string(mech), "none"), kid.name), func(t *testing.T) {
				cfg := Config{}
				if mech != "" {
					c, err := limits.New(limits.Options{Mechanism: mech})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Limits = c
				}
				h := newHost(t, cfg)
				t.Cleanup(func() { // the host first, then the controller, then newHost's checks
					h.Close()
					if cfg.Limits != nil {
						cfg.Limits.Close()
					}
				})
				set := scan(t, h, dirs.good)
				ctx, cancel := context.WithCancel(context.Background())
				var plugin, child int
				res := set.Execute(ctx, "grandchild", json.RawMessage(kid.input), Options{OnOutput: func(c Chunk) {
					var err error
					if plugin, child, err = pidsFrom(c.Data); err == nil {
						if !alive(child) {
							t.Errorf("child %d is not running", child)
						}
						cancel()
					}
				}})
				live := liveInGroup(plugin)
				if !res.Error || child == 0 {
					t.Fatalf("result = %+v (child %d)", res, child)
				}
				if len(live) > 0 {
					t.Errorf("processes of the call's group still ran when its result arrived: %v", live)
				}
				waitGone(t, plugin, child)
			})
		}
	}
}

func TestHostSIGKILLTakesPluginsAndGrandchildren(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// The killed host cannot remove its socket directories: they go where
	// the test removes them.
	cmd.Env = append(os.Environ(), "TOOLTEST_HELPER=host", "TOOLTEST_DIR="+dirs.good, "TOOLTEST_SOCKETS="+shortTempDir(t))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := readLine(out)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("host helper: %v", err)
	}
	plugin, sleep, err := pidsFrom(line)
	if err != nil {
		t.Fatalf("host helper said %q", line)
	}
	if !alive(plugin) || !alive(sleep) {
		t.Fatal("plugin or sleep not running before the kill")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, plugin, sleep)
}

func TestCloseKillsBusyAndIdleProcesses(t *testing.T) {
	h := NewHost(Config{SocketDir: shortTempDir(t)})
	set := scan(t, h, dirs.good)
	idle := pidOfPlugin(t, set)
	started := make(chan struct{})
	done := make(chan Result)
	go func() {
		done <- set.Execute(context.Background(), "loop", nil, Options{OnOutput: func(Chunk) { close(started) }})
	}()
	<-started
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.Error || !strings.Contains(OutputText(res.Output), "tool host is closed") {
		t.Fatalf("busy call after Close = %+v", res)
	}
	if alive(idle) || len(children()) > 0 {
		t.Fatalf("processes left: idle %d alive=%v, children %v", idle, alive(idle), children())
	}
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{}); !res.Error || !strings.Contains(OutputText(res.Output), "closed") {
		t.Fatalf("call after Close = %+v", res)
	}
	if _, err := h.Scan(context.Background(), dirs.good); err == nil {
		t.Fatal("Scan after Close succeeded")
	}
}

func TestStartStopCyclesLeaveNothingBehind(t *testing.T) {
	sockets := shortTempDir(t)
	h := newHost(t, Config{MaxIdle: -1, SocketDir: sockets})
	set := scan(t, h, dirs.good)
	set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"warm"}`), Options{})
	h.wg.Wait() // cleanups of the first processes
	fds := openFDs()
	for i := range 200 {
		res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{})
		if res.Error {
			t.Fatalf("cycle %d: %+v", i, res)
		}
	}
	h.wg.Wait()
	if kids := children(); len(kids) > 0 {
		t.Errorf("processes left: %v", kids)
	}
	if left, _ := os.ReadDir(h.sockets); len(left) > 1 { // the marker
		t.Errorf("socket directories left: %d", len(left)-1)
	}
	if now := openFDs(); now > fds {
		t.Errorf("open fds grew from %d to %d", fds, now)
	}
}

func TestPluginProcessIsolation(t *testing.T) {
	h := newHost(t, Config{})
	set := scan(t, h, dirs.good)
	res := set.Execute(context.Background(), "procinfo", nil, Options{})
	var info struct {
		Pid, Pgid, Pdeathsig int
		Stdin                string
	}
	if err := json.Unmarshal([]byte(res.Output.GetJson()), &info); err != nil {
		t.Fatalf("procinfo: %v", res.Output)
	}
	if info.Pgid != info.Pid {
		t.Errorf("the plugin is not in its own process group: pid %d, pgid %d", info.Pid, info.Pgid)
	}
	if info.Stdin != "/dev/null" {
		t.Errorf("stdin is %s", info.Stdin)
	}
	// The host sets SIGKILL; sdk/tool swaps it for SIGTERM to take its group along.
	if info.Pdeathsig != int(syscall.SIGTERM) {
		t.Errorf("parent-death signal = %d", info.Pdeathsig)
	}
	if ppid, _, _ := procStat(strconv.Itoa(info.Pid)); ppid != os.Getpid() {
		t.Errorf("the plugin's parent is %d", ppid)
	}
}
