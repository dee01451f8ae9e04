package limits

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cgroupLine is one line of /proc/self/cgroup.
type cgroupLine struct {
	controllers []string // empty for cgroup v2
	path        string
}

// parseProcCgroup reads /proc/PID/cgroup: "ID:controllers:path" lines.
func parseProcCgroup(b []byte) []cgroupLine {
	var out []cgroupLine
	for _, l := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var ctrls []string
		for _, c := range strings.Split(parts[1], ",") {
			if c != "" {
				ctrls = append(ctrls, c)
			}
		}
		out = append(out, cgroupLine{controllers: ctrls, path: parts[2]})
	}
	return out
}

// mount is one cgroup file system mount from /proc/self/mountinfo.
type mount struct {
	root, point string
	v2          bool
	controllers []string // of a v1 mount
}

// parseMountinfo returns the cgroup and cgroup2 mounts in mountinfo.
func parseMountinfo(b []byte) []mount {
	var out []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(f) <= sep+3 {
			continue
		}
		fstype := f[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		m := mount{root: unescape(f[3]), point: unescape(f[4]), v2: fstype == "cgroup2"}
		if !m.v2 {
			for _, o := range strings.Split(f[sep+3], ",") {
				switch o {
				case "rw", "ro":
				default:
					m.controllers = append(m.controllers, o)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// dirOf returns the directory of cgroup path p in mount m, or false when
// the path is outside what is mounted there.
func (m mount) dirOf(p string) (string, bool) {
	root := strings.TrimSuffix(m.root, "/")
	if root != "" && p != root && !strings.HasPrefix(p, root+"/") {
		return "", false
	}
	return filepath.Join(m.point, strings.TrimPrefix(p, root)), true
}

// ProcessCgroups returns the directory of process pid's cgroup in each
// cgroup hierarchy mounted here, keyed by the hierarchy's controllers as
// /proc/PID/cgroup lists them ("" for cgroup v2). A hierarchy not mounted
// here, or whose mount does not hold the process's cgroup, is left out.
func ProcessCgroups(pid int) (map[string]string, error) {
	cgroups, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil, err
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	mounts := parseMountinfo(mountinfo)
	dirs := map[string]string{}
	for _, l := range parseProcCgroup(cgroups) {
		for _, m := range mounts {
			if m.v2 != (len(l.controllers) == 0) || !m.v2 && !has(m.controllers, l.controllers[0]) {
				continue
			}
			if d, ok := m.dirOf(l.path); ok {
				dirs[strings.Join(l.controllers, ",")] = d
				break
			}
		}
	}
	return dirs, nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeFile writes s to a cgroup control file.
func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", s, path, err)
	}
	return nil
}

// readKeyed reads a flat keyed file ("key value" lines) such as
// memory.events, and returns the value of key (0 when absent).
func readKeyed(path, key string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseKeyed(b, key)
}

// parseKeyed reads key's value in the text of a flat keyed file; 0 when
// the key is missing.
func parseKeyed(b []byte, key string) (uint64, error) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		k, v, ok := bytes.Cut(line, []byte{' '})
		if ok && string(k) == key {
			return strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		}
	}
	return 0, nil
}

// readUint reads a file holding one number.
func readUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// readPids reads a cgroup.procs file.
func readPids(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, l := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(l); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// procStart returns the start time (field 22 of /proc/PID/stat, clock
// ticks since boot) of pid, which with the pid names one process for good.
func procStart(proc string, pid string) (string, error) {
	b, err := os.ReadFile(filepath.Join(proc, pid, "stat"))
	if err != nil {
		return "", err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	// After the command come state (field 3) … starttime (field 22).
	if len(f) < 20 {
		return "", errors.New("malformed stat")
	}
	return f[19], nil
}

// procOwnCPU returns the CPU time pid itself has used (utime+stime, what
// RLIMIT_CPU counts).
func procOwnCPU(proc string, pid int) (time.Duration, error) {
	f, err := procStatFields(proc, pid)
	if err != nil {
		return 0, err
	}
	var ticks uint64
	for _, x := range f[11:13] { // fields 14 and 15
		n, _ := strconv.ParseUint(x, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// procStatFields returns the fields of /proc/PID/stat after the command
// (field 3 on), at least 15 of them.
func procStatFields(proc string, pid int) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return nil, errors.New("malformed stat")
	}
	return f, nil
}

// procCPU returns utime+stime+cutime+cstime of pid, in clock ticks.
func procCPU(proc string, pid int) (uint64, error) {
	f, err := procStatFields(proc, pid)
	if err != nil {
		return 0, err
	}
	var sum uint64
	for _, x := range f[11:15] { // fields 14 to 17
		n, _ := strconv.ParseUint(x, 10, 64)
		sum += n
	}
	return sum, nil
}
