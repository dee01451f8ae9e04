package mcp

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a stdio server die when the process that started it
// does, even by SIGKILL. The server stays in its parent's process group, so a
// kill of the plugin's group takes it too.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
