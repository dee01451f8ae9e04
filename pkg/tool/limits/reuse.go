package limits

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// maxParked bounds how many closed groups' cgroups a controller keeps for
// reuse; past it, Close removes them.
const maxParked = 16

// parked is a closed group's cgroups, kept by its controller for the next
// group with the same limits: the directories, the descriptors open on
// them and their watches. Reusing them saves making and removing a cgroup
// in each hierarchy per process (under cgroup v1 about 0.4 ms of kernel
// work to make a group and 0.25 ms to remove it, here), and leaves no dying
// memory cgroup for the kernel to free. Only a group whose tree died
// without a breach is kept, so its counters (OOM kills, refused forks) are
// still zero for the next tree; its CPU account is not, and the next group
// counts from where it stands (cpuBase).
type parked struct {
	limits                      Limits
	dir, v2dir, pidsDir, cpuDir string
	dirs                        []string
	cgfd, pidsFd                int
	events, killer              *os.File
	wds                         []int
}

// park keeps p for reuse, or releases it when the controller is closed or
// keeps maxParked already.
func (c *Controller) park(p *parked) error {
	c.mu.Lock()
	if !c.closed && c.nparked < maxParked {
		if c.parked == nil {
			c.parked = map[Limits][]*parked{}
		}
		c.parked[p.limits] = append(c.parked[p.limits], p)
		c.nparked++
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	return c.release(p)
}

// unpark takes kept cgroups with limits l, or returns nil.
func (c *Controller) unpark(l Limits) *parked {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.parked[l]
	if len(list) == 0 {
		return nil
	}
	p := list[len(list)-1]
	c.parked[l] = list[:len(list)-1]
	c.nparked--
	return p
}

// releaseParked releases every kept group's cgroups (at Close).
func (c *Controller) releaseParked() error {
	c.mu.Lock()
	all := c.parked
	c.parked, c.nparked = nil, 0
	c.mu.Unlock()
	var errs []error
	for _, list := range all {
		for _, p := range list {
			errs = append(errs, c.release(p))
		}
	}
	return errors.Join(errs...)
}

// release closes p's descriptors, drops its watches and removes its
// directories.
func (c *Controller) release(p *parked) error {
	c.mu.Lock()
	if c.ino != nil {
		for _, wd := range p.wds {
			_, _ = unix.InotifyRmWatch(int(c.ino.Fd()), uint32(wd))
		}
	}
	c.mu.Unlock()
	if p.pidsFd >= 0 {
		unix.Close(p.pidsFd)
	}
	g := &Group{c: c, cgfd: p.cgfd, events: p.events, killer: p.killer, dirs: p.dirs}
	return g.remove()
}

// adopt makes g, a new group, the owner of p's cgroups: their watches
// wake g from now on, a new OOM notification (cgroup v1) is g's own, and
// g's CPU account starts from the cgroup's.
func (g *Group) adopt(p *parked) error {
	g.dir, g.v2dir, g.pidsDir, g.cpuDir, g.dirs = p.dir, p.v2dir, p.pidsDir, p.cpuDir, p.dirs
	g.cgfd, g.pidsFd, g.events, g.killer, g.wds = p.cgfd, p.pidsFd, p.events, p.killer, p.wds
	g.c.claimWatches(g.wds, g)
	if d, ok, err := g.cgroupCPU(); ok && err == nil {
		g.cpuBase = d
	}
	if g.c.mech == Cgroup1 {
		return g.notifyOOM()
	}
	return nil
}

// parkWatches keeps a closing group's watches in the inotify instance
// but stops their events reaching it: until another group claims them,
// they are dropped.
func (c *Controller) parkWatches(wds []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, wd := range wds {
		delete(c.watched, wd)
	}
}

// claimWatches sends the events of parked watches to g.
func (c *Controller) claimWatches(wds []int, g *Group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watched == nil {
		return
	}
	for _, wd := range wds {
		c.watched[wd] = g
	}
}
