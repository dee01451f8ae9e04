package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	"github.com/agentcore/agentcore/pkg/tool/sockdir"
)

// Defaults of Config.
const (
	DefaultMaxIdle = 4
	// DefaultMinIdle is the MinIdle agent-server sets by default: one warm
	// process per plugin. Config's zero MinIdle starts none ahead.
	DefaultMinIdle = 1
	// DefaultPluginProcs is the PluginProcs agent-server sets by default.
	// Config's zero PluginProcs leaves GOMAXPROCS unset.
	DefaultPluginProcs  = 1
	DefaultStartTimeout = 10 * time.Second
	// DefaultDescribeTimeout bounds a plugin's Describe when its Command sets no DescribeTimeout.
	DefaultDescribeTimeout = 10 * time.Second
	// DefaultMaxReceiveBytes bounds one message from a plugin.
	DefaultMaxReceiveBytes = 64 << 20
	scanParallel           = 4
)

// ErrClosed is the error of operations on a closed Host.
var ErrClosed = errors.New("tool host is closed")

// Config configures a Host.
type Config struct {
	// Logger receives the host's logs: plugin starts and stderr lines at debug, crashes at warn. Default: none.
	Logger hclog.Logger
	// MaxIdle is how many idle processes are kept per plugin for reuse:
	// 0 means DefaultMaxIdle, a negative value keeps none.
	MaxIdle int
	// MinIdle is how many idle processes per plugin are started ahead of
	// the calls: at load, and again in the background when a process is
	// killed (cancel, timeout), crashes or dies while idle, so that the next
	// call finds a warm process. Such a process, and the one a scan keeps,
	// first makes a warm-up call naming no tool (a plugin answers it with
	// an unknown-tool error result). 0 starts none ahead and makes no
	// warm-up calls; it is at most MaxIdle.
	MinIdle int
	// StartTimeout bounds a plugin's start up to its handshake. 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// SocketDir is where plugin sockets are made (one directory per process,
	// removed when it ends). Default: the first memory file system (tmpfs)
	// the host may write to among the temporary directory, $XDG_RUNTIME_DIR
	// and /dev/shm, else the temporary directory. On a disk file system each
	// plugin start pays for a directory and a socket inode (about 2 ms on a
	// busy ext4 /tmp).
	SocketDir string
	// Kinds are extra kinds of tool sources a scan recognises, tried in
	// order before the built-in kind (an executable file is a plugin).
	Kinds []Kind
	// Limits, when set, bounds each plugin process tree (memory, processes,
	// CPU time per call, open files) with the limits LimitPolicy gives its
	// tools. The caller owns it and closes it after the Host.
	Limits *limits.Controller
	// LimitPolicy turns what tools ask for into their limits.
	LimitPolicy LimitPolicy
	// MaxReceiveBytes bounds one message from a plugin (a result, an output
	// chunk): a larger one ends the call with an error result. 0 means
	// DefaultMaxReceiveBytes. Plugins are told MaxResultBytes (below) so
	// that the Go SDK cuts a result to fit before sending it.
	MaxReceiveBytes int
	// MaxResultBytes, when positive, is passed to plugins
	// (AGENTCORE_MAX_RESULT_BYTES) as the size a result should fit in.
	MaxResultBytes int
	// SkipBadPlugins makes a scan skip a file that fails as a plugin (no
	// handshake, a failed start or Describe, invalid tools), logging a
	// warning, instead of failing.
	SkipBadPlugins bool
	// ScanHost answers the host requests of plugins describing their tools
	// on their Session (Command.DescribeOnSession); nil answers none.
	ScanHost *HostHandler
	// Credential, when set, is the user and groups plugin processes run as
	// (the host must be root); each plugin's socket directory is given to
	// that user. Default: the host's own. Setting such a process's rlimits
	// takes CAP_SYS_RESOURCE: without it the limits left to rlimits (open
	// files, and memory under the rlimit mechanism) are not enforced, and
	// NewHost logs a warning.
	Credential *syscall.Credential
	// Observer, if set, is told when plugin processes start, are reused,
	// are killed to stop a call, and end (for metrics).
	Observer ProcessObserver
	// HideEnv names environment variables plugin processes never get (the
	// server's secret variables): a plugin's environment is built from the
	// host's as it is at each start, without them, plus go-plugin's
	// handshake variables and the Command's Env.
	HideEnv []string
	// PluginProcs is the GOMAXPROCS plugin processes are started with: how
	// many threads a Go plugin runs Go code on at once. A process serves
	// one call at a time, and with one the Go runtime hands nothing between
	// cores on each call (about a fifth of a warm call's CPU on two). 0
	// leaves GOMAXPROCS as the host's environment has it (unset: one per
	// CPU). A Command's Env, or the plugin itself (runtime.GOMAXPROCS), may
	// set another.
	PluginProcs int
}

