package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// errInterrupted is an ask that Ctrl-C ended.
var errInterrupted = errors.New("interrupted")

// ui is the chat's terminal: text out, lines in, Ctrl-C.
type ui interface {
	// Write prints output; it is safe for concurrent use.
	io.Writer
	// ask shows prompt and returns the line typed: io.EOF at the end of
	// the input (Ctrl-D), errInterrupted at Ctrl-C, ctx's error when it
	// ends first. record: the line goes into the line history (tasks do,
	// permission answers do not).
	ask(ctx context.Context, prompt string, record bool) (string, error)
	// interrupts delivers Ctrl-C while no ask is waiting.
	interrupts() <-chan struct{}
	// close gives the terminal back as it was.
	close()
}

// chat is one chat session with an agent.
type chat struct {
	u     ui
	agent *client.Agent
	ask   askFlag
}

// permission is a permission request waiting for the person's answer.
type permission struct {
	ctx   context.Context // ends with the run
	req   *agentv1.PermissionRequestEvent
	reply chan client.Decision
}

// runChat talks with an agent in this terminal until Ctrl-D (or Ctrl-C at
// the prompt). Each line is a task; the agent's history stays on the
// server, so a chat picks up where the last one ended.
func runChat(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "chat", "chat AGENT [--ask TOOLS]")
	ask := askFlag{all: true}
	c.fs.Var(&ask, "ask", "`TOOLS` whose calls wait for your y/n: all (default), none or names separated by commas")
	pos, code, ok := c.parse(args, 1, 1)
	if !ok {
		return code
	}
	cl, err := e.conn.dial(e.getenv)
	if err != nil {
		return e.fail(err)
	}
	defer cl.Close()
	agent := cl.Agent(pos[0])
	info, err := agent.Get(ctx)
	if err != nil {
		return e.fail(err)
	}
	u, err := newUI(e)
	if err != nil {
		return e.fail(err)
	}
	defer u.close()
	fmt.Fprintf(u, "agent %s, %d messages in its history. Ctrl-C stops a run; Ctrl-D quits.\n", info.GetId(), info.GetHistoryLength())
	s := &chat{u: u, agent: agent, ask: ask}
	for {
		line, err := u.ask(ctx, "> ", true)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, errInterrupted):
			fmt.Fprintln(u)
			return exitOK
		case err != nil:
			return exitInterrupted // SIGTERM or SIGHUP
		}
		if task := strings.TrimSpace(line); task != "" {
			if quit := s.run(ctx, task); quit {
				return exitOK
			}
		}
	}
}

// run sends one task and shows its events until the run ends. Ctrl-C stops
// the run; a second one, before it ended, quits the chat (quit true).
func (s *chat) run(ctx context.Context, task string) (quit bool) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := newPrinter(s.u, false)
	asks := make(chan permission)
	type outcome struct {
		res *client.Result
		err error
	}
	done := make(chan outcome, 1)
	var run runID
	opts := client.SendOptions{Text: task, Callbacks: client.Callbacks{OnEvent: func(e *agentv1.Event) {
		run.set(e.GetRunId())
		p.event(e)
	}}}
	if s.ask.asks() {
		opts.AskTools = s.ask.tools
		opts.Callbacks.OnPermission = func(ctx context.Context, req *agentv1.PermissionRequestEvent) client.Decision {
			q := permission{ctx: ctx, req: req, reply: make(chan client.Decision, 1)}
			select {
			case asks <- q:
			case <-ctx.Done():
				return client.Deny("the run ended")
			}
			select {
			case d := <-q.reply:
				return d
			case <-ctx.Done():
				return client.Deny("the run ended")
			}
		}
	}
	// A tool's request for input is asked here, whatever --ask says.
	elicits := make(chan elicitation)
	opts.Callbacks.OnElicitation = func(ctx context.Context, req *agentv1.ElicitationRequestEvent) client.Elicited {
		q := elicitation{ctx: ctx, req: req, reply: make(chan client.Elicited, 1)}
		select {
		case elicits <- q:
		case <-ctx.Done():
			return client.CancelElicitation()
		}
		select {
		case a := <-q.reply:
			return a
		case <-ctx.Done():
			return client.CancelElicitation()
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		res, err := s.agent.SendWith(runCtx, opts)
		done <- outcome{res, err}
	})
	stopping, ctxDone := false, ctx.Done()
	interrupt := func() {
		if stopping {
			quit = true
			cancel()
			return
		}
		stopping = true
		fmt.Fprintln(s.u, "\n^C stopping the run (Ctrl-C again quits)")
		// The server stops the run and kills its tools; the stream ends
		// with the run's outcome.
		id := run.get()
		wg.Go(func() { stopRun(ctx, s.agent, id, cancel) })
	}
	for {
		select {
		case o := <-done:
			if !quit {
				p.outcome(o.res, o.err)
			}
			return quit || ctx.Err() != nil
		case <-s.u.interrupts():
			interrupt()
		case q := <-asks:
			d, err := s.decide(q)
			if errors.Is(err, errInterrupted) {
				interrupt()
				continue
			}
			q.reply <- d
		case q := <-elicits:
			a, err := s.elicit(q)
			if errors.Is(err, errInterrupted) {
				interrupt()
				continue
			}
			q.reply <- a
		case <-ctxDone:
			ctxDone = nil
			cancel()
			quit = true
		}
	}
}

// decide asks the person whether a tool call may run.
func (s *chat) decide(q permission) (client.Decision, error) {
	fmt.Fprintf(s.u, "? %s %s\n", q.req.GetToolName(), clip(q.req.GetArguments(), maxArgsShown))
	for {
		line, err := s.u.ask(q.ctx, "allow? [y/n] ", false)
		if errors.Is(err, errInterrupted) {
			return client.Decision{}, err
		}
		if err != nil {
			// The run ended, or the input did: the call is refused, or
			// its answer is no longer wanted.
			return client.Deny("no answer"), nil
		}
		allow, reason, ok := parseAnswer(line)
		if !ok {
			fmt.Fprintln(s.u, "answer y or n; \"n REASON\" tells the model why")
			continue
		}
		if !allow && reason == "" {
			reason, err = s.u.ask(q.ctx, "reason (enter for none): ", false)
			if errors.Is(err, errInterrupted) {
				return client.Decision{}, err
			}
		}
		if allow {
			return client.Allow(), nil
		}
		return client.Deny(strings.TrimSpace(reason)), nil
	}
}

// parseAnswer reads a permission answer: y or yes, n or no, optionally
// followed by a reason ("n not on prod").
func parseAnswer(line string) (allow bool, reason string, ok bool) {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch strings.ToLower(strings.TrimRight(word, ",:;.")) {
	case "y", "yes":
		return true, "", true
	case "n", "no":
		return false, strings.TrimSpace(rest), true
	}
	return false, "", false
}
