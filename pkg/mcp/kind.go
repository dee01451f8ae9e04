package mcp

import (
	"fmt"
	"io/fs"
	"os/exec"
	"time"

	"github.com/agentcore/agentcore/pkg/tool"
)

// ServeSubcommand is the toolhost subcommand that serves one definition file
// as a plugin: `toolhost mcp-serve FILE`.
const ServeSubcommand = "mcp-serve"

// sourcePrefix begins the Source of a definition's tools, before its path.
const sourcePrefix = "mcp:"

// describeMargin is added to a definition's discovery timeout to bound the
// host's Describe, so that the plugin's own error (which names the file and
// says what timed out) arrives before the host gives up.
const describeMargin = 5 * time.Second

// Kind is the tool source kind of MCP server definitions for a tool.Host:
// a scan turns each regular file NAME.mcp.json, NAME.mcp.yaml or NAME.mcp.yml
// into a plugin process, `toolhost mcp-serve FILE`, that serves the server's
// tools; toolhost is the path of the toolhost executable, or a name looked
// up in PATH. The file is read
// and checked when it is found, so a bad one fails the scan at once with its
// path and the cause; a server that cannot be reached fails the scan at
// Describe, bounded by the definition's discovery timeout. The tools' Source
// is "mcp:" and the file's absolute path; a rescan restarts the plugin when
// the file has changed.
func Kind(toolhost string) tool.Kind { return KindWithProfiles(toolhost, nil) }

// KindWithProfiles is Kind for a host whose model profiles are profiles:
// a definition whose sampling block names another fails the scan.
func KindWithProfiles(toolhost string, profiles []string) tool.Kind {
	return tool.Kind{
		Name: "mcp server definition",
		Match: func(path string, info fs.FileInfo) bool {
			_, ok := DefinitionName(path)
			return ok && info.Mode().IsRegular()
		},
		Command: func(path string) (tool.Command, error) {
			def, err := ReadDefinition(path)
			if err != nil {
				return tool.Command{}, err
			}
			if err := def.checkProfile(profiles); err != nil {
				return tool.Command{}, err
			}
			exe, err := exec.LookPath(toolhost)
			if err != nil {
				return tool.Command{}, fmt.Errorf("mcp definition %s: finding toolhost, which serves it: %w", def.Path, err)
			}
			return tool.Command{
				Path:            exe,
				Args:            []string{ServeSubcommand, def.Path},
				Source:          sourcePrefix + def.Path,
				Files:           []string{def.Path},
				DescribeTimeout: def.discoveryTimeout() + describeMargin,
				// Discovery may need the server's credential from the host.
				DescribeOnSession: def.OAuth != nil,
			}, nil
		},
	}
}