// ProcessObserver is told about the host's plugin processes, each named by
// its plugin (the base name of its source). Its methods must be quick and
// safe for concurrent use.
type ProcessObserver interface {
	// ProcessStarted: a process was started and connected (a cold start).
	ProcessStarted(plugin string)
	// ProcessReused: a call (or Describe) took an idle process (a warm start).
	ProcessReused(plugin string)
	// ProcessKilled: a process was killed to stop its call (a timeout, a
	// stopped run, a client gone).
	ProcessKilled(plugin string)
	// ProcessEnded: a process that ProcessStarted reported is gone and reaped.
	ProcessEnded(plugin string)
}

// Command is how to start a plugin process.
type Command struct {
	// Path is the executable.
	Path string
	// Args are the arguments after the program name.
	Args []string
	// Env is added to the host's environment.
	Env []string
	// Dir is the working directory; empty means the host's.
	Dir string
	// Source labels the tools of this plugin (Spec.Source); empty means Path.
	Source string
	// Files are data files the plugin reads when it starts (e.g. an MCP
	// server definition): a scan replaces the plugin's processes when one of
	// them has changed, as it does when Path has.
	Files []string
	// DescribeTimeout bounds the plugin's Describe, for plugins that must
	// reach something to know their tools; zero means DefaultDescribeTimeout.
	DescribeTimeout time.Duration
	// DescribeOnSession sends Describe on the plugin's Session, where its
	// host requests are answered by Config.ScanHost (an MCP host process
	// asking for its server's credential while it discovers).
	DescribeOnSession bool
	// StopGrace: a stopped call's context ends in the plugin first, which has this long
	// to end remote work (a remote task) and exit before its group is killed; 0: at once.
	StopGrace time.Duration
}

func (c Command) source() string {
	if c.Source != "" {
		return c.Source
	}
	return c.Path
}

func (c Command) key() string {
	return strings.Join(append(append([]string{c.Path, c.Dir}, c.Args...), c.Env...), "\x00")
}

// Kind is one kind of file a scan turns into a plugin, e.g. an MCP server
// definition served by `toolhost mcp-serve FILE`.
type Kind struct {
	// Name names the kind in errors.
	Name string
	// Match reports whether the file at path (info follows symlinks) is of this kind.
	Match func(path string, info fs.FileInfo) bool
	// Command returns how to start the plugin serving the file's tools.
	Command func(path string) (Command, error)
}

// Host owns every plugin process it starts: it pools them per plugin and
// kills them all on Close. It is safe for concurrent use.
type Host struct {
	cfg Config
	log hclog.Logger
	sp  *spawner

	mu     sync.Mutex
	closed bool
	pools  map[string]*pool
	procs  map[*proc]struct{}
	wg     sync.WaitGroup // operations that may start processes, and cleanups

	// sockets is this instance's socket directory, removed by Close.
	sockets string
	// noRlimits: plugins run as another user and the host cannot set
	// their rlimits (no CAP_SYS_RESOURCE), so limits left to rlimits are
	// not enforced.
	noRlimits bool
}

