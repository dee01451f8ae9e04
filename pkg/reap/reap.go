// Package reap keeps a server's process table clean: it makes the process
// the reaper of its orphaned descendants (Linux's child subreaper, or the
// init of a PID namespace, as in a container without an init) and waits
// for them, so that a tool's grandchild whose parent died never stays a
// zombie, and kills those still running when the server exits.
//
// Reaping must not take the exit status of a child that other code waits
// for (os/exec's Cmd.Wait of a plugin process). The kernel gives an orphan
// to the reaper's first thread (its thread group leader); children started
// by other goroutines belong to the threads that forked them. Run waits
// with __WNOTHREAD on the first thread, so it sees only the children of
// that thread: the orphans, and nothing anyone else waits for. The price is
// that Run must own the first thread: package main locks the main
// goroutine to it (runtime.LockOSThread in an init function), starts
// nothing from it, and calls Run there.
package reap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotFirstThread says Run was called on another thread than the
// process's first one, where it would reap nothing.
var ErrNotFirstThread = errors.New("reap: Run must run on the process's first thread (lock the main goroutine to it in an init function)")

// Subreaper makes this process the reaper of its orphaned descendants
// (PR_SET_CHILD_SUBREAPER). The init of a PID namespace is one already.
func Subreaper() error {
	if os.Getpid() == 1 {
		return nil
	}
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Run reaps orphans as they exit until ctx ends, then kills those still
// running and reaps them. It returns ErrNotFirstThread, at once, when not
// called on the process's first thread.
func Run(ctx context.Context) error {
	if unix.Gettid() != os.Getpid() {
		return ErrNotFirstThread
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	defer signal.Stop(sig)
	reapExited()
	for {
		select {
		case <-ctx.Done():
			killOrphans()
			return nil
		case <-sig:
			reapExited()
		}
	}
}

// reapExited waits for every orphan that has exited, without blocking.
func reapExited() int {
	n := 0
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG|unix.WALL|unix.WNOTHREAD, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if pid <= 0 || err != nil {
			return n
		}
		n++
	}
}

// killOrphans SIGKILLs the orphans still running (the children of this
// thread, from /proc) and reaps them.
func killOrphans() {
	for range 3 {
		pids := orphans()
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range pids {
			var ws unix.WaitStatus
			for {
				_, err := unix.Wait4(pid, &ws, unix.WALL|unix.WNOTHREAD, nil)
				if !errors.Is(err, unix.EINTR) {
					break
				}
			}
		}
	}
}

// orphans lists the children of this thread (CONFIG_PROC_CHILDREN).
func orphans() []int {
	tid := unix.Gettid()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/children", tid))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
