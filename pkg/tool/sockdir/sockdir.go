// Package sockdir holds the directories plugin sockets are made in: one
// per host instance, with a marker that lets a later instance remove the
// directories of instances that are gone.
package sockdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

// Default is the first directory on a memory file system the host may
// write to among the temporary directory, $XDG_RUNTIME_DIR and /dev/shm,
// else the temporary directory. On a disk file system each plugin start
// pays for a directory and a socket inode.
func Default() string {
	for _, dir := range []string{os.TempDir(), os.Getenv("XDG_RUNTIME_DIR"), "/dev/shm"} {
		var fs unix.Statfs_t
		if dir != "" && unix.Statfs(dir, &fs) == nil && fs.Type == unix.TMPFS_MAGIC && unix.Access(dir, unix.W_OK|unix.X_OK) == nil {
			return dir
		}
	}
	return os.TempDir()
}

// socketMarker is the file that proves an instance's socket directory was
// made by a host: it holds the boot id of the machine it was made on.
const socketMarker = ".agentcore-host"

// A unix socket's path has at most 107 bytes; go-plugin puts a plugin's
// socket at DIR/plugin-dirNNNNNNNNNN/pluginNNNNNNNNNN.
const (
	maxSocketPath = 108
	socketSuffix  = "/plugin-dir0123456789/plugin0123456789"
)

// Make makes a host's socket directory in base, named for the
// instance (agentcore-PID-START, ".N" added for a second host in the same
// process) with a marker, after removing the directories of instances
// that are gone. When it cannot, it logs why and returns base.
func Make(base string, log hclog.Logger) string {
	RemoveStale(base, log)
	name := limits.Self("").String()
	for i := 0; ; i++ {
		n := name
		if i > 0 {
			n += "." + strconv.Itoa(i)
		}
		dir := filepath.Join(base, n)
		if len(dir)+len(socketSuffix) >= maxSocketPath {
			log.Warn("the plugin socket directory's path is too long for an instance directory in it; using it as it is", "dir", base)
			return base
		}
		err := os.Mkdir(dir, 0o700)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err == nil {
			// Others may pass through (a plugin run as another user reaches
			// its own socket directory inside) but not list it.
			err = os.Chmod(dir, 0o711)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, socketMarker), []byte(bootID()+"\n"), 0o600)
		}
		if err != nil {
			log.Warn("could not make this instance's plugin socket directory; using the base directory", "dir", base, "error", err)
			return base
		}
		return dir
	}
}

// RemoveStale removes the socket directories of host instances
// that are gone from base: only directories it can prove a host made (the
// instance name, owned by this user, with the marker inside) whose process
// no longer runs, or that were made before the machine last booted.
func RemoveStale(base string, log hclog.Logger) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	boot := bootID()
	for _, e := range entries {
		inst, ok := limits.ParseInstance(e.Name())
		if !ok {
			continue
		}
		dir := filepath.Join(base, e.Name())
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		marker := filepath.Join(dir, socketMarker)
		if mi, err := os.Lstat(marker); err != nil || !mi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(marker)
		if err != nil {
			continue
		}
		sameBoot := strings.TrimSpace(string(b)) == boot
		if sameBoot && !inst.Gone("") {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("could not remove the socket directory of a dead agent-server instance", "dir", dir, "error", err)
			continue
		}
		log.Info("removed the socket directory of a dead agent-server instance", "dir", dir)
	}
}

// bootID returns the machine's boot id, which changes at every boot.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
