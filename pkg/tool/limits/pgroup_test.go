package limits

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestStatAlive(t *testing.T) {
	for _, tt := range []struct {
		stat  string
		alive bool
	}{
		{"7 (sleep) S 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", true},
		{"7 (sleep) S 1 43 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", false}, // another group
		{"7 (sleep) Z 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", false},
		// A thread group leader that exited while its other threads run.
		{"7 (go) Z 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 3 0 144263", true},
		{"7 (a) b (c)) R 1 42 7 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0 144263", true},
		{"7 (cut", false},
	} {
		if got := statAlive([]byte(tt.stat), []byte("42")); got != tt.alive {
			t.Errorf("%q: alive %v, want %v", tt.stat, got, tt.alive)
		}
	}
}

// TestProcessGroupDead: a group is dead when its processes are gone or
// zombies, whoever has yet to reap them; a live member keeps it alive
// after its leader died.
func TestProcessGroupDead(t *testing.T) {
	cmd := exec.Command("bash", "-c", "sleep 1000 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = unix.Kill(-pgid, unix.SIGKILL)
		_ = cmd.Wait()
	})
	var sleep int
	if _, err := fmt.Fscan(out, &sleep); err != nil {
		t.Fatal(err)
	}
	if ProcessGroupDead("", pgid) {
		t.Fatal("a running group is dead")
	}
	// The leader dies, and is not reaped: its zombie keeps the group to kill.
	_ = unix.Kill(pgid, unix.SIGKILL)
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pgid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if ProcessGroupDead("", pgid) {
		t.Fatalf("dead with sleep %d running", sleep)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := WaitProcessGroup(ctx, "", pgid); err == nil {
		t.Fatal("WaitProcessGroup returned with sleep running")
	}
	// The orphaned sleep dies; this machine's init may never reap it.
	_ = unix.Kill(sleep, unix.SIGKILL)
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := WaitProcessGroup(ctx, "", pgid); err != nil {
		t.Fatalf("WaitProcessGroup with its processes zombies: %v", err)
	}
	if !zombieOrGone(sleep) {
		t.Fatalf("sleep %d runs", sleep)
	}
	_ = cmd.Wait()
	if !ProcessGroupDead("", pgid) {
		t.Fatal("not dead after the reap")
	}
}
