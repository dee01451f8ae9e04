package tool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	"github.com/agentcore/agentcore/pkg/tool/sockdir"
)

// TestDefaultSocketDir checks that plugin sockets go to a memory file
// system when the host may write to one, in the documented order.
func TestDefaultSocketDir(t *testing.T) {
	isTmpfs := func(dir string) bool {
		var fs unix.Statfs_t
		return unix.Statfs(dir, &fs) == nil && fs.Type == unix.TMPFS_MAGIC
	}
	disk, err := os.Getwd() // the package's directory
	if err != nil || isTmpfs(disk) {
		t.Skip("no disk directory to compare with")
	}
	if !isTmpfs("/dev/shm") {
		t.Skip("no tmpfs at /dev/shm")
	}
	mem, err := os.MkdirTemp("/dev/shm", "sockettest")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(mem) })
	tests := []struct {
		name, tmpdir, runtime, want string
	}{
		{"a memory temporary directory", mem, "", mem},
		{"the runtime directory when the temporary one is on disk", disk, mem, mem},
		{"/dev/shm when the runtime directory is missing", disk, filepath.Join(mem, "missing"), "/dev/shm"},
		{"/dev/shm when the runtime directory is on disk", disk, disk, "/dev/shm"},
	}
	for _, tt := range tests {
		t.Setenv("TMPDIR", tt.tmpdir)
		t.Setenv("XDG_RUNTIME_DIR", tt.runtime)
		if got := sockdir.Default(); got != tt.want {
			t.Errorf("%s: sockdir.Default() = %s, want %s", tt.name, got, tt.want)
		}
	}

	// A host with no SocketDir makes its sockets there and leaves none.
	t.Setenv("TMPDIR", disk)
	t.Setenv("XDG_RUNTIME_DIR", mem)
	h := NewHost(Config{MaxIdle: 1})
	set := scan(t, h, dirs.good)
	if res := set.Execute(context.Background(), "echo", json.RawMessage(`{"text":"x"}`), Options{}); res.Error {
		t.Fatal(res.Output)
	}
	if used, _ := os.ReadDir(mem); len(used) != 1 { // the idle process's
		t.Errorf("socket directories in %s while a process is idle: %v", mem, used)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(mem); len(left) > 0 {
		t.Errorf("socket directories left in %s: %v", mem, left)
	}
}

func TestNoSocketDirectorySurvivesSIGKILLAndRestart(t *testing.T) {
	sockets := shortTempDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TOOLTEST_HELPER=host", "TOOLTEST_DIR="+dirs.good, "TOOLTEST_SOCKETS="+sockets)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := readLine(out); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(sockets)
	if inst, ok := limits.ParseInstance(entries[0].Name()); len(entries) != 1 || !ok || inst.PID != strconv.Itoa(cmd.Process.Pid) {
		t.Fatalf("the host's socket directory: %v", entries)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	h := newHost(t, Config{SocketDir: sockets})
	if _, err := os.Stat(filepath.Join(sockets, entries[0].Name())); !os.IsNotExist(err) {
		t.Fatalf("the killed host's socket directory survived a new host's start: %v", err)
	}
	if h.sockets == sockets {
		t.Fatal("the new host has no directory of its own")
	}
}
