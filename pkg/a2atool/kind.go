package a2atool

import (
	"fmt"
	"io/fs"
	"os/exec"
	"time"

	"github.com/agentcore/agentcore/pkg/tool"
)

// ServeSubcommand is the toolhost subcommand that serves one definition
// file as a plugin: `toolhost a2a-serve FILE`.
const ServeSubcommand = "a2a-serve"

// Bounds of a plugin's own work around a call.
const (
	// describeMargin is added to the discovery timeout to bound the host's
	// Describe, so that the plugin's own error arrives first.
	describeMargin = 5 * time.Second
	// CancelTimeout bounds the tasks/cancel a cancelled call sends; the
	// host waits a little longer (Command.StopGrace) before it kills the
	// plugin's process group.
	CancelTimeout = 5 * time.Second
)

// Kind is the tool source kind of remote A2A agent definitions for a
// tool.Host: a scan turns each regular file NAME.a2a.json into a plugin
// process, `toolhost a2a-serve FILE`, offering the tool NAME; toolhost is
// the path of the toolhost executable, or a name looked up in PATH. The
// file is read and checked when it is found (a bad one fails the scan with
// its path and the cause); an agent whose card cannot be read fails the
// scan at Describe. The tools' Source is "a2a:" and the file's path; a
// rescan restarts the plugin when the file has changed. A cancelled call's
// plugin gets the time to cancel the remote task before it is killed.
func Kind(toolhost string) tool.Kind {
	return tool.Kind{
		Name: "a2a agent definition",
		Match: func(path string, info fs.FileInfo) bool {
			_, ok := DefinitionName(path)
			return ok && info.Mode().IsRegular()
		},
		Command: func(path string) (tool.Command, error) {
			def, err := ReadDefinition(path)
			if err != nil {
				return tool.Command{}, err
			}
			exe, err := exec.LookPath(toolhost)
			if err != nil {
				return tool.Command{}, fmt.Errorf("a2a definition %s: finding toolhost, which serves it: %w", def.Path, err)
			}
			return tool.Command{
				Path:            exe,
				Args:            []string{ServeSubcommand, def.Path},
				Source:          "a2a:" + def.Path,
				Files:           []string{def.Path},
				DescribeTimeout: def.discoveryTimeout() + describeMargin,
				StopGrace:       CancelTimeout + time.Second,
			}, nil
		},
	}
}
