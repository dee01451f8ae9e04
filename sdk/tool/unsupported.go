//go:build !linux

package tool

// Plugins rely on Linux: dup3 of the standard descriptors into pipes read
// by the plugin, parent-death signals, /proc to find a command's children.
var _ = thisPackageRequiresLinux
