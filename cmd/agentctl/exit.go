package main

import (
	"errors"
	"fmt"

	rpccode "google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"

	"github.com/agentcore/agentcore/sdk/client"
)

// The exit codes, by outcome (docs/clients/agentctl.md has them in a table).
const (
	exitOK = 0
	// exitError: any other failure: a tool run by exec returned an error, the
	// server failed (INTERNAL, DATA_LOSS…).
	exitError = 1
	// exitUsage: the command line or a connection setting is wrong, or the
	// server refused the request as INVALID_ARGUMENT.
	exitUsage = 2
	// exitNotFound: no such agent, run, tool or permission request (or the
	// run's events expired).
	exitNotFound = 3
	// exitDenied: UNAUTHENTICATED or PERMISSION_DENIED.
	exitDenied = 4
	// exitRunFailed: the run failed with a model error (auth, limit,
	// timeout, server, network, request, unknown).
	exitRunFailed = 5
	// exitStopped: the run was stopped (Ctrl-C, stop, a newer send, the
	// agent deleted) or interrupted (its server stopped or crashed).
	exitStopped = 6
	// exitUnreachable: the server cannot be reached, or says it is
	// unavailable (shutting down, tools still loading, its store down).
	exitUnreachable = 7
	// exitRefused: the server refused the call in this state: the agent
	// exists or is busy, a precondition (NO_MODEL, RUN_ACTIVE,
	// PERMISSION_ANSWERED…), a limit (SESSION_LIMIT, RUN_LIMIT…).
	exitRefused = 8
	// exitInterrupted: Ctrl-C ended a command that is not a run's (attach
	// leaves the run going), as a shell reports a process SIGINT ended.
	exitInterrupted = 130
)

// exitCode returns the exit code an error calls for.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errConfig) {
		return exitUsage
	}
	var e *client.Error
	if !errors.As(err, &e) {
		return exitError
	}
	switch {
	case e.Kind == client.KindAborted || e.Reason == client.ReasonRunInterrupted:
		return exitStopped
	case e.Kind != "":
		return exitRunFailed
	}
	switch e.Code {
	case codes.InvalidArgument:
		return exitUsage
	case codes.NotFound, codes.OutOfRange:
		return exitNotFound
	case codes.Unauthenticated, codes.PermissionDenied:
		return exitDenied
	case codes.Unavailable, codes.DeadlineExceeded:
		return exitUnreachable
	case codes.AlreadyExists, codes.Aborted, codes.FailedPrecondition, codes.ResourceExhausted:
		return exitRefused
	}
	return exitError
}

// fail prints err for a person and returns its exit code.
func (e *env) fail(err error) int {
	code := exitCode(err)
	var ce *client.Error
	switch {
	case !errors.As(err, &ce):
		fmt.Fprintf(e.stderr, "agentctl: %v\n", err)
	case code == exitStopped:
		fmt.Fprintf(e.stderr, "agentctl: %s\n", stoppedText(err))
	case ce.Reason == "" && ce.Code == codes.Unavailable:
		fmt.Fprintf(e.stderr, "agentctl: cannot reach agent-server at %s: %s\n", e.conn.resolved(e.getenv).addr, ce.Message)
	default:
		fmt.Fprintf(e.stderr, "agentctl: %s: %s\n", errorName(ce), ce.Message)
	}
	return code
}

// errorName is an error's reason, or its code's name when it has none.
func errorName(e *client.Error) string {
	if e.Reason != "" {
		return string(e.Reason)
	}
	return rpccode.Code(e.Code).String()
}
