package limits

import (
	"errors"

	"golang.org/x/sys/unix"
)

// prlimits sets the rlimits of pid that differ from old (those it has):
// open files always, memory (as RLIMIT_DATA) under the rlimit mechanism.
//
// Memory is RLIMIT_DATA, not RLIMIT_AS. Both count address space, not
// memory in use, but RLIMIT_AS counts every mapping, reservations the
// program never touches included, and runtimes reserve a lot at start: a
// trivial Go program maps 1.2 GiB (VmSize; its heap arena index, page
// summaries and arena hints) and will not start under 1 GiB of RLIMIT_AS
// ("failed to reserve page summary memory"); glibc gives each thread of a
// Python or C program a 64 MiB malloc arena; a JVM reserves its whole heap.
// An RLIMIT_AS low enough to bound a tool would stop most of them starting.
// RLIMIT_DATA (Linux 4.7 and later) counts only private writable mappings:
// the heap, anonymous mmaps, writable data. The same Go program has 40 MiB
// of it, and a gRPC plugin starts from about 128 MiB (below, Go fails
// allocating its heap arena map). It still counts what is mapped rather
// than touched, so it is an upper bound the tool reaches a little early;
// a cgroup counts the pages themselves.
// A limit is lifted or raised only where the kernel lets this process do
// it (raising a hard limit takes CAP_SYS_RESOURCE): else ErrRegroup, as
// lifting open files always is (a new process gets the host's own).
func (g *Group) prlimits(pid int, l, old Limits) error {
	set := func(res int, v, had uint64) error {
		err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: v, Max: v}, nil)
		if errors.Is(err, unix.EPERM) && (had != 0 && v > had) {
			return ErrRegroup
		}
		return err
	}
	if l.OpenFiles != old.OpenFiles {
		if l.OpenFiles == 0 {
			return ErrRegroup
		}
		if err := set(unix.RLIMIT_NOFILE, uint64(l.OpenFiles), uint64(old.OpenFiles)); err != nil {
			return err
		}
	}
	if g.c.mech == Rlimit && l.Memory != old.Memory {
		v, had := uint64(unix.RLIM_INFINITY), old.Memory
		if l.Memory > 0 {
			v = l.Memory
		}
		if err := set(unix.RLIMIT_DATA, v, had); err != nil {
			return err
		}
	}
	return nil
}

// CanRaiseHardRlimits reports whether this process has CAP_SYS_RESOURCE in
// its effective set, which raising a hard rlimit takes, and setting any
// rlimit of another user's process.
func CanRaiseHardRlimits() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	const c = unix.CAP_SYS_RESOURCE
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0
}
