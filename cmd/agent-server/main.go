// Command agent-server runs agentcore's gRPC AgentService: agents that loop
// "ask the model, run the tools it asked for, ask again" until the task is
// done, with every tool in its own plugin process.
//
// Every setting is a flag, an environment variable and a config file key:
// run `agent-server -help` for the list, `agent-server -version` for the
// version. Tracing follows the standard OTEL_* environment variables. SIGTERM or SIGINT stops it
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

	"go.opentelemetry.io/otel"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/server"
	"github.com/agentcore/agentcore/pkg/telemetry"
)

func main() {
	os.Exit(run())
}

func run() int {
	cfg, err := config.Load(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent-server:", err)
		return 2
	}
	if cfg.Version {
		fmt.Println(telemetry.VersionLine("agent-server"))
		return 0
	}
	// Span export failures reach the server's log, in its format.
	otel.SetErrorHandler(telemetry.ErrorHandler(cfg.Logger("agent-server", os.Stderr).Named("otel")))
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
