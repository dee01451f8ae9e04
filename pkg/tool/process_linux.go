package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
	"golang.org/x/sys/unix"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

// drainAfterExit bounds how long the host reads a dead plugin's stdout and
// stderr pipes, which a stray descendant outside the group could hold open.
const drainAfterExit = time.Second

// spawner starts processes from one goroutine locked to its OS thread for
// the life of the Host. A parent-death signal fires when the thread that
// forked the child exits, not the process; Go may end an idle thread, so
// plugins are forked from a thread that lives as long as their Host.
type spawner struct {
	reqs chan func()
	done chan struct{}
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan func()), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		defer close(s.done)
		defer runtime.UnlockOSThread()
		for f := range s.reqs {
			f()
		}
	}()
	return s
}

// start starts cmd on the spawner's thread, in group g when it is not nil.
// It returns once the process runs: the thread's way back out of the
// group's cgroups (cgroup v1) follows meanwhile.
func (s *spawner) start(cmd *exec.Cmd, g *limits.Group) error {
	errc := make(chan error, 1)
	s.reqs <- func() {
		if g != nil {
			_ = g.StartThen(cmd, func(err error) { errc <- err })
			return
		}
		errc <- cmd.Start()
	}
	return <-errc
}

// stop ends the spawner's goroutine; call it once all its processes are reaped.
func (s *spawner) stop() {
	close(s.reqs)
	<-s.done
}

// process is one plugin process, started in its own process group with a
// parent-death signal and stdin from /dev/null, and in its limits group
// when it has one. It implements go-plugin's runner.Runner; go-plugin
// reads the handshake from Stdout and logs from Stderr, while process reaps
// the child itself: when the plugin exits for any reason, the rest of its
// tree (process group, and limits group) is killed before it is reaped.
type process struct {
	cmd     *exec.Cmd
	spawner *spawner
	group   *limits.Group // nil without limits

	outR, errR *os.File
	tail       *tailBuffer
	stderrDone chan struct{} // closed when the stderr pipe is read to its end
	log        hclog.Logger  // gets stderr lines at debug level
	partial    []byte        // an unfinished stderr line, for log
	// oom looks for a line of stderr saying an allocation failed, without
	// a cgroup (where RLIMIT_DATA makes it the sign of a memory breach), as
	// stderr comes. A Go plugin's own fatal error begins in the call's
	// captured stderr (sdk/tool's) instead: pool.run looks there.
	oom oomScanner

	// outW and errW are the host's copies of the write ends of the stdout
	// and stderr pipes, closed by the reaper after the reap: the pipes end
	// then rather than when the plugin dies, so that the goroutines
	// reading them (go-plugin's) do not wake, and take a processor, in the
	// moment between the plugin's files closing and its exit, which a
	// stopped call's result waits for.
	outW, errW *os.File
	// pidfd is the process's pidfd, non-blocking, on which the reaper waits
	// in the runtime's poller; nil without one (Linux < 5.10).
	pidfd *os.File

	mu         sync.Mutex
	pid        int
	killed     bool // SIGKILL sent to its process group
	treeKilled bool // and to its limits group
	reaped     bool
	state      *os.ProcessState
	exit       chan struct{} // closed once the process has exited, before it is reaped
	done       chan struct{} // closed once the process is reaped and the rest of its tree killed
}

var _ runner.Runner = (*process)(nil)

func newProcess(cmd *exec.Cmd, sp *spawner, log hclog.Logger, g *limits.Group) *process {
	p := &process{
		cmd: cmd, spawner: sp, log: log, group: g,
		tail:       &tailBuffer{headMax: 4 << 10, max: 8 << 10},
		stderrDone: make(chan struct{}),
		exit:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	return p
}

// Start implements runner.Runner.
func (p *process) Start(context.Context) error {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	outR, outW, err := pipe()
	if err != nil {
		return err
	}
	errR, errW, err := pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return err
	}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = devnull, outW, errW
	if p.cmd.SysProcAttr == nil { // the pool may have set the credential
		p.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	p.cmd.SysProcAttr.Setpgid, p.cmd.SysProcAttr.Pdeathsig = true, syscall.SIGKILL
	err = p.spawner.start(p.cmd, p.group)
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		// Nothing runs (or it was killed and reaped): nobody must wait for it.
		p.mu.Lock()
		p.reaped = true
		p.state = p.cmd.ProcessState
		p.mu.Unlock()
		close(p.stderrDone)
		close(p.done)
		return err
	}
	p.outR, p.outW, p.errR, p.errW = outR, outW, errR, errW
	// Not reaped yet (only reap reaps it), so the pid is still the child's.
	if fd, err := unix.PidfdOpen(p.cmd.Process.Pid, unix.PIDFD_NONBLOCK); err == nil {
		p.pidfd = os.NewFile(uintptr(fd), "plugin-pidfd")
	}
	p.mu.Lock() // kill may read it meanwhile (a Close during the start)
	p.pid = p.cmd.Process.Pid
	p.mu.Unlock()
	go p.reap()
	return nil
}

