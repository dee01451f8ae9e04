package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentcore/agentcore/pkg/mcp"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	sdktool "github.com/agentcore/agentcore/sdk/tool"
)

// runMCPServe implements the hidden `toolhost mcp-serve FILE`: it serves the
// MCP server declared in FILE as a tool plugin, for a host that found FILE
// in a scan (see mcp.Kind). It returns only on an error.
func runMCPServe(_ context.Context, e env, args []string) int {
	if len(args) != 1 {
		return fail(e, fmt.Errorf("%w: %s needs one FILE", errUsage, mcp.ServeSubcommand))
	}
	if os.Getenv(pluginv1.MagicCookieKey) != pluginv1.MagicCookieValue {
		fmt.Fprintf(e.stderr, "toolhost %s serves an MCP server definition to a tool host, which starts it.\n"+
			"To try the server, run: toolhost list %s\n", mcp.ServeSubcommand, args[0])
		return exitError
	}
	def, err := mcp.ReadDefinition(args[0])
	if err != nil {
		return fail(e, err)
	}
	bridge, err := mcp.NewBridge(def)
	if err != nil {
		return fail(e, err)
	}
	// A plugin takes signals as sdk/tool's plugins do, not as the command
	// line (main) does: sdk/tool turns SIGTERM, its parent-death signal,
	// into a kill of the process group.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	// Serves until the host kills the process group, which takes a stdio
	// server with it: there is no Close to run.
	sdktool.ServeService(mcp.NewService(bridge))
	return exitOK
}
