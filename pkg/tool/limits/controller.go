package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
