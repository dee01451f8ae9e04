//go:build !linux

package mcp

import "os/exec"

// dieWithParent has no parent-death signal to set outside Linux: the server
// stays in its parent's process group, so a kill of the plugin's group takes it.
func dieWithParent(*exec.Cmd) {}
