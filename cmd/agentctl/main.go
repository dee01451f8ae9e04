// Command agentctl is agentcore's command line client: it chats with an
// agent in a terminal, sends tasks, follows and answers runs, and reads
// agents, runs, histories and tools, over sdk/client.
//
//	agentctl [CONNECTION] COMMAND [ARGS] [FLAGS]
//
// The connection (address, token, TLS) comes from flags or AGENTCORE_*
// variables (see connection.go); the exit code says how the command ended
// (see exit.go). docs/clients/agentctl.md is its manual.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: agentctl [CONNECTION] COMMAND [ARGS] [FLAGS]

Chat and runs:
  chat AGENT [--ask TOOLS]            talk with an agent in this terminal (Ctrl-C stops
                                      a run, Ctrl-D quits); its history stays on the server
  send AGENT TASK... [--json] [--ask TOOLS] [--detach] [--busy POLICY]
                                      run a task (TASK "-": read it from stdin) and print
                                      its events as text, or as JSON lines with --json
  attach RUN [--after SEQ] [--json]   follow a run from the event after SEQ to its end
  approve RUN CALL                    allow a tool call waiting for permission
  deny RUN CALL [--reason TEXT]       refuse it; the reason is told to the model
  respond RUN ELICITATION (--accept JSON | --decline | --cancel) [--json]
                                      answer a tool's request for input (chat asks in place)
  stop AGENT [--run RUN]              stop the agent's running send

Reading and managing:
  agents [--json]                     list the agents
  create [AGENT] [--system TEXT] [--tools NAMES] [--profile NAME] [--model NAME]
  delete AGENT                        stop any run and forget the agent
  runs [--agent AGENT] [--state STATE] [--limit N] [--json]
                                      list runs, newest first
  run RUN [--json]                    one run: state, outcome, pending permissions
  history AGENT [--turns] [--labels zh|en] [--json]
                                      the agent's history as text
  tools [--json]                      the server's tools and skills
  exec TOOL JSON [--limit N] [--json] run one tool (JSON "-": read it from stdin)

CONNECTION (flags, here or after the command; else the variables):
  --addr ADDR          AGENTCORE_ADDR             host:port or unix:PATH (default 127.0.0.1:50051)
  --token-file FILE    AGENTCORE_AUTH_TOKEN_FILE  file holding the bearer token
                       AGENTCORE_AUTH_TOKEN       the bearer token itself
  --tls                                           TLS with the system's CA roots
  --tls-ca FILE        AGENTCORE_TLS_CA           CA of the server's certificate (implies TLS)
  --tls-cert FILE      AGENTCORE_TLS_CLIENT_CERT  client certificate, for mutual TLS
  --tls-key FILE       AGENTCORE_TLS_CLIENT_KEY   its private key
  --tls-server-name N  AGENTCORE_TLS_SERVER_NAME  name to verify the server's certificate against

TOOLS (--ask) is "all", "none" or names separated by commas: the tools whose
calls wait for a permission answer (chat asks for all by default, send for none).

Exit codes: 0 ok; 1 another failure (an exec'd tool's error, a server fault);
2 usage (or INVALID_ARGUMENT); 3 not found; 4 unauthenticated or permission
denied; 5 the run failed with a model error; 6 the run was stopped or
interrupted; 7 the server is unreachable or unavailable; 8 refused in this
state (exists, busy, a precondition, a limit); 130 interrupted by Ctrl-C.
`

// env is what a command works with: its streams, the environment and the
// interrupts (Ctrl-C) the process gets.
type env struct {
	stdin          *os.File
	stdout, stderr io.Writer
	getenv         func(string) string
	interrupts     <-chan os.Signal
	// conn is the connection as the flags before the command set it; a
	// command's own flags may change it.
	conn connFlags
}

// commands maps a command to its function.
var commands = map[string]func(ctx context.Context, e *env, args []string) int{
	"chat":    runChat,
	"send":    runSend,
	"attach":  runAttach,
	"approve": runApprove,
	"deny":    runDeny,
	"respond": runRespond,
	"stop":    runStop,
	"agents":  runAgents,
	"create":  runCreate,
	"delete":  runDelete,
	"runs":    runRuns,
	"run":     runRun,
	"history": runHistory,
	"tools":   runTools,
	"exec":    runExec,
}

func main() {
	// SIGTERM and SIGHUP end the command; SIGINT (Ctrl-C) is each
	// command's to handle: a chat stops its run, others end.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	code := run(ctx, &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, interrupts: interrupts}, os.Args[1:])
	signal.Stop(interrupts)
	stop()
	os.Exit(code)
}

// run runs the command line args and returns the exit code.
func run(ctx context.Context, e *env, args []string) int {
	var conn connFlags
	global := newFlagSet("agentctl")
	conn.register(global)
	if err := global.Parse(args); err != nil {
		if errors.Is(err, errHelp) {
			fmt.Fprint(e.stdout, usage)
			return exitOK
		}
		return usageError(e, err)
	}
	args = global.Args()
	if len(args) == 0 || args[0] == "help" {
		fmt.Fprint(e.stdout, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	f, ok := commands[args[0]]
	if !ok {
		return usageError(e, fmt.Errorf("unknown command %q", args[0]))
	}
	e.conn = conn
	return f(ctx, e, args[1:])
}

// usageError prints a command line error and returns exitUsage.
func usageError(e *env, err error) int {
	fmt.Fprintf(e.stderr, "agentctl: %v\n(agentctl help lists the commands)\n", err)
	return exitUsage
}