// pipe returns a pipe whose read end is pollable (so it takes deadlines)
// and whose write end is blocking, as a child's stdout should be.
func pipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "plugin-pipe"), os.NewFile(uintptr(fds[1]), "plugin-pipe"), nil
}

// reap waits for the plugin to exit without reaping it, says it has
// exited (a stopped call waits for that), reaps it (unless that call did
// first) after killing the rest of its process group while the group id
// cannot yet be reused, ends its pipes, kills the rest of its limits group
// and says it is done.
func (p *process) reap() {
	p.awaitExit()
	close(p.exit)
	// Let a stopped call go first: it is this processor's next goroutine.
	runtime.Gosched()
	p.finish()
	p.outW.Close()
	p.errW.Close()
	// The rest of the limits group (a daemon out of the process group):
	// after the reap, off the result's path; cleanup waits for it to die,
	// and may give the group to another process once done is closed.
	if p.group != nil {
		p.group.Kill()
	}
	close(p.done)
	deadline := time.Now().Add(drainAfterExit)
	_ = p.outR.SetReadDeadline(deadline)
	_ = p.errR.SetReadDeadline(deadline)
}

// awaitExit waits for the plugin to exit, without reaping it: on its pidfd
// in the runtime's poller, readable once it has exited, so that no thread
// waits and the processor that notices it wakes the stopped call waiting
// for exit on the spot; without a pidfd, in waitid on a thread of its own.
// (A call waiting in waitid itself was slower: under load the thread the
// kernel wakes waits for a CPU, where a poller runs already.)
func (p *process) awaitExit() {
	if f := p.pidfd; f != nil {
		defer f.Close()
		if rc, err := f.SyscallConn(); err == nil {
			// The first look asks (it may have exited already: the poller
			// forgets what it saw before the read began); a wake-up after
			// it is the exit.
			waited := false
			if rc.Read(func(fd uintptr) bool {
				if waited {
					return true
				}
				waited = true
				return exitedOrGone(int(fd))
			}) == nil {
				return
			}
		}
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// exitedOrGone reports whether the process of a non-blocking pidfd has
// exited (it may be reaped already).
func exitedOrGone(fd int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		if !errors.Is(err, unix.EINTR) {
			return err != nil && !errors.Is(err, unix.EAGAIN) || info.Signo != 0 // ECHILD: reaped
		}
	}
}

// finish, once the process has exited (exit is closed), kills the rest of
// its process group while its zombie pins the group id, and reaps it,
// unless it is reaped already: on return it is. The reaper calls it, then
// closes done; a stopped call that cannot return before the reap (no
// cgroup: the zombie is in the group it waits for) calls it first, and
// leaves done to the reaper, so that what waits for done (go-plugin,
// cleanup) wakes after the result rather than on its path.
func (p *process) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return
	}
	if !p.killed { // else sent while the group id was pinned already
		_ = unix.Kill(-p.pid, unix.SIGKILL)
	}
	_ = p.cmd.Wait()
	p.state = p.cmd.ProcessState
	p.reaped = true
}

// kill sends SIGKILL to the plugin's whole tree: its process group and,
// with limits, every process in its group (setsid escapes included). It
// never blocks. It does each once: a killed process can fork no more, and
// the kernel kills a child forked meanwhile with its group (and a
// cgroup's); what waits for the tree to die kills its limits group again
// if need be.
func (p *process) kill() {
	p.killProcessGroup()
	p.mu.Lock()
	live := p.pid > 0 && !p.reaped && !p.treeKilled
	p.treeKilled = p.treeKilled || live
	p.mu.Unlock()
	// Not under the lock: the reap that the group kill must not delay takes it.
	if live && p.group != nil {
		p.group.Kill() // once reaped, reap has done it
	}
}

// killProcessGroup sends SIGKILL to the plugin's process group, once, and
// leaves the rest of its limits group to the reaper, which kills what is
// left of it after the reap (and cleanup waits for that): a tree that dies
// with its process group then leaves its cgroup fit for reuse (see
// limits.Group.Close). It never blocks.
func (p *process) killProcessGroup() {
	p.mu.Lock()
	if p.pid > 0 && !p.reaped && !p.killed {
		_ = unix.Kill(-p.pid, unix.SIGKILL)
		p.killed = true
	}
	p.mu.Unlock()
}

