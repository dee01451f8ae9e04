package limits

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestMain runs this binary as a helper process when LIMITSTEST_HELPER says which.
func TestMain(m *testing.M) {
	switch os.Getenv("LIMITSTEST_HELPER") {
	case "hog": // allocate and touch memory without end
		var keep [][]byte
		for {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
			runtime.KeepAlive(keep) // every block stays resident: the memory limit must stop it
		}
	case "spin": // burn CPU without end
		h := fnv.New64a()
		for {
			_, _ = h.Write([]byte{1})
		}
	case "nofile": // print the open-files limit, then wait
		var rl unix.Rlimit
		_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &rl)
		fmt.Println(rl.Cur)
		select {}
	case "escape": // a setsid grandchild that outlives this process group
		cmd := exec.Command("sleep", "1000")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // done before Start returns
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		fmt.Println(cmd.Process.Pid)
		select {}
	case "fork": // start processes until refused, then fail
		for i := 0; ; i++ {
			if err := exec.Command("sleep", "1000").Start(); err != nil {
				fmt.Println("refused after", i)
				os.Exit(3)
			}
		}
	}
	os.Exit(m.Run())
}

func helper(name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LIMITSTEST_HELPER="+name)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// startLocked runs g.Start on a goroutine locked to its thread, as pkg/tool's spawner does.
func startLocked(g *Group, cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- g.Start(cmd)
	}()
	return <-errc
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{256 << 20: "256 MiB", 1 << 30: "1 GiB", 3 << 29: "1.5 GiB", 512: "512 B", 64 << 10: "64 KiB", 0: "0 B"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// run starts a helper in g and returns it with a function that reaps it.
func run(t *testing.T, g *Group, name string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := helper(name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &strings.Builder{}
	if err := startLocked(g, cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killAndClose(t, g, cmd) })
	return cmd, bufio.NewReader(out)
}

// killAndClose kills g's tree, reaps cmd, its first process, and checks
// that the tree dies and the group goes.
func killAndClose(t *testing.T, g *Group, cmd *exec.Cmd) {
	t.Helper()
	g.Kill()
	_ = cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Wait(ctx); err != nil {
		t.Errorf("the tree did not die: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("group Close: %v", err)
	}
}

// zombieOrGone reports whether pid has ended: a zombie, or reaped.
func zombieOrGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}
