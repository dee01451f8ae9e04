package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentcore/agentcore/internal/e2e"
	"github.com/agentcore/agentcore/internal/fakemodel"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// TestDaemonDiesWithItsCall: a setsid, double-forked daemon that a tool
// left behind is dead once its call ends: cancelled, stopped in a run (the
// Stop RPC), or with agent-server (SIGTERM) after a call that ended well.
// The daemon left the call's process group: only a cgroup holds it while
// agent-server runs; at its exit agent-server kills the orphans it reaped
// too.
func TestDaemonDiesWithItsCall(t *testing.T) {
	t.Parallel()
	const leave = "setsid bash -c 'sleep 1000 >/dev/null 2>&1 & echo daemon=$!'"
	daemonPID := func(s string) int {
		if m := regexp.MustCompile(`daemon=(\d+)`).FindStringSubmatch(s); m != nil {
			pid, _ := strconv.Atoi(m[1])
			return pid
		}
		return 0
	}
	tests := []struct {
		name   string
		cgroup bool // only a cgroup kills it
		run    func(t *testing.T, p *e2e.Server, c *client.Client) (daemon int)
	}{
		{"cancelled ExecuteTool", true, func(t *testing.T, _ *e2e.Server, c *client.Client) int {
			ctx, cancel := context.WithCancel(e2e.Context(t, 30*time.Second))
			defer cancel()
			daemon := 0
			_, _ = c.ExecuteTool(ctx, "shell", map[string]any{"command": leave + "; sleep 1000"}, 0, func(o *agentv1.ToolOutputChunk) {
				if daemon = daemonPID(o.GetData()); daemon != 0 {
					cancel()
				}
			})
			return daemon
		}},
		{"Stop on a run", true, func(t *testing.T, _ *e2e.Server, c *client.Client) int {
			system := suite.Router.Add(t, func(step int, _ *fakemodel.Request) fakemodel.Turn {
				if step == 0 {
					return fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "shell", Arguments: toJSON(t, map[string]any{"command": leave + "; sleep 1000"})}}}
				}
				return fakemodel.Turn{Text: "stopped"}
			})
			a, err := c.CreateAgent(e2e.Context(t, 10*time.Second), client.AgentOptions{Config: &agentv1.AgentConfig{System: proto.String(system)}})
			if err != nil {
				t.Fatal(err)
			}
			pids, ended := make(chan int, 1), make(chan error, 1)
			go func() {
				_, err := a.Send(e2e.Context(t, 30*time.Second), "leave a daemon", client.Callbacks{OnToolOutput: func(o *agentv1.ToolOutputEvent) {
					if pid := daemonPID(o.GetData()); pid != 0 {
						pids <- pid
					}
				}})
				ended <- err
			}()
			var daemon int
			select {
			case daemon = <-pids:
			case err := <-ended:
				t.Fatalf("the send ended before the daemon started: %v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("no daemon pid")
			}
			if resp, err := c.API().Stop(e2e.Context(t, 10*time.Second), &agentv1.StopRequest{AgentId: a.ID}); err != nil || !resp.GetStopped() {
				t.Fatalf("Stop: %v %v", resp, err)
			}
			select {
			case <-ended:
			case <-time.After(20 * time.Second):
				t.Fatal("the send did not end after Stop")
			}
			return daemon
		}},
		{"agent-server's exit", false, func(t *testing.T, p *e2e.Server, c *client.Client) int {
			res, err := c.ExecuteTool(e2e.Context(t, 30*time.Second), "shell", map[string]any{"command": leave}, 0, nil)
			if err != nil || res.GetError() {
				t.Fatalf("shell: %v %v", res, err)
			}
			daemon := daemonPID(res.GetOutput().GetJson())
			if !alive(daemon) {
				t.Fatalf("daemon %d is not running after a call that ended well: the test proves nothing", daemon)
			}
			if err := p.Stop(); err != nil {
				t.Fatalf("agent-server's exit: %v", err)
			}
			return daemon
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, c := ownServer(t, privatePlugins(t, "shell"))
			if m := mechanism(t, c); tt.cgroup && !strings.HasPrefix(m, "cgroup") {
				unavailable(t, "a daemon leaves its call's process group; only a cgroup holds it: %s", m)
			}
			daemon := tt.run(t, p, c)
			if daemon == 0 {
				t.Fatal("the daemon's pid never came")
			}
			waitGone(t, "daemon", daemon)
		})
	}
}

// TestPID1LeavesNoZombie runs agent-server as the init of a new PID
// namespace (as in a container without an init) and cancels shell calls
// whose grandchildren then lose their parents.
func TestPID1LeavesNoZombie(t *testing.T) {
	t.Parallel()
	if err := exec.Command("unshare", "-p", "-f", "--mount-proc", "true").Run(); err != nil {
		unavailable(t, "cannot make a PID namespace here (unshare -p -f --mount-proc): %v", err)
	}
	p, err := suite.StartServerUnder([]string{"unshare", "-p", "-f", "--mount-proc"}, privatePlugins(t, "shell"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server := childOf(t, p.Cmd.Process.Pid)
	for range 3 {
		ctx, cancel := context.WithCancel(e2e.Context(t, 30*time.Second))
		_, _ = c.ExecuteTool(ctx, "shell", map[string]any{"command": "(sleep 1000 & sleep 1000 & wait) & sleep 1000 & echo started; wait"}, 0,
			func(o *agentv1.ToolOutputChunk) {
				if strings.Contains(o.GetData(), "started") {
					cancel()
				}
			})
		cancel()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		z := zombiesOf(server)
		if len(z) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("zombies left under agent-server as PID 1: %v", z)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(server, syscall.SIGTERM)
	select {
	case <-p.Exited():
	case <-time.After(30 * time.Second):
		p.Kill()
		t.Fatal("agent-server as PID 1 did not stop on SIGTERM")
	}
	if !strings.Contains(p.Logs(), `"@message":"stopped"`) {
		t.Errorf("no clean stop:\n%s", p.Logs())
	}
}

// childOf returns the first child of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(b)); len(f) > 0 {
			child, _ := strconv.Atoi(f[0])
			return child
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d has no child", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// zombiesOf lists the zombie children of pid.
func zombiesOf(pid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestNoSocketDirectorySurvivesSIGKILLAndRestart(t *testing.T) {
	t.Parallel()
	if err := syscall.Statfs("/dev/shm", &syscall.Statfs_t{}); err != nil {
		unavailable(t, "no /dev/shm: %v", err)
	}
	tmp, err := os.MkdirTemp("/dev/shm", "e2e")
	if err != nil {
		unavailable(t, "no directory of ours in /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := privatePlugins(t, "hello")
	instances := func() []string {
		entries, _ := os.ReadDir(tmp)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	p, err := suite.StartServer(dir, nil, "TMPDIR="+tmp)
	if err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("-%d-", p.Cmd.Process.Pid)) {
		t.Fatalf("socket directories of a running server: %v", got)
	}
	p.Kill() // SIGKILL: it cannot remove its directory
	if got := instances(); len(got) != 1 {
		t.Fatalf("after SIGKILL: %v", got)
	}
	again, err := suite.StartServer(dir, nil, "TMPDIR="+tmp)
	if err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 1 || !strings.Contains(got[0], fmt.Sprintf("-%d-", again.Cmd.Process.Pid)) {
		t.Fatalf("after a restart: %v (the dead instance's directory must go)", got)
	}
	if err := again.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := instances(); len(got) != 0 {
		t.Fatalf("after a clean stop: %v", got)
	}
}
