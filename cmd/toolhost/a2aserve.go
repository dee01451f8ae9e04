package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentcore/agentcore/pkg/a2atool"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	sdktool "github.com/agentcore/agentcore/sdk/tool"
)

// runA2AServe implements the hidden `toolhost a2a-serve FILE`: it serves
// the remote A2A agent declared in FILE as a tool plugin, for a host that
// found FILE in a scan (see a2atool.Kind). It returns only on an error.
func runA2AServe(_ context.Context, e env, args []string) int {
	if len(args) != 1 {
		return fail(e, fmt.Errorf("%w: %s needs one FILE", errUsage, a2atool.ServeSubcommand))
	}
	if os.Getenv(pluginv1.MagicCookieKey) != pluginv1.MagicCookieValue {
		fmt.Fprintf(e.stderr, "toolhost %s serves a remote A2A agent definition to a tool host, which starts it.\n"+
			"To try the agent, run: toolhost list %s\n", a2atool.ServeSubcommand, args[0])
		return exitError
	}
	def, err := a2atool.ReadDefinition(args[0])
	if err != nil {
		return fail(e, err)
	}
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	// A cancelled call has cancelled its remote task: the process exits,
	// so that the host, which kills it anyway, need not wait.
	sdktool.ServeService(a2atool.NewService(def, func() { os.Exit(0) }))
	return exitOK
}
