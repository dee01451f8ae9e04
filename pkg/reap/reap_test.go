package reap

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The main goroutine owns the first thread, as in agent-server: the helper
// process reaps there, and tests (other goroutines) never run there.
func init() { runtime.LockOSThread() }

func TestMain(m *testing.M) {
	if os.Getenv("REAPTEST_HELPER") != "" {
		os.Exit(helper())
	}
	os.Exit(m.Run())
}

// helper is a small server: it reaps on its first thread while another
// goroutine starts a shell that leaves two orphans (one exits at once, one
// runs on) and a child of its own that it waits for. It prints
// "status OK|ERR", "zombies N", then the running orphan's pid, and reaps
// until stdin closes.
func helper() int {
	if err := Subreaper(); err != nil {
		fmt.Println("subreaper:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		own := exec.Command("sh", "-c", "sleep 0.3; exit 7")
		if err := own.Start(); err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		out, err := exec.Command("bash", "-c", "sleep 0.1 & setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!").Output()
		if err != nil {
			fmt.Println("bash:", err)
			os.Exit(1)
		}
		err = own.Wait()
		// The reaper must not have taken the status of a child waited for.
		if own.ProcessState != nil && own.ProcessState.ExitCode() == 7 {
			fmt.Println("status OK")
		} else {
			fmt.Println("status ERR", err)
		}
		time.Sleep(300 * time.Millisecond)
		fmt.Println("zombies", zombies())
		fmt.Println(strings.TrimSpace(string(out)))
		buf := make([]byte, 1)
		_, _ = os.Stdin.Read(buf)
		cancel()
	}()
	if err := Run(ctx); err != nil {
		fmt.Println("run:", err)
		return 1
	}
	fmt.Println("zombies", zombies())
	return 0
}

// zombies counts this process's zombie children.
func zombies() int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}

func TestOrphansAreReapedAndKilledAtTheEnd(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REAPTEST_HELPER=1")
	stdin, _ := cmd.StdinPipe()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	var lines []string
	for range 3 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("helper said %q, then %v", lines, err)
		}
		lines = append(lines, strings.TrimSpace(line))
	}
	if lines[0] != "status OK" || lines[1] != "zombies 0" {
		t.Fatalf("helper said %q", lines)
	}
	orphan, _ := strconv.Atoi(lines[len(lines)-1])
	if orphan == 0 || !running(orphan) {
		t.Fatalf("the orphan %q is not running", lines[2])
	}
	stdin.Close()
	rest, _ := readAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v (%s)", err, rest)
	}
	if !strings.Contains(rest, "zombies 0") {
		t.Errorf("after the end: %q", rest)
	}
	if running(orphan) {
		t.Errorf("the orphan %d outlived the server", orphan)
	}
}

func readAll(f interface{ Read([]byte) (int, error) }) (string, error) {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String(), nil
		}
	}
}

// running reports whether pid runs (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func TestRunRefusesAnotherThread(t *testing.T) {
	if err := Run(context.Background()); !errors.Is(err, ErrNotFirstThread) {
		t.Fatalf("Run on a test goroutine = %v", err)
	}
}
