package limits

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// ProcessGroupDead reports whether no process of process group pgid is
// alive: the group has no process left (kill(-pgid, 0) fails with ESRCH),
// or every process left is a zombie, dead and waiting for its parent to
// reap it. proc is where the proc file system is mounted ("" for /proc).
//
// The kernel counts a zombie as a member until it is reaped: a group whose
// leader has exited but is not reaped yet is never gone to kill, and
// neither is one whose dead members wait for a parent that does not reap
// them (an init that does not, a host that is no subreaper). Then only a
// read of every process's stat file can tell, which costs about 4 µs a
// process: the first answer costs one system call, the second that read.
func ProcessGroupDead(proc string, pgid int) bool {
	if pgid <= 0 || groupGone(pgid) {
		return true
	}
	return !liveMember(proc, pgid)
}

// groupGone reports whether no process, zombies included, is in group pgid.
// A member pins the group's id, so it cannot be another group's meanwhile.
func groupGone(pgid int) bool { return errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) }

// WaitProcessGroup waits until ProcessGroupDead(proc, pgid) or ctx ends.
// It asks the kernel (kill) after 20 µs, then less and less often (every
// 5 ms at most), and reads /proc, where a zombie counts as dead, once a
// millisecond has passed, then whenever the time waited has doubled: a
// subreaper reaping the group's orphans (agent-server) empties it well
// before that.
func WaitProcessGroup(ctx context.Context, proc string, pgid int) error {
	if pgid <= 0 || groupGone(pgid) {
		return nil
	}
	start := time.Now()
	delay, scanAt := 20*time.Microsecond, time.Millisecond
	for {
		if err := pause(ctx, delay, nil); err != nil {
			return err
		}
		if groupGone(pgid) {
			return nil
		}
		if waited := time.Since(start); waited >= scanAt {
			if !liveMember(proc, pgid) {
				return nil
			}
			scanAt = 2 * waited
		}
		delay = min(2*delay, 5*time.Millisecond)
	}
}

// pause waits d, or until wake (nil: never) has a value; ctx's error when
// it ends first.
func pause(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
	case <-t.C:
	}
	return nil
}

// liveMember reports whether a process of group pgid is alive: in proc's
// listing, with pgid as its group and not a zombie (a zombie thread group
// leader whose other threads still run is alive). A process proc cannot
// read (it ended meanwhile) is not.
func liveMember(proc string, pgid int) bool {
	if proc == "" {
		proc = "/proc"
	}
	d, err := os.Open(proc)
	if err != nil {
		return true // cannot tell: not dead
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
	buf := make([]byte, 1024)
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		fd, err := unix.Open(filepath.Join(proc, name, "stat"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		n, err := unix.Read(fd, buf)
		unix.Close(fd)
		if err != nil || n <= 0 {
			continue
		}
		if statAlive(buf[:n], want) {
			return true
		}
	}
	return false
}

// statAlive reads a /proc/PID/stat line: whether its process is in group
// pgid and alive.
func statAlive(b, pgid []byte) bool {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	f := bytes.Fields(b[i+1:])
	// After the command: state (field 3), ppid, pgrp (5) … num_threads (20).
	if len(f) < 18 || !bytes.Equal(f[2], pgid) {
		return false
	}
	if state := f[0]; len(state) == 1 && (state[0] == 'Z' || state[0] == 'X') {
		threads, _ := strconv.Atoi(string(f[17]))
		return threads > 1
	}
	return true
}
