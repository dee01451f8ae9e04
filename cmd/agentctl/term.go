package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// newUI returns the chat's terminal: line editing in raw mode when stdin
// and stdout are a terminal, else plain lines (a pipe, a file, a script).
func newUI(e *env) (ui, error) {
	in := int(e.stdin.Fd())
	if out, ok := e.stdout.(*os.File); ok && term.IsTerminal(in) && term.IsTerminal(int(out.Fd())) {
		return newTTY(e, in, out)
	}
	return newLines(e, in), nil
}

// lineResult is a line read, or why none was.
type lineResult struct {
	line string
	err  error
}

// pollReader reads a file descriptor, waiting with poll so that it can
// give up when done closes: a plain read of a terminal cannot be
// cancelled, and making it non-blocking would also change the shell's
// terminal, which shares the flag.
type pollReader struct {
	fd   int
	done <-chan struct{}
}

func (r pollReader) Read(p []byte) (int, error) {
	for {
		select {
		case <-r.done:
			return 0, io.EOF
		default:
		}
		fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return 0, err
		}
		m, err := unix.Read(r.fd, p)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if m == 0 {
			return 0, io.EOF
		}
		return m, nil
	}
}

// forwardInterrupts sends each SIGINT to intr, until done closes.
func forwardInterrupts(from <-chan os.Signal, intr chan<- struct{}, done <-chan struct{}) {
	for {
		select {
		case <-from:
			select {
			case intr <- struct{}{}:
			default:
			}
		case <-done:
			return
		}
	}
}

// lines is the chat's terminal when stdin is not one: each line read is a
// task or an answer, echoed after its prompt so that the output reads as
// a transcript.
type lines struct {
	w     io.Writer
	read  chan lineResult // closed after the last
	intr  chan struct{}
	done  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	col0  bool
	ended bool
}

func newLines(e *env, fd int) *lines {
	u := &lines{w: e.stdout, read: make(chan lineResult), intr: make(chan struct{}, 1), done: make(chan struct{}), col0: true}
	u.wg.Go(func() {
		defer close(u.read)
		sc := bufio.NewScanner(pollReader{fd: fd, done: u.done})
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case u.read <- lineResult{line: sc.Text()}:
			case <-u.done:
				return
			}
		}
		if err := sc.Err(); err != nil {
			select {
			case u.read <- lineResult{err: err}:
			case <-u.done:
			}
		}
	})
	u.wg.Go(func() { forwardInterrupts(e.interrupts, u.intr, u.done) })
	return u
}

func (u *lines) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(p) > 0 {
		u.col0 = p[len(p)-1] == '\n'
	}
	return u.w.Write(p)
}

func (u *lines) ask(ctx context.Context, prompt string, _ bool) (string, error) {
	if u.ended {
		return "", io.EOF
	}
	select {
	case r, ok := <-u.read:
		if !ok {
			u.ended = true
			return "", io.EOF
		}
		if r.err == nil {
			u.mu.Lock()
			if !u.col0 {
				io.WriteString(u.w, "\n")
			}
			fmt.Fprintf(u.w, "%s%s\n", prompt, r.line)
			u.col0 = true
			u.mu.Unlock()
		}
		return r.line, r.err
	case <-u.intr:
		return "", errInterrupted
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (u *lines) interrupts() <-chan struct{} { return u.intr }

func (u *lines) close() {
	close(u.done)
	u.wg.Wait()
}

// tty is the chat's terminal in raw mode: x/term's line editor (history,
// cursor keys) reads the lines; output goes above the prompt; Ctrl-C is
// taken out of the keys before the editor sees them (it would read it as
// the end of input).
type tty struct {
	in    int
	saved *term.State
	t     *term.Terminal
	keys  *keyBuffer
	hist  *lineHistory
	intr  chan struct{}
	reqs  chan struct{} // the reader: read a line
	read  chan lineResult
	done  chan struct{}
	wg    sync.WaitGroup

	mu        sync.Mutex // the output's state
	col0      bool
	prompting bool
	partial   []byte // output held back while a prompt is shown: a line's start
}

func newTTY(e *env, in int, out *os.File) (*tty, error) {
	saved, err := term.MakeRaw(in)
	if err != nil {
		return nil, fmt.Errorf("the terminal: %w", err)
	}
	u := &tty{
		in: in, saved: saved, keys: newKeyBuffer(), hist: &lineHistory{},
		intr: make(chan struct{}, 1), reqs: make(chan struct{}, 1), read: make(chan lineResult),
		done: make(chan struct{}), col0: true,
	}
	u.t = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{u.keys, out}, "")
	u.t.History = u.hist
	u.resize(int(out.Fd()))
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	u.wg.Go(func() {
		defer signal.Stop(winch)
		for {
			select {
			case <-winch:
				u.resize(int(out.Fd()))
			case <-u.done:
				return
			}
		}
	})
	u.wg.Go(u.pump)
	u.wg.Go(func() { forwardInterrupts(e.interrupts, u.intr, u.done) })
	u.wg.Go(func() {
		for {
			select {
			case <-u.reqs:
			case <-u.done:
				return
			}
			line, err := u.t.ReadLine()
			select {
			case u.read <- lineResult{line, err}:
			case <-u.done:
				return
			}
		}
	})
	return u, nil
}

// resize tells the line editor the terminal's width.
func (u *tty) resize(fd int) {
	if w, h, err := term.GetSize(fd); err == nil {
		_ = u.t.SetSize(w, h)
	}
}

// pump moves the keys typed to the line editor, less Ctrl-C.
func (u *tty) pump() {
	r := pollReader{fd: u.in, done: u.done}
	buf := make([]byte, 1024)
	for {
		n, err := r.Read(buf)
		keys := buf[:0]
		for _, b := range buf[:n] {
			if b == 3 { // Ctrl-C
				select {
				case u.intr <- struct{}{}:
				default:
				}
				continue
			}
			keys = append(keys, b)
		}
		u.keys.write(keys)
		if err != nil {
			u.keys.close(err)
			return
		}
	}
}

func (u *tty) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.prompting {
		// The editor redraws the prompt after each write: only whole
		// lines go above it, the rest waits for the answer.
		u.partial = append(u.partial, p...)
		if i := bytes.LastIndexByte(u.partial, '\n'); i >= 0 {
			if _, err := u.t.Write(u.partial[:i+1]); err != nil {
				return 0, err
			}
			u.partial = append(u.partial[:0], u.partial[i+1:]...)
		}
		return len(p), nil
	}
	if len(p) == 0 {
		return 0, nil
	}
	if _, err := u.t.Write(p); err != nil {
		return 0, err
	}
	u.col0 = p[len(p)-1] == '\n'
	return len(p), nil
}

