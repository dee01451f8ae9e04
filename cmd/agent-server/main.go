// Command agent-server runs agentcore's gRPC AgentService: agents that loop
// "ask the model, run the tools it asked for, ask again" until the task is
// done, with every tool in its own plugin process.
//
// Every setting is a flag, an environment variable and a config file key:
// run `agent-server -help` for the table. `agent-server probe ADDR` is a
// health probe for Kubernetes (see probe.go). SIGTERM or SIGINT stops it
// gracefully: no new calls, running sends get the grace period, then every
// run is stopped, every plugin killed, and it exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/server"
)

func main() {
	os.Exit(run())
}

func run() int {
	if len(os.Args) > 1 && os.Args[1] == "probe" {
		return runProbe(os.Args[2:], os.Stdout, os.Stderr)
	}
	cfg, err := config.Load(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent-server:", err)
		return 2
	}
	// Plugins inherit the environment: keep the keys out of it.
	for _, name := range cfg.SecretEnv() {
		os.Unsetenv(name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := server.Run(ctx, cfg, os.Stderr, kinds(), nil); err != nil {
		fmt.Fprintln(os.Stderr, "agent-server:", err)
		return 1
	}
	return 0
}
