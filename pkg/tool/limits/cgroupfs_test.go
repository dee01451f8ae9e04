package limits

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestProcessCgroups: each cgroup directory found for this process lists
// it in its cgroup.procs, and a v1 hierarchy is keyed by its controllers.
func TestProcessCgroups(t *testing.T) {
	dirs, err := ProcessCgroups(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Skip("no cgroup hierarchy mounted here")
	}
	self := strconv.Itoa(os.Getpid())
	for hier, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			t.Errorf("%q: %v", hier, err)
			continue
		}
		if !slices.Contains(strings.Fields(string(data)), self) {
			t.Errorf("%q: %s does not list this process", hier, dir)
		}
	}
	if _, err := ProcessCgroups(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

func TestParseProcFiles(t *testing.T) {
	cg := parseProcCgroup([]byte("9:name=systemd:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/user.slice/a b\n"))
	if len(cg) != 4 || !has(cg[2].controllers, "cpuacct") || cg[1].path != "/process_api/abc" || len(cg[3].controllers) != 0 || cg[3].path != "/user.slice/a b" {
		t.Fatalf("cgroup lines = %+v", cg)
	}
	mi := parseMountinfo([]byte(
		"30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n" +
			"31 25 0:27 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n" +
			"32 25 0:28 / /sys/fs/cgroup/my\\040dir rw - cgroup2 cgroup2 rw,nsdelegate\n" +
			"33 25 0:29 / /proc rw - proc proc rw\n"))
	if len(mi) != 3 {
		t.Fatalf("mounts = %+v", mi)
	}
	if d, ok := mi[0].dirOf("/process_api/abc"); !ok || d != "/sys/fs/cgroup/memory/process_api/abc" {
		t.Errorf("memory dir = %s %v", d, ok)
	}
	if d, ok := mi[1].dirOf("/docker/x"); !ok || d != "/sys/fs/cgroup/pids" {
		t.Errorf("pids dir of the mount root = %s %v", d, ok)
	}
	if _, ok := mi[1].dirOf("/elsewhere"); ok {
		t.Error("a path outside the mount was placed in it")
	}
	if !mi[2].v2 || mi[2].point != "/sys/fs/cgroup/my dir" {
		t.Errorf("cgroup2 mount = %+v", mi[2])
	}
}