func (u *tty) ask(ctx context.Context, prompt string, record bool) (string, error) {
	u.mu.Lock()
	if !u.col0 {
		_, _ = u.t.Write([]byte("\n"))
	}
	u.col0, u.prompting = true, true
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.prompting = false
		if len(u.partial) > 0 {
			_, _ = u.t.Write(u.partial)
			u.col0 = u.partial[len(u.partial)-1] == '\n'
			u.partial = u.partial[:0]
		}
		u.mu.Unlock()
	}()
	u.hist.setRecord(record)
	u.t.SetPrompt(prompt)
	u.reqs <- struct{}{}
	select {
	case r := <-u.read:
		return r.line, r.err
	case <-u.intr:
		u.leave()
		return "", errInterrupted
	case <-ctx.Done():
		u.leave()
		return "", ctx.Err()
	}
}

// leave ends the line being read for an ask left unanswered, as if Enter
// was typed, and drops it: the editor cannot be told to stop reading.
func (u *tty) leave() {
	u.hist.setRecord(false)
	u.keys.write([]byte{'\r'})
	<-u.read
}

func (u *tty) interrupts() <-chan struct{} { return u.intr }

func (u *tty) close() {
	close(u.done)
	u.keys.close(io.EOF) // ends a ReadLine
	u.wg.Wait()
	_ = term.Restore(u.in, u.saved)
}

// keyBuffer holds the keys typed until the line editor reads them.
type keyBuffer struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	err  error
}

// maxKeys bounds the keys held while no line is read (typed ahead during a run).
const maxKeys = 64 << 10

func newKeyBuffer() *keyBuffer {
	k := &keyBuffer{}
	k.cond = sync.NewCond(&k.mu)
	return k
}

func (k *keyBuffer) Read(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(k.buf) == 0 && k.err == nil {
		k.cond.Wait()
	}
	if len(k.buf) > 0 {
		n := copy(p, k.buf)
		k.buf = k.buf[n:]
		return n, nil
	}
	return 0, k.err
}

func (k *keyBuffer) write(b []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.buf = append(k.buf, b[:min(len(b), maxKeys-len(k.buf))]...)
	k.cond.Broadcast()
}

func (k *keyBuffer) close(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil {
		k.err = err
	}
	k.cond.Broadcast()
}

// lineHistory is the line editor's history (the arrow keys): the tasks
// typed, not the answers to permission prompts.
type lineHistory struct {
	mu     sync.Mutex
	record bool
	lines  []string // the newest last
}

// maxHistory is how many lines the editor's history keeps.
const maxHistory = 500

func (h *lineHistory) setRecord(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.record = on
}

func (h *lineHistory) Add(line string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.record || line == "" {
		return
	}
	h.lines = append(h.lines, line)
	if len(h.lines) > maxHistory {
		h.lines = h.lines[len(h.lines)-maxHistory:]
	}
}

func (h *lineHistory) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.lines)
}

func (h *lineHistory) At(i int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lines[len(h.lines)-1-i]
}