// NewHost returns a Host with no processes yet.
func NewHost(cfg Config) *Host {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.MaxIdle == 0 {
		cfg.MaxIdle = DefaultMaxIdle
	}
	cfg.MinIdle = min(cfg.MinIdle, cfg.MaxIdle)
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.SocketDir == "" {
		cfg.SocketDir = sockdir.Default()
	}
	if cfg.MaxReceiveBytes <= 0 {
		cfg.MaxReceiveBytes = DefaultMaxReceiveBytes
	}
	h := &Host{
		cfg:   cfg,
		log:   cfg.Logger,
		sp:    newSpawner(),
		pools: map[string]*pool{},
		procs: map[*proc]struct{}{},
	}
	h.sockets = sockdir.Make(cfg.SocketDir, cfg.Logger)
	if cfg.Limits != nil && cfg.Credential != nil && !limits.CanRaiseHardRlimits() {
		h.noRlimits = true
		what := "open files"
		if cfg.Limits.Mechanism() == limits.Rlimit {
			what = "memory and open files"
		}
		h.log.Warn("plugins run as another user, whose rlimits only a process with CAP_SYS_RESOURCE may set: their "+what+
			" limits are not enforced; give agent-server CAP_SYS_RESOURCE (or cgroups, for memory)", "uid", cfg.Credential.Uid)
	}
	return h
}

// Close kills every plugin process (busy or idle) with its whole process
// group, reaps them, and waits until nothing the Host started is left.
// Calls in flight end with an error result. Close is idempotent.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	procs := make([]*proc, 0, len(h.procs))
	for p := range h.procs {
		procs = append(procs, p)
	}
	var spares []*limits.Group
	for _, pl := range h.pools {
		pl.mu.Lock()
		if pl.spare != nil {
			spares = append(spares, pl.spare)
		}
		pl.idle, pl.retired, pl.spare = nil, true, nil
		pl.mu.Unlock()
	}
	h.mu.Unlock()
	for _, g := range spares {
		_ = g.Close()
	}
	for _, p := range procs {
		p.kill()
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(p.cleanup)
	}
	wg.Wait()
	h.wg.Wait()
	h.sp.stop()
	if h.sockets != h.cfg.SocketDir {
		if err := os.RemoveAll(h.sockets); err != nil {
			return fmt.Errorf("removing the socket directory: %w", err)
		}
	}
	return nil
}

// begin registers an operation that may start processes; false once closed.
func (h *Host) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	return true
}

