package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// runSend runs a task and prints its events; the exit code is its outcome.
func runSend(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "send", "send AGENT TASK... [--json] [--ask TOOLS] [--detach] [--busy POLICY]")
	asJSON := c.fs.Bool("json", false, "print each event as a JSON object (protojson) on a line of its own")
	var ask askFlag
	c.fs.Var(&ask, "ask", "`TOOLS` whose calls wait for permission, answered with agentctl approve or deny: all, none (default) or names separated by commas")
	detach := c.fs.Bool("detach", false, "print the run's id once it started and leave it running (agentctl attach follows it)")
	busy := c.fs.String("busy", "", "when the agent is running already: replace (the default: the running send is stopped), reject or queue (`POLICY`)")
	pos, code, ok := c.parse(args, 2, -1)
	if !ok {
		return code
	}
	policy, err := parseBusy(*busy)
	if err != nil {
		return usageError(e, err)
	}
	task, err := readArg(e, strings.Join(pos[1:], " "))
	if err != nil {
		return e.fail(err)
	}
	if strings.TrimSpace(task) == "" {
		return usageError(e, fmt.Errorf("send: the task is empty"))
	}
	cl, err := e.conn.dial(e.getenv)
	if err != nil {
		return e.fail(err)
	}
	defer cl.Close()

	agent := cl.Agent(pos[0])
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var run runID
	_, stop := e.cancelOnInterrupt(func() { stopRun(ctx, agent, run.get(), cancel) })
	defer stop()
	p := newPrinter(e.stdout, true)
	detached := false
	opts := client.SendOptions{Text: task, Busy: policy, Detach: *detach}
	opts.Callbacks.OnEvent = func(ev *agentv1.Event) {
		run.set(ev.GetRunId())
		if *asJSON {
			_ = jsonLine(e.stdout, ev)
		} else {
			p.event(ev)
		}
		if *detach && ev.GetRunStarted() != nil {
			if !*asJSON {
				fmt.Fprintf(e.stdout, "run %s started; agentctl attach %s follows it\n", ev.GetRunId(), ev.GetRunId())
			}
			detached = true
			cancel()
		}
	}
	if ask.asks() {
		// Someone else answers, with approve or deny (RespondPermission):
		// the request stays open until then, or the server's
		// -permission-timeout.
		opts.Callbacks.OnPermission = func(ctx context.Context, _ *agentv1.PermissionRequestEvent) client.Decision {
			<-ctx.Done()
			return client.Deny("")
		}
		if !ask.all {
			opts.AskTools = ask.tools
		}
	}
	res, err := agent.SendWith(runCtx, opts)
	switch {
	case detached:
		return exitOK
	case err != nil:
		return e.fail(err)
	case !*asJSON:
		p.outcome(res, nil)
	}
	return exitOK
}

// runAttach follows a run to its end; the exit code is its outcome.
func runAttach(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "attach", "attach RUN [--after SEQ] [--json]")
	after := c.fs.Int64("after", 0, "follow from the event after `SEQ` (0: from the run's first event)")
	asJSON := c.fs.Bool("json", false, "print each event as a JSON object (protojson) on a line of its own")
	pos, code, ok := c.parse(args, 1, 1)
	if !ok {
		return code
	}
	if *after < 0 {
		return usageError(e, fmt.Errorf("attach: --after must not be negative"))
	}
	cl, err := e.conn.dial(e.getenv)
	if err != nil {
		return e.fail(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted, stop := e.cancelOnInterrupt(cancel)
	defer stop()
	p := newPrinter(e.stdout, true)
	res, err := cl.Attach(ctx, pos[0], *after, client.Callbacks{OnEvent: func(ev *agentv1.Event) {
		if *asJSON {
			_ = jsonLine(e.stdout, ev)
		} else {
			p.event(ev)
		}
	}})
	switch {
	case interrupted():
		// Leaving does not stop the run: it goes on without this client.
		return exitInterrupted
	case err != nil:
		return e.fail(err)
	case !*asJSON:
		p.outcome(res, nil)
	}
	return exitOK
}

// runID is the id of the run a send started, once its first event came.
type runID struct {
	mu sync.Mutex
	id string
}

func (r *runID) set(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.id = id
}

func (r *runID) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.id
}

// stopTimeout bounds the Stop call that Ctrl-C makes.
const stopTimeout = 5 * time.Second

// stopRun stops a send's run on the server, so that it ends as stopped
// (its tools killed, the history kept) and its stream ends with that
// outcome. Before the run has an id, or when the server cannot be told,
// cancel closes the stream, which stops the run too, as "aborted".
func stopRun(ctx context.Context, a *client.Agent, runID string, cancel func()) {
	if runID != "" {
		ctx, done := context.WithTimeout(ctx, stopTimeout)
		stopped, err := a.StopRun(ctx, runID)
		done()
		if err == nil && stopped {
			return
		}
	}
	cancel()
}

// cancelOnInterrupt calls cancel at the first Ctrl-C, until stop is called;
// interrupted reports whether one came.
func (e *env) cancelOnInterrupt(cancel func()) (interrupted func() bool, stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := false
	wg.Go(func() {
		select {
		case <-e.interrupts:
			mu.Lock()
			got = true
			mu.Unlock()
			cancel()
		case <-done:
		}
	})
	interrupted = func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	return interrupted, sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
}

// readArg returns arg, or standard input when arg is "-".
func readArg(e *env, arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	b, err := io.ReadAll(e.stdin)
	if err != nil {
		return "", fmt.Errorf("reading standard input: %w", err)
	}
	return strings.TrimRight(string(b), "\n"), nil
}
