package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Options configure a Controller.
type Options struct {
	// Mechanism is the mechanism to use; empty or Auto picks the best one
	// available and never fails. Naming cgroup2, cgroup1 or rlimit makes New
	// fail when that one cannot be used.
	Mechanism Mechanism
	// Logger receives what the controller decides (at debug) and what it
	// cleans up after dead instances (at info). Default: none.
	Logger hclog.Logger
	// Proc is where the proc file system is mounted; default /proc. Tests
	// point it at a fake one, with mountinfo naming fake cgroup mounts.
	Proc string

	// noTrack keeps cgroup v1 groups out of the cgroup v2 hierarchy (tests
	// of the v1 groups alone).
	noTrack bool
}

// Controller makes Groups with one mechanism. It owns a cgroup subtree
// (with a cgroup mechanism) named for this host instance,
// "agentcore-PID-START", made under the host's own cgroup; New removes the
// subtrees of instances that are gone (killing what is left in them), and
// Close removes its own. It is safe for concurrent use.
type Controller struct {
	mech Mechanism
	why  string // why this mechanism, for the start log
	log  hclog.Logger
	proc string
	name string
	pid  int
	// raiseHard: the host has CAP_SYS_RESOURCE and may raise a hard rlimit
	// of its children again (RLIMIT_CPU, call after call).
	raiseHard bool

	// cgroup v2: base is the subtree; server is the leaf the host moved
	// itself into ("" when it did not have to).
	v2base, v2server string
	v2memory         bool
	v2pids           bool
	// cgroup v1: one hierarchy per controller used.
	v1 []*hierarchy
	// v1track, under cgroup v1, is a subtree of the host's cgroup in the
	// cgroup v2 hierarchy mounted beside the v1 ones (the "hybrid" layout
	// of systemd: /sys/fs/cgroup/unified), without controllers: each group
	// has a cgroup there too, which its tree is forked into, whose
	// cgroup.events says (and notifies) when the tree is empty and whose
	// cgroup.kill kills it, forks in flight included. "" when there is no
	// such hierarchy: then the v1 memory cgroup's process list does both,
	// polled.
	v1track string

	seq    atomic.Uint64
	mu     sync.Mutex
	closed bool
	// ino is the inotify instance watching every group's event files, read
	// by one goroutine that closes inoDone when Close closes ino; watched
	// maps its watch descriptors to groups. All made at the first watch.
	ino     *os.File
	inoDone chan struct{}
	watched map[int]*Group
	// parked holds closed groups' cgroups kept for reuse, by their limits;
	// nparked counts them (at most maxParked).
	parked  map[Limits][]*parked
	nparked int
}

// hierarchy is one cgroup v1 hierarchy the controller uses.
type hierarchy struct {
	controller string // memory, pids or cpuacct
	self       string // the host's own cgroup in it
	base       string // the controller's subtree: self/NAME
}

// instanceName matches the subtrees (and socket directories) that host
// instances make: agentcore-PIDNS-PID-START, ".N" added by a second one in
// the same process.
var instanceName = regexp.MustCompile(`^agentcore-([0-9]+)-([0-9]+)-([0-9]+)(?:\.[0-9]+)?$`)

