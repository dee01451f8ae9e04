package client

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// follower is where a run was left: its id, the seq of the last event
// seen and the attempt that emitted it (a run resumed after a crash of its
// server has a new attempt, whose events replace those the store never
// kept: see AttachRequest.attempt).
type follower struct {
	runID   string
	seq     int64
	attempt int32
}

// saw records an event the follower passed on.
func (f *follower) saw(e *agentv1.Event) {
	f.runID, f.seq, f.attempt = e.GetRunId(), e.GetSeq(), e.GetAttempt()
}

// Attach follows a run from the event after afterSeq: the stored events,
// then the live ones, each once and in order, to the callbacks, until the
// run ends; it returns the result, or the run's error. It works for a run
// that is live or finished, on this server or another replica. Permission
// requests go to OnPermission and are answered with RespondPermission.
func (c *Client) Attach(ctx context.Context, runID string, afterSeq int64, cb Callbacks) (*Result, error) {
	return c.attach(ctx, &agentv1.AttachRequest{RunId: runID, AfterSeq: afterSeq}, &follower{runID: runID, seq: afterSeq}, cb)
}

// Attach follows the agent's latest run from its first event (see Client.Attach).
func (a *Agent) Attach(ctx context.Context, cb Callbacks) (*Result, error) {
	return a.AttachAfter(ctx, 0, cb)
}

// AttachAfter follows the agent's latest run from the event after
// afterSeq (see Client.Attach): a client that saw the run's events up to
// afterSeq gets the ones it missed.
func (a *Agent) AttachAfter(ctx context.Context, afterSeq int64, cb Callbacks) (*Result, error) {
	return a.c.attach(ctx, &agentv1.AttachRequest{AgentId: a.ID, AfterSeq: afterSeq}, &follower{seq: afterSeq}, cb)
}

func (c *Client) attach(ctx context.Context, req *agentv1.AttachRequest, f *follower, cb Callbacks) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	var asks sync.WaitGroup
	defer asks.Wait()
	defer cancel() // before asks.Wait: a pending OnPermission sees its ctx end
	stream, err := c.api.Attach(ctx, req)
	if err != nil {
		return nil, asError(err)
	}
	var res *Result
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			if res == nil {
				return nil, &Error{Message: "the run ended without a result"}
			}
			return res, nil
		}
		if err != nil {
			return nil, asError(err)
		}
		e := resp.GetEvent()
		f.saw(e)
		if r := dispatch(e, &cb); r != nil {
			res = r
		}
		c.elicit(ctx, &asks, &cb, e)
		if p := e.GetPermissionRequest(); p != nil && cb.OnPermission != nil {
			asks.Add(1)
			run := e.GetRunId()
			go func() {
				defer asks.Done()
				d := cb.OnPermission(ctx, p)
				// An answer given already (before a reconnection) is refused: fine.
				_ = c.RespondPermission(ctx, run, p.GetToolCallId(), d)
			}()
		}
	}
}

// follow attaches to f's run from its last seq until the run ends, again
// after each broken connection or server restart, waiting a little longer
// each time. A run its server resumed after a crash is followed from where
// the resumption replaced the events seen (a RunResumedEvent says so).
func (c *Client) follow(ctx context.Context, f *follower, cb Callbacks) (*Result, error) {
	wait := 100 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return nil, &Error{Code: codes.Canceled, Kind: KindAborted, Reason: ReasonAborted, Message: ctx.Err().Error()}
		case <-time.After(wait):
		}
		res, err := c.attach(ctx, &agentv1.AttachRequest{RunId: f.runID, AfterSeq: f.seq, Attempt: &f.attempt}, f, cb)
		if err == nil || !transient(err) {
			return res, err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// transient reports whether err is a broken connection or a server going
// away rather than an answer of the server (whose errors carry an
// ErrorInfo).
func transient(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code == codes.Unavailable && (e.Reason == "" || e.Reason == ReasonShuttingDown)
}

// RespondPermission answers a run's permission request from any
// connection, also after the run's Send stream is gone.
func (c *Client) RespondPermission(ctx context.Context, runID, toolCallID string, d Decision) error {
	_, err := c.api.RespondPermission(ctx, &agentv1.RespondPermissionRequest{
		RunId: runID, ToolCallId: toolCallID, Allow: d.Allow, Reason: d.Reason,
	})
	return asError(err)
}

// Run returns one run: its state, result or error, pending permission requests.
func (c *Client) Run(ctx context.Context, runID string) (*agentv1.Run, error) {
	resp, err := c.api.GetRun(ctx, &agentv1.GetRunRequest{RunId: runID})
	if err != nil {
		return nil, asError(err)
	}
	return resp.GetRun(), nil
}

// RunFilter selects runs for Client.Runs.
type RunFilter struct {
	// AgentID selects one agent's runs; empty: every agent's (of the
	// caller's tenant).
	AgentID string
	// State selects the runs in that state; RUN_STATE_UNSPECIFIED: any.
	State agentv1.RunState
	// RootRunID selects one run tree: that run and its child runs.
	RootRunID string
	// Max stops the list at that many runs, the newest; 0: all of them.
	Max int
}

// runsPage is how many runs Runs asks for at a time.
const runsPage = 1000

// Runs lists runs, newest first, following pages: every agent's, or as f
// selects.
func (c *Client) Runs(ctx context.Context, f RunFilter) ([]*agentv1.Run, error) {
	var out []*agentv1.Run
	req := &agentv1.ListRunsRequest{AgentId: f.AgentID, State: f.State, RootRunId: f.RootRunID, PageSize: runsPage}
	for {
		if f.Max > 0 {
			req.PageSize = int32(min(runsPage, f.Max-len(out)))
		}
		resp, err := c.api.ListRuns(ctx, req)
		if err != nil {
			return nil, asError(err)
		}
		out = append(out, resp.GetRuns()...)
		if f.Max > 0 && len(out) >= f.Max {
			return out[:f.Max], nil
		}
		if resp.GetNextPageToken() == "" {
			return out, nil
		}
		req.PageToken = resp.GetNextPageToken()
	}
}

// Runs lists the agent's runs, newest first, following pages.
func (a *Agent) Runs(ctx context.Context) ([]*agentv1.Run, error) {
	return a.c.Runs(ctx, RunFilter{AgentID: a.ID})
}

// StopRun stops the agent's run runID if it is still the one running,
// wherever it runs, and reports whether it did.
func (a *Agent) StopRun(ctx context.Context, runID string) (bool, error) {
	resp, err := a.c.api.Stop(ctx, &agentv1.StopRequest{AgentId: a.ID, RunId: runID})
	if err != nil {
		return false, asError(err)
	}
	return resp.GetStopped(), nil
}
