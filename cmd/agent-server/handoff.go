package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The kernel keeps a process's initial environment in /proc/PID/environ
// and its arguments in /proc/PID/cmdline (readable by every user) for as
// long as it runs: os.Unsetenv changes only Go's copy. So when secrets come
// from the environment (config.SecretEnv) or sit in an argument (a store
// URL's password, config.SecretArgs), agent-server reads them, then
// execve(2)s itself (same pid) with an environment that lacks them and the
// arguments without the password, handing the values to the new image
// through a pipe whose number it names in handoffEnv; the new image puts
// the arguments back together in its own memory (config.RestoreArgs).
// Nothing is left in /proc/self/environ or /proc/self/cmdline, and plugins
// inherit the clean environment.

// handoffEnv names the inherited pipe holding the secret variables.
const handoffEnv = "AGENTCORE_SECRETS_FD"

// maxHandoff bounds the secrets handed over: they must fit in a pipe's
// buffer, written before the exec and read after.
const maxHandoff = 60 << 10

// receiveSecrets reads the variables (and arguments) a previous image of
// this process handed over, or returns nil when there was no hand-over.
func receiveSecrets() (map[string]string, error) {
	v, ok := os.LookupEnv(handoffEnv)
	if !ok {
		return nil, nil
	}
	os.Unsetenv(handoffEnv) // plugins must not see it
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q: not a file descriptor", handoffEnv, v)
	}
	f := os.NewFile(uintptr(fd), "secrets")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHandoff+1))
	if err != nil {
		return nil, fmt.Errorf("read the secrets handed over: %w", err)
	}
	vars := map[string]string{}
	if err := json.Unmarshal(b, &vars); err != nil {
		return nil, fmt.Errorf("read the secrets handed over: %w", err)
	}
	return vars, nil
}

// reexec replaces this process with a new image of itself whose
// environment lacks the named variables and whose arguments (after the
// program name) are args, handing the variables' values and hidden (the
// arguments as they were, from config.SecretArgs) over. It returns only on
// failure; with none of the variables set and nothing hidden, it returns
// nil at once.
func reexec(names, args []string, hidden map[string]string) error {
	vars := map[string]string{}
	maps.Copy(vars, hidden)
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			vars[n] = v
		}
	}
	if len(vars) == 0 {
		return nil
	}
	b, err := json.Marshal(vars)
	if err != nil {
		return err
	}
	if len(b) > maxHandoff {
		return fmt.Errorf("the secret variables hold %d bytes, more than %d: use files (api_key_file, -auth-token-file)", len(b), maxHandoff)
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	r, w := fds[0], fds[1]
	defer unix.Close(r)
	_ = unix.SetNonblock(w, true) // a small pipe buffer fails the write rather than hanging it
	n, werr := unix.Write(w, b)
	if werr == nil && n < len(b) {
		werr = io.ErrShortWrite
	}
	unix.Close(w)
	if werr != nil {
		return fmt.Errorf("hand the secrets over: %w", werr)
	}
	// The read end survives the exec; every other descriptor Go opened is close-on-exec.
	if _, err := unix.FcntlInt(uintptr(r), unix.F_SETFD, 0); err != nil {
		return err
	}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) && name != handoffEnv {
			env = append(env, kv)
		}
	}
	env = append(env, handoffEnv+"="+strconv.Itoa(r))
	argv := append([]string{os.Args[0]}, args...)
	// The binary's own path keeps the process's name (comm); /proc/self/exe
	// is the fallback when that path is gone, and the path in argv[0] when
	// there is no procfs.
	if exe, err := os.Executable(); err == nil {
		err = syscall.Exec(exe, argv, env)
		if !errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("exec %s: %w", exe, err)
		}
	}
	err = syscall.Exec("/proc/self/exe", argv, env)
	if errors.Is(err, syscall.ENOENT) && strings.Contains(os.Args[0], "/") {
		// No procfs (a bare chroot, say): the path it was started by.
		err = syscall.Exec(os.Args[0], argv, env)
		return fmt.Errorf("exec %s: %w", os.Args[0], err)
	}
	return fmt.Errorf("exec /proc/self/exe: %w", err)
}

// hideMemory makes the process non-dumpable: its /proc files (environ,
// mem, maps, fd…) belong to root, so that processes of the same user
// (plugins) can neither read them nor attach to it, and no core dump holds
// its secrets.
func hideMemory() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return errors.Join(errors.New("prctl(PR_SET_DUMPABLE, 0)"), err)
	}
	return nil
}
