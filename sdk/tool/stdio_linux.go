package tool

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
)

// init runs on the main thread. When the host started this process as a
// plugin with a parent-death signal of SIGKILL, it swaps that for SIGTERM so
// that, should the host die, the plugin can first kill its whole process
// group (commands and their children included) and then itself. The parent
// death signal is per thread, which is why this must happen in init.
func init() {
	if os.Getenv(pluginv1.MagicCookieKey) != pluginv1.MagicCookieValue || !groupLeader() {
		return
	}
	var sig int32
	if err := unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0); err != nil || sig != int32(unix.SIGKILL) {
		return
	}
	// Had the host died before this line, SIGKILL would have been delivered
	// already, before any command was started: there is no gap to check.
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
}

// stdio redirects file descriptors 1 and 2 of the plugin into pipes that
// the plugin reads itself, so that whatever writes there (Go code, C code,
// inherited by child processes) is forwarded to the call that is running.
type stdio struct {
	diag     *os.File // the host's stderr pipe: logs, crash output, output between calls
	hostOut  *os.File // the host's stdout pipe, for go-plugin's handshake line
	out, err *capture
	// The standard *os.File values for fd 1 and 2, kept referenced: an
	// unreferenced File's finalizer would close the descriptor.
	stdout, stderr *os.File
}

// captureStdio must run before plugin.Serve: go-plugin prints its handshake
// line on os.Stdout, which is pointed at the host's original stdout pipe.
func captureStdio() (*stdio, error) {
	hostOut, err := dupFile(1, "host-stdout")
	if err != nil {
		return nil, err
	}
	diag, err := dupFile(2, "host-stderr")
	if err != nil {
		return nil, err
	}
	// Fatal errors (a panic outside a handler, a fault) reach the host, which
	// reports the tail of them, even though fd 2 is now captured.
	if err := debug.SetCrashOutput(diag, debug.CrashOptions{}); err != nil {
		return nil, err
	}
	s := &stdio{diag: diag, hostOut: hostOut, stdout: os.Stdout, stderr: os.Stderr}
	if s.out, err = newCapture(1, pluginv1.OutputStream_OUTPUT_STREAM_STDOUT, diag); err != nil {
		return nil, err
	}
	if s.err, err = newCapture(2, pluginv1.OutputStream_OUTPUT_STREAM_STDERR, diag); err != nil {
		return nil, err
	}
	os.Stdout, os.Stderr = hostOut, diag

	// SIGTERM (the parent-death signal set in init, or a kill by hand) takes
	// the whole process group down.
	// Only when the plugin leads its own group, as the host starts it: a
	// plugin sharing its parent's group must not take the parent along.
	if groupLeader() {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			_ = unix.Kill(0, unix.SIGKILL)
			os.Exit(1)
		}()
	}
	return s, nil
}

// groupLeader reports whether this process leads its process group.
func groupLeader() bool {
	return unix.Getpgrp() == os.Getpid()
}

func dupFile(fd int, name string) (*os.File, error) {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("dup fd %d: %w", fd, err)
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// takeOver points os.Stdout and os.Stderr back at fd 1 and 2, now captured.
// It runs at the first RPC, after go-plugin has swapped them for its pipes.
func (s *stdio) takeOver() {
	if s == nil {
		return
	}
	os.Stdout, os.Stderr = s.stdout, s.stderr
}

func (s *stdio) attach(c *call) {
	if s == nil {
		return
	}
	s.out.setSink(c)
	s.err.setSink(c)
}

// flush forwards everything written so far to the attached call.
func (s *stdio) flush() {
	if s == nil {
		return
	}
	s.drain(false)
}

// detach forwards everything written so far to the call, then detaches it.
func (s *stdio) detach() {
	if s == nil {
		return
	}
	s.drain(true)
}

// drain drains both captures. One poll(2) says which pipes hold bytes, so
// that a call that wrote nothing (most) costs one system call, not a read
// per pipe. A pipe found empty may only have been emptied by its loop,
// which forwards what it read before it lets go of the capture's lock.
func (s *stdio) drain(detach bool) {
	fds := []unix.PollFd{{Fd: int32(s.out.fd), Events: unix.POLLIN}, {Fd: int32(s.err.fd), Events: unix.POLLIN}}
	_, err := unix.Poll(fds, 0)
	for errors.Is(err, unix.EINTR) {
		_, err = unix.Poll(fds, 0)
	}
	s.out.drain(detach, err != nil || fds[0].Revents != 0)
	s.err.drain(detach, err != nil || fds[1].Revents != 0)
}

// capture reads one redirected descriptor. Every read and forward happens
// under mu, so once drain has read the pipe empty under mu, everything
// written before it was called has been forwarded.
type capture struct {
	stream   pluginv1.OutputStream
	fallback *os.File
	r        *os.File
	fd       int // r's descriptor, never closed
	rc       syscall.RawConn

	mu   sync.Mutex
	sink *call
	buf  []byte
}

func newCapture(fd int, stream pluginv1.OutputStream, fallback *os.File) (*capture, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	// The write end stays blocking: children inherit it as their stdout.
	if err := unix.Dup3(p[1], fd, 0); err != nil {
		return nil, fmt.Errorf("dup3 onto fd %d: %w", fd, err)
	}
	_ = unix.Close(p[1])
	if err := unix.SetNonblock(p[0], true); err != nil {
		return nil, err
	}
	r := os.NewFile(uintptr(p[0]), fmt.Sprintf("capture-%d", fd))
	rc, err := r.SyscallConn()
	if err != nil {
		return nil, err
	}
	c := &capture{stream: stream, fallback: fallback, r: r, fd: p[0], rc: rc, buf: make([]byte, 32<<10)}
	go c.loop()
	return c, nil
}

func (c *capture) setSink(k *call) {
	c.mu.Lock()
	c.sink = k
	c.mu.Unlock()
}

func (c *capture) loop() {
	for {
		var eof bool
		err := c.rc.Read(func(fd uintptr) bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			n, err := readRetry(int(fd), c.buf)
			if errors.Is(err, unix.EAGAIN) {
				return false
			}
			if n > 0 {
				c.forward(c.buf[:n])
				return true
			}
			eof = true
			return true
		})
		if err != nil || eof {
			return
		}
	}
}

// drain forwards what the pipe holds (when read is set: it may hold
// something), and detaches the call.
func (c *capture) drain(detach, read bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if read {
		_ = c.rc.Control(func(fd uintptr) {
			for {
				n, _ := readRetry(int(fd), c.buf)
				if n <= 0 {
					return
				}
				c.forward(c.buf[:n])
			}
		})
	}
	if detach {
		c.sink = nil
	}
}

func readRetry(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

// forward must be called with mu held.
func (c *capture) forward(b []byte) {
	if c.sink != nil {
		c.sink.send(c.stream, b)
		return
	}
	_, _ = c.fallback.Write(b)
}
