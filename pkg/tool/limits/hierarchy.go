package limits

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hierarchy is one cgroup v1 hierarchy the controller uses.
type hierarchy struct {
	controller string // memory, pids or cpuacct
	self       string // the host's own cgroup in it
	base       string // the controller's subtree: self/NAME
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