// New sets up the mechanism. With Auto it tries cgroup v2, then cgroup v1,
// then rlimits, and never fails; Controller.String says what it chose and
// why the better ones could not be used.
func New(opts Options) (*Controller, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Proc == "" {
		opts.Proc = "/proc"
	}
	mech := opts.Mechanism
	if mech == "" {
		mech = Auto
	}
	c := &Controller{log: opts.Logger, proc: opts.Proc, pid: os.Getpid(), raiseHard: CanRaiseHardRlimits()}
	c.name = Self(opts.Proc).String()
	switch mech {
	case Off:
		c.mech, c.why = Off, "resource limits are turned off"
		return c, nil
	case Rlimit:
		c.mech, c.why = Rlimit, "rlimits as asked"
		return c, nil
	}
	cgroups, cerr := os.ReadFile(filepath.Join(opts.Proc, "self", "cgroup"))
	mountinfo, merr := os.ReadFile(filepath.Join(opts.Proc, "self", "mountinfo"))
	if err := errors.Join(cerr, merr); err != nil {
		if mech != Auto {
			return nil, fmt.Errorf("limits: %s: %w", mech, err)
		}
		c.mech, c.why = Rlimit, "no cgroups: "+err.Error()
		return c, nil
	}
	lines, mounts := parseProcCgroup(cgroups), parseMountinfo(mountinfo)
	var why []string
	if mech == Auto || mech == Cgroup2 {
		err := c.setupV2(lines, mounts, mech == Cgroup2)
		if err == nil {
			c.mech = Cgroup2
			c.why = "cgroup v2 subtree " + c.v2base
			return c, nil
		}
		if mech == Cgroup2 {
			return nil, fmt.Errorf("limits: cgroup v2: %w", err)
		}
		why = append(why, "cgroup v2: "+err.Error())
	}
	if mech == Auto || mech == Cgroup1 {
		err := c.setupV1(lines, mounts)
		if err == nil {
			c.mech = Cgroup1
			var ctrls []string
			for _, h := range c.v1 {
				ctrls = append(ctrls, h.controller)
			}
			c.why = "cgroup v1 (" + strings.Join(ctrls, ", ") + ") under " + c.v1[0].base
			if !opts.noTrack {
				c.setupTrack(lines, mounts)
			}
			if c.v1track != "" {
				c.why += ", each tree tracked in cgroup v2 under " + c.v1track
			}
			if len(why) > 0 {
				c.why += "; " + strings.Join(why, "; ")
			}
			return c, nil
		}
		if mech == Cgroup1 {
			return nil, fmt.Errorf("limits: cgroup v1: %w", err)
		}
		why = append(why, "cgroup v1: "+err.Error())
	}
	c.mech = Rlimit
	c.why = "no usable cgroup (" + strings.Join(why, "; ") + ")"
	return c, nil
}

// Mechanism returns the mechanism in force.
func (c *Controller) Mechanism() Mechanism { return c.mech }

// String says which mechanism is in force, where, and what it enforces.
func (c *Controller) String() string {
	return fmt.Sprintf("%s: %s; enforces %s", c.mech, c.why, c.enforcedText())
}

func (c *Controller) enforcedText() string {
	var kinds []string
	for _, k := range []struct {
		kind Kind
		name string
	}{{Memory, "memory"}, {Processes, "processes"}, {CPUTime, "CPU time"}, {OpenFiles, "open files"}} {
		if c.Supports(k.kind) {
			kinds = append(kinds, k.name)
		}
	}
	if len(kinds) == 0 {
		return "nothing"
	}
	return strings.Join(kinds, ", ")
}

// Supports reports whether the mechanism enforces limits of kind k.
func (c *Controller) Supports(k Kind) bool {
	switch c.mech {
	case Cgroup2:
		switch k {
		case Memory:
			return c.v2memory
		case Processes:
			return c.v2pids
		}
		return true
	case Cgroup1:
		switch k {
		case Memory:
			return c.v1hier("memory") != nil
		case Processes:
			return c.v1hier("pids") != nil
		}
		return true
	case Rlimit:
		return k != Processes
	}
	return false
}

// Enforced returns l without the limits the mechanism cannot enforce.
func (c *Controller) Enforced(l Limits) Limits {
	if !c.Supports(Memory) {
		l.Memory = 0
	}
	if !c.Supports(Processes) {
		l.Processes = 0
	}
	if !c.Supports(CPUTime) {
		l.CPUTime = 0
	}
	if !c.Supports(OpenFiles) {
		l.OpenFiles = 0
	}
	return l
}

func (c *Controller) v1hier(ctrl string) *hierarchy {
	for _, h := range c.v1 {
		if h.controller == ctrl {
			return h
		}
	}
	return nil
}

