// Package faults holds agent-server's test-only fault hooks: environment
// variables that make it crash (SIGKILL itself) at precise points, for the
// crash tests (tests/crash_test.go). An operator never sets them.
package faults

import (
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Hooks are the fault hooks as read at start; the zero value does nothing.
type Hooks struct {
	// killBeforeStepWrite is the chance (0 to 1) that the process kills
	// itself just before it writes the end of a step: between a step's end
	// and its journal write. AGENTCORE_TEST_KILL_BEFORE_STEP_WRITE.
	killBeforeStepWrite float64
	// killOnTool names a tool whose every call kills the process a moment
	// after it starts: a run calling it crashes its server at each attempt.
	// AGENTCORE_TEST_KILL_ON_TOOL.
	killOnTool string
}

// From reads the fault hooks from getenv.
func From(getenv func(string) string) Hooks {
	h := Hooks{killOnTool: getenv("AGENTCORE_TEST_KILL_ON_TOOL")}
	if p, err := strconv.ParseFloat(getenv("AGENTCORE_TEST_KILL_BEFORE_STEP_WRITE"), 64); err == nil {
		h.killBeforeStepWrite = p
	}
	return h
}

// BeforeStepWrite kills the process, with the hook's chance, before the
// write of a step's end.
func (h Hooks) BeforeStepWrite() {
	if p := h.killBeforeStepWrite; p > 0 && rand.Float64() < p {
		kill()
	}
}

// killOnToolAfter is how long a call of the killOnTool tool runs before it
// crashes the server: its events are stored by then.
const killOnToolAfter = 50 * time.Millisecond

// ToolCalled kills the process a moment after a call of the hook's tool
// started.
func (h Hooks) ToolCalled(tool string) {
	if h.killOnTool != "" && tool == h.killOnTool {
		time.AfterFunc(killOnToolAfter, kill)
	}
}

// kill ends the process at once, as a crash would.
func kill() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
