package tool

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A tool directory is often a project folder too: a Node.js tool's
// node_modules, a Python tool's virtual environment and caches, a git
// checkout. Their executables are libraries' scripts and interpreters, not
// plugins, so a scan skips those folders, and executable files that are
// neither a native program nor a script with a #! line (a .js file whose
// mode says executable, a data file copied with its mode). Each skip is
// logged at DEBUG.

// skippedFolder says why a scan skips the folder at path named name, or ""
// when it is walked.
func skippedFolder(path, name string) string {
	switch {
	case strings.HasPrefix(name, "."):
		return "a hidden folder (.git, .venv…)"
	case name == "node_modules":
		return "Node.js packages"
	case name == "__pycache__":
		return "Python's byte-code cache"
	}
	if _, err := os.Stat(filepath.Join(path, "pyvenv.cfg")); err == nil {
		return "a Python virtual environment"
	}
	return ""
}

// programMagics start the executables a scan takes: ELF (Linux), Mach-O
// (macOS: 32 and 64 bits, either byte order, and universal) and scripts.
var programMagics = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf}, {0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("#!"),
}

// notAProgram says why an executable file is not a program a scan starts
// (neither a native executable nor a script with a #! line), or "" when it
// is one, or cannot be read: then starting it says what is wrong.
func notAProgram(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	for _, m := range programMagics {
		if bytes.HasPrefix(head, m) {
			return ""
		}
	}
	return "executable, but neither a native program nor a script with a #! line"
}

// shadow finds the tools of sets (one per scanned path, in order) that a
// later set replaces by name: each is logged at WARN, naming the plugin
// that wins and the one shadowed, and the plugins whose every tool is
// shadowed are stopped and forgotten, so that no process of theirs is kept
// running or started again. (Describe had to start them once: a plugin's
// tools are known only from it.)
func (h *Host) shadow(sets []*Set) {
	winner := map[string]*entry{}
	for _, s := range sets {
		for n, e := range s.tools {
			winner[n] = e
		}
	}
	live := map[*pool]bool{}
	for _, e := range winner {
		if e.pool != nil {
			live[e.pool] = true
		}
	}
	shadowed := map[*pool]bool{}
	for _, s := range sets {
		for _, n := range s.names {
			e, w := s.tools[n], winner[n]
			if e == w || e.pool != nil && e.pool == w.pool {
				continue // the winner itself, or the same plugin scanned twice
			}
			h.log.Warn("tool shadowed: a later tool path offers a tool of the same name", "tool", n,
				"wins", w.spec.Source, "shadowed", e.spec.Source)
			if e.pool != nil && !live[e.pool] {
				shadowed[e.pool] = true
			}
		}
	}
	for pl := range shadowed {
		h.log.Info("stopping a plugin whose every tool is shadowed", "plugin", pl.cmd.source())
		h.drop(pl)
	}
}

// drop retires a pool and forgets it: a later scan makes a new one.
func (h *Host) drop(pl *pool) {
	h.mu.Lock()
	if key := pl.cmd.key(); h.pools[key] == pl {
		delete(h.pools, key)
	}
	h.mu.Unlock()
	pl.retire()
}
