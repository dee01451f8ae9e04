// Command toolhost is the tool author's command line: it lists the tools in
// plugin directories and runs one call, showing its live output.
//
//	toolhost list [--json] [LIMITS] PATH...
//	toolhost call [--limit N] [LIMITS] PATH... TOOL JSON
//
// A PATH is a directory scanned for plugins (recursively), a plugin file or
// an MCP server definition (NAME.mcp.json, .yaml, .yml; see pkg/mcp); a
// scanned directory's definitions are found like its plugins. Tools run
// under the limits agent-server would give them: LIMITS are its -config
// and -tool-* flags, read with its AGENTCORE_CONFIG and AGENTCORE_TOOL_*
// variables as agent-server reads them (config.ToolFlags). toolhost is
// also the plugin that serves each definition to a host: the hidden
// `toolhost mcp-serve FILE` (hosts start it through mcp.Kind) and, for a
// remote A2A agent (NAME.a2a.json), `toolhost a2a-serve FILE` (a2atool.Kind).
// Like agent-server, toolhost is a child subreaper (pkg/reap): a killed
// tool's orphaned grandchildren are its to reap, at once, and those still
// running when it exits are killed.
// call prints the output chunks to stderr as they come, each line prefixed
// by its stream, and the result to stdout as one JSON object with "output"
// and, when they apply, "error" and "stop". It exits 0 on success, 1 when
// the result is an error (or the scan failed), 2 on a usage error. Ctrl-C
// kills the running tool.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/agentcore/agentcore/pkg/a2atool"
	"github.com/agentcore/agentcore/pkg/mcp"
	"github.com/agentcore/agentcore/pkg/reap"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `usage:
  toolhost list [--json] [LIMITS] PATH... list the tools found in PATHs
  toolhost call [--limit N] [LIMITS] PATH... TOOL JSON
                                          run one call of TOOL with input JSON

A PATH is a directory scanned recursively for plugins, MCP server
definitions (NAME.mcp.json, NAME.mcp.yaml) and remote A2A agents
(NAME.a2a.json), a plugin file or a definition.
Tools run under the limits agent-server gives them, from the same settings:
LIMITS are its flags -config FILE (its tool_limits keys and plugins section),
-tool-limits, -tool-memory, -tool-processes, -tool-cpu-time, -tool-open-files
and their -max caps; the AGENTCORE_CONFIG and AGENTCORE_TOOL_* variables
count too, below the flags.
Set AGENTCORE_LOG_LEVEL (trace, debug, info, warn, error) for host logs.
`

// errUsage marks errors in the command line.
var errUsage = errors.New("usage")

type env struct {
	stdout, stderr io.Writer
	log            hclog.Logger
	getenv         func(string) string
}

// subcommands maps a subcommand to its function. Subcommands missing from
// the usage text are hidden: they are for hosts, not people (e.g. serving
// one MCP server definition as a plugin).
var subcommands = map[string]func(ctx context.Context, e env, args []string) int{
	"list":                  runList,
	"call":                  runCall,
	mcp.ServeSubcommand:     runMCPServe,
	a2atool.ServeSubcommand: runA2AServe,
}

// The main goroutine keeps the process's first thread, where orphans land:
// it reaps them (see pkg/reap) while the command runs on another goroutine.
func init() { runtime.LockOSThread() }

func main() {
	// toolhost reaps the orphans of its tools' processes, as agent-server
	// does: a killed tool's grandchild is its zombie to reap at once, not
	// init's, so a cancelled call's tree is known dead without waiting on
	// init; orphans still running when it exits are killed.
	subreaper := reap.Subreaper()
	reaping, stopReaping := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		defer stopReaping()
		if subreaper != nil {
			fmt.Fprintln(os.Stderr, "toolhost: cannot become a child subreaper (orphaned tool processes go to init):", subreaper)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		code <- run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}()
	if err := reap.Run(reaping); err != nil {
		fmt.Fprintln(os.Stderr, "toolhost:", err)
		<-reaping.Done()
	}
	os.Exit(<-code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	level := hclog.LevelFromString(os.Getenv("AGENTCORE_LOG_LEVEL"))
	if level == hclog.NoLevel {
		level = hclog.Error
	}
	e := env{
		stdout: stdout,
		stderr: stderr,
		log:    hclog.New(&hclog.LoggerOptions{Name: "toolhost", Level: level, Output: stderr}),
		getenv: os.Getenv,
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	f, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolhost: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return f(ctx, e, args[1:])
}

// fail prints err and returns the exit code it calls for.
func fail(e env, err error) int {
	fmt.Fprintf(e.stderr, "toolhost: %v\n", err)
	if errors.Is(err, errUsage) {
		fmt.Fprintf(e.stderr, "\n%s", usage)
		return exitUsage
	}
	return exitError
}
