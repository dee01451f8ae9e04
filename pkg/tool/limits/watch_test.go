package limits

import (
	"testing"
)

// TestHostWritten: the events of the files the host writes are dropped,
// those of the files the kernel changes (the tree's counters, its
// populated state) are not.
func TestHostWritten(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"tasks", true}, {"cgroup.procs", true}, {"cgroup.kill", true}, {"cgroup.event_control", true},
		{"memory.max", true}, {"memory.swap.max", true}, {"memory.oom.group", true}, {"pids.max", true},
		{"memory.limit_in_bytes", true}, {"memory.memsw.limit_in_bytes", true},
		{"cgroup.events", false}, {"memory.events", false}, {"memory.events.local", false},
		{"pids.events", false}, {"memory.oom_control", false}, {"", false},
	} {
		if got := hostWritten(tc.file); got != tc.want {
			t.Errorf("hostWritten(%q) = %v, want %v", tc.file, got, tc.want)
		}
	}
}
