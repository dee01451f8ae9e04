// Command agent-server runs agentcore's gRPC AgentService: agents that loop
// "ask the model, run the tools it asked for, ask again" until the task is
// done, with every tool in its own plugin process.
//
// Every setting is a flag, an environment variable and a config file key:
// run `agent-server -help` for the list, `agent-server -version` for the
// version; `agent-server probe ADDR` is a health probe for Kubernetes (see
// probe.go). Tracing follows the standard OTEL_* environment variables.
// SIGTERM or SIGINT stops it
// gracefully: no new calls, running sends get the grace period, then every
// run is stopped, every plugin killed, and it exits 0. SIGHUP reads the
// tokens file again.
//
// Secrets stay out of what plugins can read: when an API key, the bearer
// token, the store's password or the OTLP exporter's headers come from the
// environment, or a password sits in the -store argument, agent-server
// re-executes itself (same pid) without those variables and without the
// password in its arguments, handing the values over through a pipe; it
// makes itself non-dumpable, so that its memory and /proc files are out of
// reach of processes of the same user. Plugins get an environment built
// without any of those variables.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"go.opentelemetry.io/otel"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/reap"
	"github.com/agentcore/agentcore/pkg/serve"
	"github.com/agentcore/agentcore/pkg/telemetry"
)

// The main goroutine keeps the process's first thread, where orphans land:
// it reaps them (see pkg/reap) while the server runs on other goroutines,
// and starts nothing itself.
func init() { runtime.LockOSThread() }

func main() {
	// agent-server reaps the orphans of its tools' processes (a grandchild
	// whose parent died), as a child subreaper, or as PID 1 in a container
	// without an init, so that none stays a zombie; those still running
	// when it exits are killed.
	subreaper := reap.Subreaper()
	ctx, stopReaping := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		defer stopReaping()
		if subreaper != nil {
			fmt.Fprintln(os.Stderr, "agent-server: cannot become a child subreaper (orphaned tool processes go to init):", subreaper)
		}
		code <- run()
	}()
	if err := reap.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "agent-server:", err)
		<-ctx.Done()
	}
	os.Exit(<-code)
}

func run() int {
	if len(os.Args) > 1 && os.Args[1] == "probe" {
		return runProbe(os.Args[2:], os.Stdout, os.Stderr)
	}
	// Before anything else: this process's memory is no one else's to read.
	if err := hideMemory(); err != nil {
		fmt.Fprintln(os.Stderr, "agent-server:", err)
		return 1
	}
	handed, err := receiveSecrets()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent-server:", err)
		return 1
	}
	getenv := func(name string) string {
		if v, ok := handed[name]; ok {
			return v
		}
		return os.Getenv(name)
	}
	// The arguments as given: the previous image took a password out of them.
	cfg, err := config.Load(config.RestoreArgs(os.Args[1:], handed), getenv, os.Stderr)
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
	if handed == nil {
		// Returns only when it could not re-execute, or had nothing to hide.
		clean, hidden := config.SecretArgs(os.Args[1:])
		if err := reexec(cfg.SecretEnv(), clean, hidden); err != nil {
			fmt.Fprintln(os.Stderr, "agent-server: keeping the secrets out of /proc/self/environ and cmdline:", err)
			return 1
		}
	}
	// Span export failures reach the server's log, in its format.
	otel.SetErrorHandler(telemetry.ErrorHandler(cfg.Logger("agent-server", os.Stderr).Named("otel")))
	// Plugins inherit Go's copy of the environment: keep the keys out of it too.
	for _, name := range cfg.SecretEnv() {
		os.Unsetenv(name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve.Run(ctx, cfg, os.Stderr, kinds(cfg.ProfileNames()), nil); err != nil {
		fmt.Fprintln(os.Stderr, "agent-server:", err)
		return 1
	}
	return 0
}
