package tool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentcore/agentcore/pkg/tool/limits"
)

// crashGrace is how long a call whose stream broke waits for the plugin to
// exit on its own, so that the result reports the real exit status.
const crashGrace = 2 * time.Second

// startFailedResult reports a call whose plugin process could not be started.
func (pl *pool) startFailedResult(name string, err error) Result {
	return errorResult(fmt.Sprintf("tool %q could not start its plugin %s: %v", name, pl.cmd.source(), err))
}

// breachResult reports, and logs, a call whose process tree went over one
// of its limits and was killed.
func (pl *pool) breachResult(name string, b limits.Breach) Result {
	pl.host.log.Warn("tool over its limit: killed", "path", pl.cmd.Path, "tool", name, "limit", b.String(), "detail", b.Detail)
	return outcome(errorResult(breachText(name, b)), OutcomeLimit)
}

// breachText says which limit a call exceeded.
func breachText(name string, b limits.Breach) string {
	msg := fmt.Sprintf("tool %q exceeded its %s and was killed", name, b)
	if b.Detail != "" {
		msg += " (" + b.Detail + ")"
	}
	return msg + ". It may succeed with less input or a smaller task; the operator sets the limits."
}

// stoppedResult reports a call stopped for its context: its tool's timeout
// passed, or the caller cancelled it.
func stoppedResult(ctx context.Context, e *entry) Result {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return outcome(errorResult(fmt.Sprintf("tool %q timed out after %s and was killed", e.spec.Name, e.spec.Timeout)), OutcomeTimeout)
	}
	return outcome(errorResult(fmt.Sprintf("tool %q was stopped: %v", e.spec.Name, context.Cause(ctx))), OutcomeKilled)
}

// crashResult reports a call whose stream broke: the plugin's exit status
// and the tail of its stderr when it died, else the error; or the limit it
// went over (oom: an out-of-memory line of the call's stderr output).
func (pl *pool) crashResult(pr *proc, name string, err error, oom string) Result {
	p := pr.p
	select {
	case <-p.done:
	case <-time.After(crashGrace):
	}
	if !p.finished() {
		pl.lost(pr)
		if status.Code(err) == codes.ResourceExhausted {
			return errorResult(fmt.Sprintf("tool %q sent a message larger than the host accepts (%d bytes), so its call was ended: %s. "+
				"A tool should return less at once (a page, a summary, or a file to read in parts).", name, pl.host.cfg.MaxReceiveBytes, status.Convert(err).Message()))
		}
		return errorResult(fmt.Sprintf("tool %q failed: %v", name, err))
	}
	if pl.host.isClosed() {
		pl.lost(pr)
		return outcome(errorResult(fmt.Sprintf("tool %q was stopped: %v", name, ErrClosed)), OutcomeKilled)
	}
	tail := pr.stderrTail()
	if pr.group != nil {
		if b, ok := pr.group.Breach(p.state, oom+"\n"+p.oom.line()+"\n"+tail); ok {
			pl.lost(pr)
			return pl.breachResult(name, b)
		}
	}
	msg := fmt.Sprintf("tool %q crashed: its plugin process %s", name, p.status())
	if tail != "" {
		msg += ". Its stderr says:\n" + tail
	}
	pl.lost(pr)
	pl.host.log.Warn("plugin crashed", "path", pl.cmd.Path, "tool", name, "status", p.status())
	return outcome(errorResult(msg), OutcomeCrash)
}
