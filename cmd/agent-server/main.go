// Command agent-server runs agentcore's gRPC AgentService: agents that loop
// "ask the model, run the tools it asked for, ask again" until the task is
// done, with every tool in its own plugin process.
//
// Every setting is a flag, an environment variable and a config file key:
// run `agent-server -help` for the table. SIGTERM or SIGINT stops it
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
	"runtime"
	"syscall"

	"github.com/agentcore/agentcore/pkg/config"
	"github.com/agentcore/agentcore/pkg/reap"
	"github.com/agentcore/agentcore/pkg/server"
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
