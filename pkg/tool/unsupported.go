//go:build !linux

package tool

// The host relies on Linux: process groups with a parent-death signal,
// waitid(WNOWAIT) to kill a group before reaping its leader, pipe2.
var _ = thisPackageRequiresLinux