func (h *Host) end() { h.wg.Done() }

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Scan finds the plugins in the given paths and describes their tools. A
// directory is walked recursively (names starting with "." are skipped); a
// file is taken as it is. Files matching a configured Kind become plugins of
// that kind; other executable files are plugins; other files are skipped.
// An executable that fails the handshake or Describe fails the scan, which
// names its path and why. Tools of later paths override earlier ones by
// name (each shadowed tool logged at WARN, and a plugin whose every tool
// is shadowed stopped); within one path a name offered twice is an error.
// The processes started for Describe stay in their pools, warm for the
// first calls. Folders of other projects' files (node_modules, virtual
// environments…) and executables that are no program are skipped (scan.go).
func (h *Host) Scan(ctx context.Context, paths ...string) (*Set, error) {
	sets := make([]*Set, 0, len(paths))
	var errs []error
	for _, root := range paths {
		s, err := h.scanPath(ctx, root)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sets = append(sets, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	h.shadow(sets)
	return Merge(sets...), nil
}

// Load describes the tools of one plugin started by cmd.
func (h *Host) Load(ctx context.Context, cmd Command) (*Set, error) {
	entries, err := h.describe(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return setOf(entries), nil
}

func (h *Host) scanPath(ctx context.Context, root string) (*Set, error) {
	cmds, err := h.find(root)
	if err != nil {
		return nil, err
	}
	results := make([][]*entry, len(cmds))
	errs := make([]error, len(cmds))
	sem := make(chan struct{}, scanParallel)
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = h.describe(ctx, c)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if errors.Is(err, ErrNotConnected) {
			h.log.Warn("tool scan: leaving out the tools of a server that is not connected", "path", cmds[i].source(), "error", err)
			errs[i] = nil
		}
	}
	if h.cfg.SkipBadPlugins {
		for i, err := range errs {
			if err != nil {
				h.log.Warn("skipping a tool file that is not a working plugin (-skip-bad-plugins)", "path", cmds[i].source(), "error", err)
				errs[i] = nil
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("scanning %s: %w", root, err)
	}
	var all []*entry
	seen := map[string]string{}
	for _, es := range results {
		for _, e := range es {
			if prev, dup := seen[e.spec.Name]; dup {
				errs = append(errs, fmt.Errorf("tool %q is offered by both %s and %s", e.spec.Name, prev, e.spec.Source))
				continue
			}
			seen[e.spec.Name] = e.spec.Source
			all = append(all, e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("scanning %s: %w", root, err)
	}
	return setOf(all), nil
}

// find lists the plugin commands under root, in path order.
func (h *Host) find(root string) ([]Command, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("tool path: %w", err)
	}
	if !info.IsDir() {
		c, ok, err := h.classify(abs, info)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s is not a tool plugin: it is not executable and matches no tool source kind", abs)
		}
		return []Command{c}, nil
	}
	var cmds []Command
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == abs {
			return nil
		}
		if d.IsDir() {
			if why := skippedFolder(path, d.Name()); why != "" {
				h.log.Debug("tool scan: skipping a folder", "path", path, "why", why)
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			h.log.Debug("tool scan: skipping a file", "path", path, "why", "a hidden file")
			return nil
		}
		info, err := os.Stat(path) // follows symlinks
		if err != nil {
			return fmt.Errorf("tool path: %w", err)
		}
		c, ok, err := h.classify(path, info)
		if err != nil {
			return err
		}
		if ok {
			cmds = append(cmds, c)
		}
		return nil
	})
	return cmds, err
}

func (h *Host) classify(path string, info fs.FileInfo) (Command, bool, error) {
	for _, k := range h.cfg.Kinds {
		if k.Match != nil && k.Match(path, info) {
			c, err := k.Command(path)
			if err != nil {
				if strings.Contains(err.Error(), path) {
					return Command{}, false, err // it names the file already
				}
				return Command{}, false, fmt.Errorf("%s (%s): %w", path, k.Name, err)
			}
			return c, true, nil
		}
	}
	if info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
		if why := notAProgram(path); why != "" {
			h.log.Debug("tool scan: skipping a file", "path", path, "why", why)
			return Command{}, false, nil
		}
		return Command{Path: path}, true, nil
	}
	h.log.Debug("tool scan: skipping a file", "path", path, "why", "not executable and of no tool source kind")
	return Command{}, false, nil
}

// poolFor returns the pool of cmd. On a scan (fresh is true) a pool whose
// executable changed since it was made is retired and replaced.
func (h *Host) poolFor(cmd Command, fresh bool) (*pool, error) {
	stamp := stampOf(append([]string{cmd.Path}, cmd.Files...))
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	key := cmd.key()
	old, ok := h.pools[key]
	if ok && (!fresh || slices.Equal(old.stamp, stamp)) {
		h.mu.Unlock()
		return old, nil
	}
	pl := &pool{host: h, cmd: cmd, stamp: stamp, name: filepath.Base(cmd.source())}
	h.pools[key] = pl
	h.mu.Unlock()
	if ok {
		old.retire() // kills processes: not under h.mu
	}
	return pl, nil
}

// fileStamp tells whether an executable, or a data file it reads, changed.
type fileStamp struct {
	size    int64
	modTime time.Time
}

// stampOf stamps each of paths: a missing file has the zero stamp.
func stampOf(paths []string) []fileStamp {
	stamps := make([]fileStamp, len(paths))
	for i, path := range paths {
		if info, err := os.Stat(path); err == nil {
			stamps[i] = fileStamp{size: info.Size(), modTime: info.ModTime()}
		}
	}
	return stamps
}
