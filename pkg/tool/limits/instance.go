package limits

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// instanceName matches the subtrees (and socket directories) that host
// instances make: agentcore-PIDNS-PID-START, ".N" added by a second one in
// the same process.
var instanceName = regexp.MustCompile(`^agentcore-([0-9]+)-([0-9]+)-([0-9]+)(?:\.[0-9]+)?$`)

// removeStale removes the subtrees under dir made by host instances that
// are gone, killing what is left in them first (e.g. a daemon a tool left
// behind with setsid).
func (c *Controller) removeStale(dir string, v2 bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		inst, ok := ParseInstance(e.Name())
		if !ok || !e.IsDir() || !inst.Gone(c.proc) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		killed := removeTree(path, v2)
		c.log.Info("removed the cgroups of a dead agent-server instance", "path", path, "killed", killed)
	}
}

// Instance names one host process for good, across PID namespaces: its
// PID namespace (the inode of /proc/PID/ns/pid), its pid there and its
// start time (clock ticks since boot). Subtrees and socket directories
// carry it, so that a later host can tell those of dead instances.
type Instance struct {
	NS, PID, Start string
}

// Self returns this process's Instance as seen in proc ("" for /proc).
func Self(proc string) Instance {
	if proc == "" {
		proc = "/proc"
	}
	start, err := procStart(proc, "self")
	if err != nil {
		start = "0"
	}
	return Instance{NS: pidNS(proc), PID: strconv.Itoa(os.Getpid()), Start: start}
}

// String is the name: agentcore-PIDNS-PID-START.
func (i Instance) String() string { return "agentcore-" + i.NS + "-" + i.PID + "-" + i.Start }

// ParseInstance reads an instance name (with or without a ".N" suffix).
func ParseInstance(name string) (Instance, bool) {
	m := instanceName.FindStringSubmatch(name)
	if m == nil {
		return Instance{}, false
	}
	return Instance{NS: m[1], PID: m[2], Start: m[3]}, true
}

// Gone reports whether the instance's process is provably gone: it ran in
// this process's PID namespace, and no process there has its pid and start
// time. An instance of another namespace is never provably gone.
func (i Instance) Gone(proc string) bool {
	if proc == "" {
		proc = "/proc"
	}
	if i.NS != pidNS(proc) {
		return false
	}
	start, err := procStart(proc, i.PID)
	return err != nil || start != i.Start
}

// pidNS returns the inode number of this process's PID namespace, "0"
// when proc cannot tell.
func pidNS(proc string) string {
	link, err := os.Readlink(filepath.Join(proc, "self", "ns", "pid"))
	if err != nil {
		return "0"
	}
	ino := strings.TrimSuffix(strings.TrimPrefix(link, "pid:["), "]")
	if _, err := strconv.ParseUint(ino, 10, 64); err != nil {
		return "0"
	}
	return ino
}

// removeTree kills every process in the cgroup tree at dir, waits (briefly)
// for it to empty and removes it, children first. It returns how many
// processes it killed.
func removeTree(dir string, v2 bool) int {
	killed := 0
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, d := range dirs {
		killed += killProcs(filepath.Join(d, "cgroup.procs"))
	}
	deadline := time.Now().Add(time.Second)
	for i := len(dirs) - 1; i >= 0; i-- {
		for os.Remove(dirs[i]) != nil && time.Now().Before(deadline) {
			killProcs(filepath.Join(dirs[i], "cgroup.procs"))
			time.Sleep(time.Millisecond)
		}
	}
	return killed
}