// v2Dir returns the directory of the host's cgroup v2 cgroup (the line of
// /proc/self/cgroup without controllers) in a mounted cgroup2 hierarchy.
func v2Dir(lines []cgroupLine, mounts []mount) (string, error) {
	var path string
	found := false
	for _, l := range lines {
		if len(l.controllers) == 0 {
			path, found = l.path, true
		}
	}
	if !found {
		return "", errors.New("this process has no cgroup v2 cgroup")
	}
	for _, m := range mounts {
		if m.v2 {
			if d, ok := m.dirOf(path); ok {
				return d, nil
			}
		}
	}
	return "", errors.New("cgroup2 is not mounted")
}

// setupV2 makes the subtree in the host's cgroup v2 cgroup. Unless it is the
// root, that cgroup may not hold processes once its children have
// controllers, so the host moves itself into a leaf of its subtree first.
// With require, a hierarchy without the memory controller is still used.
func (c *Controller) setupV2(lines []cgroupLine, mounts []mount, require bool) error {
	cur, err := v2Dir(lines, mounts)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(cur, "cgroup.controllers"))
	if err != nil {
		return err
	}
	ctrls := strings.Fields(string(b))
	c.v2memory, c.v2pids = has(ctrls, "memory"), has(ctrls, "pids")
	if !c.v2memory && !require {
		return fmt.Errorf("%s has no memory controller (it has: %s)", cur, strings.Join(ctrls, " "))
	}
	var enable []string
	if c.v2memory {
		enable = append(enable, "+memory")
	}
	if c.v2pids {
		enable = append(enable, "+pids")
	}
	c.removeStale(cur, true)
	base, err := c.mkdirUnique(cur)
	if err != nil {
		return err
	}
	undo := func(err error) error {
		if c.v2server != "" {
			_ = writeFile(filepath.Join(cur, "cgroup.procs"), strconv.Itoa(c.pid))
			_ = os.Remove(c.v2server)
			c.v2server = ""
		}
		_ = os.Remove(base)
		return err
	}
	// The root cgroup has no cgroup.type and may hold processes beside
	// children with controllers; any other may not.
	if _, err := os.Stat(filepath.Join(cur, "cgroup.type")); err == nil {
		server := filepath.Join(base, "server")
		if err := os.Mkdir(server, 0o755); err != nil {
			return undo(err)
		}
		if err := writeFile(filepath.Join(server, "cgroup.procs"), strconv.Itoa(c.pid)); err != nil {
			_ = os.Remove(server)
			return undo(fmt.Errorf("moving agent-server into a leaf of its cgroup: %w", err))
		}
		c.v2server = server
	}
	if len(enable) > 0 {
		if err := writeFile(filepath.Join(cur, "cgroup.subtree_control"), strings.Join(enable, " ")); err != nil {
			return undo(fmt.Errorf("enabling %s in %s (other processes in agent-server's cgroup? it needs one of its own, e.g. systemd's Delegate=yes): %w",
				strings.Join(enable, " "), cur, err))
		}
		if err := writeFile(filepath.Join(base, "cgroup.subtree_control"), strings.Join(enable, " ")); err != nil {
			return undo(err)
		}
	}
	c.v2base = base
	return nil
}

// setupV1 makes the subtree in each v1 hierarchy used: memory (required),
// pids and cpuacct when mounted.
func (c *Controller) setupV1(lines []cgroupLine, mounts []mount) error {
	for _, ctrl := range []string{"memory", "pids", "cpuacct"} {
		var path string
		found := false
		for _, l := range lines {
			if has(l.controllers, ctrl) {
				path, found = l.path, true
			}
		}
		if !found {
			if ctrl == "memory" {
				return errors.New("no memory controller")
			}
			continue
		}
		var self string
		for _, m := range mounts {
			if !m.v2 && has(m.controllers, ctrl) {
				if d, ok := m.dirOf(path); ok {
					self = d
					break
				}
			}
		}
		if self == "" {
			if ctrl == "memory" {
				return errors.New("the memory controller is not mounted")
			}
			continue
		}
		c.removeStale(self, false)
		var base string
		var err error
		if ctrl == "memory" {
			base, err = c.mkdirUnique(self)
		} else {
			base = filepath.Join(self, c.name)
			err = os.Mkdir(base, 0o755)
		}
		if err != nil {
			if ctrl == "memory" {
				c.closeV1()
				return err
			}
			c.log.Debug("cgroup v1 controller not usable", "controller", ctrl, "error", err)
			continue
		}
		c.v1 = append(c.v1, &hierarchy{controller: ctrl, self: self, base: base})
	}
	return nil
}