// exited reports whether the process has exited (it may not be reaped yet).
func (p *process) exited() bool {
	select {
	case <-p.exit:
		return true
	default:
		return false
	}
}

// finished reports whether the process has been reaped (its state is known).
func (p *process) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// status describes how the process ended.
func (p *process) status() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == nil {
		if p.reaped {
			return "did not start"
		}
		return "still running"
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%s)", ws.Signal(), ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", p.state.ExitCode())
}

// Kill implements runner.Runner (go-plugin calls it when a start fails;
// cleanup follows).
func (p *process) Kill(context.Context) error {
	p.killProcessGroup()
	return nil
}

// Wait implements runner.Runner.
func (p *process) Wait(context.Context) error {
	<-p.done
	if p.state != nil && !p.state.Success() {
		return errors.New(p.state.String())
	}
	return nil
}

// Stdout implements runner.Runner.
func (p *process) Stdout() io.ReadCloser { return p.outR }

// Stderr implements runner.Runner: what go-plugin reads is kept in the tail.
func (p *process) Stderr() io.ReadCloser { return &stderrReader{p: p} }

// Diagnose implements runner.Runner.
func (p *process) Diagnose(context.Context) string { return "" }

// Name implements runner.Runner.
func (p *process) Name() string { return p.cmd.Path }

// ID implements runner.Runner.
func (p *process) ID() string { return strconv.Itoa(p.pid) }

// PluginToHost implements runner.Runner.
func (p *process) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

// HostToPlugin implements runner.Runner.
func (p *process) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

type stderrReader struct {
	p    *process
	once sync.Once
}

func (r *stderrReader) Read(b []byte) (int, error) {
	n, err := r.p.errR.Read(b)
	if n > 0 {
		r.p.tail.Write(b[:n])
		if r.p.log.IsDebug() {
			r.p.logLines(b[:n])
		}
		if g := r.p.group; g != nil && !g.Cgroup() {
			r.p.oom.write(b[:n])
		}
	}
	if err != nil {
		r.once.Do(func() { close(r.p.stderrDone) })
	}
	return n, err
}

func (r *stderrReader) Close() error { return r.p.errR.Close() }

// oomScanner looks for a line saying an allocation failed in what is
// written to it (limits.OutOfMemoryLine), keeping the unfinished last line
// for the next write, and stores the first it finds. One goroutine writes.
type oomScanner struct {
	found atomic.Pointer[string]
	carry []byte
}

func (s *oomScanner) write(b []byte) {
	if s.found.Load() != nil {
		return
	}
	buf := append(s.carry, b...)
	if line := limits.OutOfMemoryLine(buf); line != "" {
		s.found.Store(&line)
		s.carry = nil
		return
	}
	rest := buf[bytes.LastIndexByte(buf, '\n')+1:]
	if len(rest) > 256 {
		rest = rest[len(rest)-256:]
	}
	s.carry = append([]byte(nil), rest...)
}

// line returns the line found, or "" (also for a nil scanner).
func (s *oomScanner) line() string {
	if s == nil {
		return ""
	}
	if l := s.found.Load(); l != nil {
		return *l
	}
	return ""
}

// logLines logs the complete lines in b (with what came before), one entry
// per line. Only go-plugin's stderr reader calls it, so it needs no lock.
func (p *process) logLines(b []byte) {
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		p.log.Debug("plugin stderr", "pid", p.pid, "line", string(p.partial[:i]))
		p.partial = p.partial[i+1:]
	}
	if len(p.partial) > 4096 { // a long line without end: log it in pieces
		p.log.Debug("plugin stderr", "pid", p.pid, "line", string(p.partial))
		p.partial = nil
	}
}

// tailBuffer keeps the first headMax and the last max bytes written to it:
// a program that fails says why at the start of its stderr (Node.js's
// uncaught exception, Go's panic) or at its end (Python's traceback).
type tailBuffer struct {
	mu      sync.Mutex
	headMax int
	max     int
	head    []byte
	buf     []byte
	dropped bool // bytes between head and buf were dropped
}

func (t *tailBuffer) Write(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := min(len(b), t.headMax-len(t.head)); n > 0 {
		t.head = append(t.head, b[:n]...)
		b = b[n:]
	}
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.dropped = true
	}
}

// String is what was kept: all of it, or its head and its tail, each
// without the line cut in two, with a line "…" between them.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.dropped {
		return string(t.head) + string(t.buf)
	}
	head, tail := string(t.head), string(t.buf)
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	return head + "…\n" + tail
}
