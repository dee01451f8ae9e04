package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"github.com/agentcore/agentcore/sdk/client"
)

// runRuns lists runs, newest first.
func runRuns(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "runs", "runs [--agent AGENT] [--state STATE] [--limit N] [--json]")
	agent := c.fs.String("agent", "", "only the runs of `AGENT`")
	state := c.fs.String("state", "", "only the runs in `STATE`: running, succeeded, failed, stopped or interrupted")
	limit := c.fs.Int("limit", 50, "at most `N` runs, the newest (0: all)")
	asJSON := c.fs.Bool("json", false, "print each run as a JSON object (protojson) on a line of its own")
	if _, code, ok := c.parse(args, 0, 0); !ok {
		return code
	}
	f := client.RunFilter{AgentID: *agent, Max: *limit}
	if *state != "" {
		s, err := parseRunState(*state)
		if err != nil {
			return usageError(e, err)
		}
		f.State = s
	}
	if *limit < 0 {
		return usageError(e, fmt.Errorf("runs: --limit must not be negative"))
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		runs, err := cl.Runs(ctx, f)
		if err != nil {
			return err
		}
		if *asJSON {
			for _, r := range runs {
				if err := jsonLine(e.stdout, r); err != nil {
					return err
				}
			}
			return nil
		}
		w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "RUN\tAGENT\tSTATE\tSTARTED\tTOOK\tOUTCOME")
		for _, r := range runs {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.GetId(), r.GetAgentId(), stateName(r.GetState()),
				when(r.GetStartTime()), took(r), runOutcome(r))
		}
		return w.Flush()
	})
}

// runRun prints one run.
func runRun(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "run", "run RUN [--json]")
	asJSON := c.fs.Bool("json", false, "print the run as a JSON object (protojson)")
	pos, code, ok := c.parse(args, 1, 1)
	if !ok {
		return code
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		r, err := cl.Run(ctx, pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return jsonLine(e.stdout, r)
		}
		w := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "run\t%s\nagent\t%s\nstate\t%s\nstarted\t%s\ntook\t%s\noutcome\t%s\nevents\t%d\nreplica\t%s\n",
			r.GetId(), r.GetAgentId(), stateName(r.GetState()), when(r.GetStartTime()), took(r), runOutcome(r),
			r.GetLastSeq(), r.GetReplica())
		if err := w.Flush(); err != nil {
			return err
		}
		if res := r.GetResult(); res != nil && res.GetText() != "" {
			fmt.Fprintf(e.stdout, "text:\n%s\n", indent(res.GetText()))
		}
		for _, p := range r.GetPendingPermissions() {
			fmt.Fprintf(e.stdout, "waiting for permission: %s %s\n    agentctl approve %s %s\n    agentctl deny %s %s --reason TEXT\n",
				p.GetToolName(), clip(p.GetArguments(), maxArgsShown), r.GetId(), p.GetToolCallId(), r.GetId(), p.GetToolCallId())
		}
		for _, q := range r.GetPendingElicitations() {
			fmt.Fprintf(e.stdout, "waiting for input: %s asks %q\n    agentctl respond %s %s --accept JSON (or --decline, --cancel)\n",
				q.GetToolName(), q.GetMessage(), r.GetId(), q.GetElicitationId())
		}
		return nil
	})
}

// runApprove allows a tool call waiting for permission.
func runApprove(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "approve", "approve RUN CALL")
	return respond(ctx, c, args, func() (client.Decision, string) { return client.Allow(), "allowed" })
}

// runDeny refuses a tool call waiting for permission.
func runDeny(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "deny", "deny RUN CALL [--reason TEXT]")
	reason := c.fs.String("reason", "", "why, in `TEXT` the model is told")
	return respond(ctx, c, args, func() (client.Decision, string) { return client.Deny(*reason), "denied" })
}

// respond answers the permission request of RUN's CALL with the decision
// that decide makes once the flags are parsed.
func respond(ctx context.Context, c *command, args []string, decide func() (client.Decision, string)) int {
	pos, code, ok := c.parse(args, 2, 2)
	if !ok {
		return code
	}
	d, done := decide()
	return withClient(ctx, c.e, func(ctx context.Context, cl *client.Client) error {
		if err := cl.RespondPermission(ctx, pos[0], pos[1], d); err != nil {
			return err
		}
		fmt.Fprintf(c.e.stdout, "%s %s\n", done, pos[1])
		return nil
	})
}

// runStop stops an agent's running send.
func runStop(ctx context.Context, e *env, args []string) int {
	c := newCommand(e, "stop", "stop AGENT [--run RUN]")
	run := c.fs.String("run", "", "stop only `RUN`, if it is still the one running")
	pos, code, ok := c.parse(args, 1, 1)
	if !ok {
		return code
	}
	return withClient(ctx, e, func(ctx context.Context, cl *client.Client) error {
		a := cl.Agent(pos[0])
		var stopped bool
		var err error
		if *run != "" {
			stopped, err = a.StopRun(ctx, *run)
		} else {
			stopped, err = a.Stop(ctx)
		}
		if err != nil {
			return err
		}
		if stopped {
			fmt.Fprintln(e.stdout, "stopped")
		} else {
			fmt.Fprintln(e.stdout, "nothing was running")
		}
		return nil
	})
}

// withClient dials, runs f with the connection, and returns the exit code
// of its error; Ctrl-C cancels it (exit code 130).
func withClient(ctx context.Context, e *env, f func(context.Context, *client.Client) error) int {
	cl, err := e.conn.dial(e.getenv)
	if err != nil {
		return e.fail(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted, stop := e.cancelOnInterrupt(cancel)
	err = f(ctx, cl)
	stop()
	switch {
	case interrupted():
		return exitInterrupted
	case err != nil:
		return e.fail(err)
	}
	return exitOK
}

// stateName is a run state in lower case: running, succeeded…
func stateName(s agentv1.RunState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "RUN_STATE_"))
}

// runOutcome says how a run ended, or what it waits for.
func runOutcome(r *agentv1.Run) string {
	switch {
	case r.GetResult() != nil:
		return fmt.Sprintf("%s, %d steps", client.ReasonName(r.GetResult().GetReason()), r.GetResult().GetSteps())
	case r.GetError() != nil:
		re := r.GetError()
		if c := re.GetMetadata()["cause"]; c != "" {
			return re.GetReason() + " (" + c + ")"
		}
		return re.GetReason() + ": " + clip(firstLine(re.GetMessage()), 80)
	case len(r.GetPendingPermissions()) > 0:
		return fmt.Sprintf("waiting for permission (%d calls)", len(r.GetPendingPermissions()))
	}
	return ""
}

// when is a time for a table, in the local zone.
func when(t *timestamppb.Timestamp) string {
	if t == nil {
		return ""
	}
	return t.AsTime().Local().Format("2006-01-02 15:04:05")
}

// took is how long a run took, or has been running.
func took(r *agentv1.Run) string {
	if r.GetStartTime() == nil {
		return ""
	}
	end := time.Now()
	if r.GetEndTime() != nil {
		end = r.GetEndTime().AsTime()
	}
	return end.Sub(r.GetStartTime().AsTime()).Round(time.Millisecond).String()
}