// setupTrack makes v1track in the host's cgroup v2 cgroup, when a cgroup
// v2 hierarchy is mounted beside the v1 ones and the host may write there
// (Linux 5.14 or later: cgroup.kill). Without one it leaves v1track empty.
func (c *Controller) setupTrack(lines []cgroupLine, mounts []mount) {
	cur, err := v2Dir(lines, mounts)
	if err != nil {
		return
	}
	c.removeStale(cur, true)
	base := filepath.Join(cur, c.name)
	if err := os.Mkdir(base, 0o755); err != nil {
		c.log.Debug("no cgroup v2 tracking of the v1 groups", "dir", cur, "error", err)
		return
	}
	if _, err := os.Stat(filepath.Join(base, "cgroup.kill")); err != nil {
		_ = os.Remove(base)
		c.log.Debug("no cgroup v2 tracking of the v1 groups: no cgroup.kill (Linux < 5.14)", "dir", cur)
		return
	}
	c.v1track = base
}

// mkdirUnique makes the subtree's directory in parent, named c.name, or
// c.name.N when this process has another controller there, and makes that
// the controller's name.
func (c *Controller) mkdirUnique(parent string) (string, error) {
	name := c.name
	for i := 1; ; i++ {
		dir := filepath.Join(parent, name)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			c.name = name
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 100 {
			return "", err
		}
		name = c.name + "." + strconv.Itoa(i)
	}
}

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

// NewGroup makes a group with limits l (those the mechanism cannot enforce
// are left out). With a cgroup mechanism it is a cgroup of its own: new,
// or one that a closed group with the same limits left (see parked).
func (c *Controller) NewGroup(l Limits) (*Group, error) {
	l = c.Enforced(l)
	fresh := func() *Group {
		return &Group{c: c, limits: l, cgfd: -1, oomFd: -1, pidsFd: -1, changed: make(chan struct{}, 1)}
	}
	g := fresh()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, errors.New("limits: controller is closed")
	}
	if p := c.unpark(l); p != nil {
		err := g.adopt(p)
		if err == nil {
			return g, nil
		}
		c.log.Debug("kept cgroups could not be reused; making new ones", "dir", p.dir, "error", err)
		if rerr := c.release(p); rerr != nil {
			c.log.Debug("could not remove kept cgroups", "dir", p.dir, "error", rerr)
		}
		g = fresh()
	}
	name := "p" + strconv.FormatUint(c.seq.Add(1), 10)
	var err error
	switch c.mech {
	case Cgroup2:
		err = g.initV2(filepath.Join(c.v2base, name))
	case Cgroup1:
		err = g.initV1(name)
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// Close removes the controller's subtree; its groups must be closed first.
// With cgroup v2, the leaf holding the host stays until the host exits (the
// next instance removes it).
func (c *Controller) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	ino, done := c.ino, c.inoDone
	c.mu.Unlock()
	perr := c.releaseParked()
	if ino != nil {
		ino.Close()
		<-done
	}
	switch c.mech {
	case Cgroup1:
		return errors.Join(perr, c.closeV1())
	case Cgroup2:
		if c.v2server == "" {
			return errors.Join(perr, os.Remove(c.v2base))
		}
	}
	return perr
}

func (c *Controller) closeV1() error {
	var errs []error
	for _, h := range c.v1 {
		if err := os.Remove(h.base); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if c.v1track != "" {
		if err := os.Remove(c.v1track); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	c.v1 = nil
	return errors.Join(errs...)
}
