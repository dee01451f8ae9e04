package limits

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCPURlimit: under the rlimit mechanism WatchCPU also sets RLIMIT_CPU,
// the backstop for what its watch cannot see (a child's CPU time until the
// child ends): SIGXCPU at the soft limit, SIGKILL a second later for a
// process that ignores SIGXCPU (a Go program), and either is the CPU time
// breach, not a crash; a process the host killed is none.
func TestCPURlimit(t *testing.T) {
	c, err := New(Options{Mechanism: Rlimit})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cmd    func() *exec.Cmd
		signal syscall.Signal
		breach bool
	}{
		{"SIGXCPU at the soft limit", func() *exec.Cmd { return exec.Command("sh", "-c", "while :; do :; done") }, syscall.SIGXCPU, true},
		// A hard limit of 2 s, in case the host may not set it (without CAP_SYS_RESOURCE).
		{"SIGKILL at the hard limit", func() *exec.Cmd {
			cmd := exec.Command("sh", "-c", `ulimit -t 2 && exec "$0" -test.run='^$'`, os.Args[0])
			cmd.Env = helper("spin").Env
			return cmd
		}, syscall.SIGKILL, true},
		{"killed by the host", func() *exec.Cmd { return exec.Command("sleep", "100") }, syscall.SIGKILL, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := c.NewGroup(Limits{CPUTime: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			cmd := tt.cmd()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := startLocked(g, cmd); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { killAndClose(t, g, cmd) })
			g.setCPURlimit(500 * time.Millisecond) // the rlimit alone: no watch
			var lim unix.Rlimit
			if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_CPU, nil, &lim); err != nil || lim.Cur != 1 || c.raiseHard && lim.Max != 2 {
				t.Fatalf("RLIMIT_CPU %+v, %v; want 1 s (and 2 s): the next second past 500ms", lim, err)
			}
			if !tt.breach {
				g.Kill()
			}
			_ = cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != tt.signal {
				t.Fatalf("ended with %v, want %v", cmd.ProcessState, tt.signal)
			}
			br, ok := g.Breach(cmd.ProcessState, "")
			if ok != tt.breach || ok && (br.Kind != CPUTime || !strings.Contains(br.Detail, "RLIMIT_CPU") || br.String() != "CPU time limit of 500ms") {
				t.Fatalf("breach %+v %v, want %v", br, ok, tt.breach)
			}
		})
	}
}

func TestRlimitMemoryAndOpenFiles(t *testing.T) {
	c, err := New(Options{Mechanism: Rlimit})
	if err != nil {
		t.Fatal(err)
	}
	if c.Supports(Processes) || !c.Supports(Memory) {
		t.Fatalf("rlimit supports: %s", c)
	}
	g, err := c.NewGroup(Limits{Memory: 128 << 20, OpenFiles: 77, Processes: 5})
	if err != nil {
		t.Fatal(err)
	}
	if g.Limits().Processes != 0 {
		t.Error("a process limit the mechanism cannot enforce was kept")
	}
	cmd, out := run(t, g, "nofile")
	if line, _ := out.ReadString('\n'); strings.TrimSpace(line) != "77" {
		t.Errorf("RLIMIT_NOFILE in the child = %q", line)
	}
	g.Kill()
	_ = cmd.Wait()

	g2, err := c.NewGroup(Limits{Memory: 128 << 20})
	if err != nil {
		t.Fatal(err)
	}
	hog, _ := run(t, g2, "hog")
	_ = hog.Wait()
	stderr := hog.Stderr.(*strings.Builder).String()
	br, ok := g2.Breach(hog.ProcessState, stderr)
	if !ok || br.Kind != Memory || br.String() != "memory limit of 128 MiB" {
		t.Fatalf("breach = %+v, %v; stderr %.200s", br, ok, stderr)
	}
}
