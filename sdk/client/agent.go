package client

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"

	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Agent is a handle to one agent on the server.
type Agent struct {
	c *Client
	// ID is the agent's id.
	ID string
}

// Callbacks receive a run's events, in order, on the goroutine that called
// Send, except OnPermission (see below). Every callback is optional.
type Callbacks struct {
	// OnEvent gets every event first, as it came.
	OnEvent func(*agentv1.Event)
	// OnStart: the run started (agent-core: onStart).
	OnStart func(runID string)
	// OnLLMStart: a model request is about to be sent (onLLMStart).
	OnLLMStart func(*agentv1.ModelRequestEvent)
	// OnLLMEvent: a streamed piece of the model's answer (onLLMEvent).
	OnLLMEvent func(*agentv1.ModelDeltaEvent)
	// OnLLMFinish: the model's complete answer (onLLMFinish).
	OnLLMFinish func(*agentv1.ModelResponseEvent)
	// OnPermission decides whether a tool call may run (onPermission). It runs
	// on its own goroutine, so events keep flowing while it waits (e.g. for a
	// person); ctx ends with the run, and a decision returned after it ended
	// is not sent. Setting it makes the server ask for
	// every call unless SendOptions.AskTools narrows it.
	OnPermission func(ctx context.Context, req *agentv1.PermissionRequestEvent) Decision
	// OnToolCall: a tool call starts (onToolCall).
	OnToolCall func(*agentv1.ToolCallEvent)
	// OnToolOutput: live output of a running tool (onToolOutput).
	OnToolOutput func(*agentv1.ToolOutputEvent)
	// OnToolOutputCapped: a tool call's live output went over its cap (the
	// server's -max-live-output, config.max_live_output); the rest was not
	// sent, and the event says how much. It comes once, before the call's
	// result.
	OnToolOutputCapped func(*agentv1.ToolOutputCappedEvent)
	// OnToolResult: a tool call finished (onToolResult).
	OnToolResult func(*agentv1.ToolResultEvent)
	// OnStep: a round of model and tools finished (onStep).
	OnStep func(*agentv1.StepEvent)
	// OnRetry: a failed model request is retried (onRetry).
	OnRetry func(*agentv1.RetryEvent)
	// OnFallback: a round's model failed with an error the config falls
	// back on (config.fallback) and the round goes to the next fallback
	// model; text deltas of the round that came before it are void.
	OnFallback func(*agentv1.FallbackEvent)
	// OnCompact: compaction started, streamed a piece of summary, or finished
	// (onCompact); the event holds one of the three.
	OnCompact func(*agentv1.Event)
	// OnResumed: the run's server crashed and a server resumed the run
	// (on_interrupt resume); the events after it replace those after seq-1
	// that this client may have seen on the broken stream.
	OnResumed func(*agentv1.RunResumedEvent)
	// OnChild: an event of a child run (an agent this run called as a tool,
	// or one of its descendants), with the child's run id and depth. The
	// other callbacks get the root run's own events only; a child's
	// permission request goes to OnPermission too, and its answer to the
	// child run.
	OnChild func(*agentv1.ChildRunEvent)
	// OnBudgetExceeded: a limit of the run tree's budget was reached and
	// the run ends (END_REASON_BUDGET).
	OnBudgetExceeded func(*agentv1.BudgetExceededEvent)
	// OnElicitation: a tool asks the person behind the run for input (an
	// MCP server's elicitation, a Go tool's tool.Elicit), the run's own or
	// a child run's. It runs on its own goroutine, so events keep flowing
	// while it waits; its answer is sent with RespondElicitation unless ctx
	// ended first. Unset, the request waits for an answer from elsewhere
	// (RespondElicitation) until the server's permission timeout cancels it.
	OnElicitation func(ctx context.Context, req *agentv1.ElicitationRequestEvent) Elicited
}

// Decision answers a permission request.
type Decision struct {
	Allow bool
	// Reason is told to the model when the call is denied.
	Reason string
}

// Allow returns the decision that lets the call run.
func Allow() Decision { return Decision{Allow: true} }

// Deny returns the decision that refuses the call; reason is told to the model.
func Deny(reason string) Decision { return Decision{Reason: reason} }

// SendOptions are a Send's input and overrides (agent-core's
// agent.send(options)).
type SendOptions struct {
	// Text is the user's input; Parts, when set, are used instead (text,
	// images, files).
	Text  string
	Parts []*agentv1.Part
	// Config overrides the agent's config for this send (provider replaces whole).
	Config *agentv1.AgentConfig
	// History, when non-nil, replaces the history before the run.
	History []*agentv1.Message
	// Tools, when non-nil, are the only tools of this send.
	Tools []string
	// AskTools limits permission requests to these tools (needs OnPermission).
	AskTools []string
	// Budget limits what the run and its child runs may spend together;
	// nil: the agent's budget, else the tenant's.
	Budget *agentv1.Budget
	// Busy says what happens when the agent is already running: replace
	// (default: the old run ends CANCELLED), reject or queue.
	Busy agentv1.BusyPolicy
	// Detach keeps the run going on the server when this client goes away
	// (on_disconnect CONTINUE): Attach follows it again, RespondPermission
	// answers it. Cancelling ctx then leaves the run running; Stop stops it.
	Detach bool
	// Reconnect makes SendWith survive a broken connection and a restart
	// of the server: the run goes on (as with Detach) and SendWith attaches
	// again from the last event it saw, until the run ends or ctx is done.
	// A run resumed after its server crashed (on_interrupt resume) is
	// followed to its end: its callbacks then get a RunResumedEvent and the
	// events that replaced those the store never kept. Permission requests
	// seen after a reconnection are answered with RespondPermission.
	Reconnect bool
	// Resume goes on from the stored history without input (Text and
	// Parts empty), e.g. after a run was interrupted by a server restart.
	Resume bool
	// Callbacks receive the run's events.
	Callbacks Callbacks
}

// Result is a finished send (agent-core's resolved send).
type Result struct {
	// RunID identifies the run.
	RunID string
	// Text is the last model round's text.
	Text string
	// Steps is how many model rounds ran.
	Steps int
	// Usage is summed over the send.
	Usage *agentv1.Usage
	// Reason is why the send ended: END_REASON_NO_TOOL, END_REASON_TOOL_STOP or
	// END_REASON_STEP_LIMIT (agent-core's no-tool, tool-stop, step-limit:
	// see ReasonName).
	Reason agentv1.EndReason
	// Output is the structured output, when an output format was set.
	Output *structpb.Value
	// RunUsage is what the run spent (tokens, model requests, tool calls,
	// wall time, cost); TreeUsage what it spent with its child runs.
	RunUsage, TreeUsage *agentv1.RunUsage
}

// Send runs a task with text input and waits for its result.
func (a *Agent) Send(ctx context.Context, text string, cb Callbacks) (*Result, error) {
	return a.SendWith(ctx, SendOptions{Text: text, Callbacks: cb})
}

// SendWith runs a task and waits for its result. Cancelling ctx stops the
// run on the server (its tools are killed) and returns an *Error of kind aborted.
func (a *Agent) SendWith(ctx context.Context, o SendOptions) (*Result, error) {
	parts := o.Parts
	if parts == nil && o.Text != "" {
		parts = []*agentv1.Part{{Kind: &agentv1.Part_Text{Text: o.Text}}}
	}
	start := &agentv1.StartRun{
		AgentId: a.ID, Input: parts, Config: o.Config, BusyPolicy: o.Busy, Resume: o.Resume, Budget: o.Budget,
	}
	if o.Detach || o.Reconnect {
		start.OnDisconnect = agentv1.OnDisconnect_ON_DISCONNECT_CONTINUE
	}
	if o.History != nil {
		start.History = &agentv1.HistoryReplacement{Messages: o.History}
	}
	if o.Tools != nil {
		start.Tools = &agentv1.ToolSelection{Names: o.Tools}
	}
	switch {
	case o.Callbacks.OnPermission == nil:
		start.PermissionMode = agentv1.PermissionMode_PERMISSION_MODE_ALLOW_ALL
	case len(o.AskTools) > 0:
		start.PermissionMode = agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED
		start.AskTools = o.AskTools
	default:
		start.PermissionMode = agentv1.PermissionMode_PERMISSION_MODE_ASK_ALL
	}

	var f follower
	res, err := a.send(ctx, start, &o, &f)
	if err == nil || !o.Reconnect || f.runID == "" || !transient(err) {
		return res, err
	}
	return a.c.follow(ctx, &f, o.Callbacks)
}

// send runs one Send stream; f records the run id and the last seq seen.
func (a *Agent) send(ctx context.Context, start *agentv1.StartRun, o *SendOptions, f *follower) (*Result, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := a.c.api.Send(runCtx)
	if err != nil {
		return nil, asError(err)
	}
	var sendMu sync.Mutex
	send := func(req *agentv1.SendRequest) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(req)
	}
	if err := send(&agentv1.SendRequest{Kind: &agentv1.SendRequest_Start{Start: start}}); err != nil {
		return nil, a.streamErr(stream.Recv())
	}
	var asks sync.WaitGroup
	defer asks.Wait()
	defer cancel() // runs before asks.Wait: a pending OnPermission sees its ctx end

	var res *Result
	for {
		ev, err := stream.Recv()
		if err == io.EOF {
			if res == nil {
				return nil, &Error{Message: "the run ended without a result"}
			}
			return res, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, &Error{Kind: KindAborted, Reason: ReasonAborted, Message: ctx.Err().Error()}
			}
			return nil, asError(err)
		}
		e := ev.GetEvent()
		f.saw(e)
		if r := dispatch(e, &o.Callbacks); r != nil {
			res = r
		}
		a.c.elicit(runCtx, &asks, &o.Callbacks, e)
		p, asker := e.GetPermissionRequest(), ""
		if c := e.GetChild(); c != nil && c.GetEvent().GetPermissionRequest() != nil {
			p, asker = c.GetEvent().GetPermissionRequest(), c.GetRunId()
		}
		if p != nil {
			decide := o.Callbacks.OnPermission
			asks.Add(1)
			go func() {
				defer asks.Done()
				d := Deny("no one answered")
				if decide != nil {
					d = decide(runCtx, p)
				}
				if runCtx.Err() != nil {
					// The caller left (or the run ended): a decision made
					// after that is not sent, and the request stays open
					// for RespondPermission until -permission-timeout. The
					// stream's own cancellation could lose the race to it.
					return
				}
				_ = send(&agentv1.SendRequest{Kind: &agentv1.SendRequest_Permission{Permission: &agentv1.PermissionReply{
					ToolCallId: p.GetToolCallId(), Allow: d.Allow, Reason: d.Reason, RunId: asker,
				}}})
			}()
		}
	}
}

// streamErr returns the status of a stream that failed on its first send.
func (a *Agent) streamErr(_ *agentv1.SendResponse, err error) error {
	if err == nil || err == io.EOF {
		return &Error{Message: "the stream closed before the run started"}
	}
	return asError(err)
}

// dispatch calls the callbacks of one event; it returns the result when the
// event is the run's result.
func dispatch(e *agentv1.Event, cb *Callbacks) *Result {
	if cb.OnEvent != nil {
		cb.OnEvent(e)
	}
	switch k := e.GetKind().(type) {
	case *agentv1.Event_RunStarted:
		if cb.OnStart != nil {
			cb.OnStart(e.GetRunId())
		}
	case *agentv1.Event_ModelRequest:
		if cb.OnLLMStart != nil {
			cb.OnLLMStart(k.ModelRequest)
		}
	case *agentv1.Event_ModelDelta:
		if cb.OnLLMEvent != nil {
			cb.OnLLMEvent(k.ModelDelta)
		}
	case *agentv1.Event_ModelResponse:
		if cb.OnLLMFinish != nil {
			cb.OnLLMFinish(k.ModelResponse)
		}
	case *agentv1.Event_ToolCall:
		if cb.OnToolCall != nil {
			cb.OnToolCall(k.ToolCall)
		}
	case *agentv1.Event_ToolOutput:
		if cb.OnToolOutput != nil {
			cb.OnToolOutput(k.ToolOutput)
		}
	case *agentv1.Event_ToolOutputCapped:
		if cb.OnToolOutputCapped != nil {
			cb.OnToolOutputCapped(k.ToolOutputCapped)
		}
	case *agentv1.Event_ToolResult:
		if cb.OnToolResult != nil {
			cb.OnToolResult(k.ToolResult)
		}
	case *agentv1.Event_Step:
		if cb.OnStep != nil {
			cb.OnStep(k.Step)
		}
	case *agentv1.Event_Retry:
		if cb.OnRetry != nil {
			cb.OnRetry(k.Retry)
		}
	case *agentv1.Event_Fallback:
		if cb.OnFallback != nil {
			cb.OnFallback(k.Fallback)
		}
	case *agentv1.Event_RunResumed:
		if cb.OnResumed != nil {
			cb.OnResumed(k.RunResumed)
		}
	case *agentv1.Event_CompactStarted, *agentv1.Event_CompactDelta, *agentv1.Event_CompactFinished:
		if cb.OnCompact != nil {
			cb.OnCompact(e)
		}
	case *agentv1.Event_Child:
		if cb.OnChild != nil {
			cb.OnChild(k.Child)
		}
	case *agentv1.Event_BudgetExceeded:
		if cb.OnBudgetExceeded != nil {
			cb.OnBudgetExceeded(k.BudgetExceeded)
		}
	case *agentv1.Event_Result:
		r := k.Result
		return &Result{
			RunID: e.GetRunId(), Text: r.GetText(), Steps: int(r.GetSteps()), Usage: r.GetUsage(),
			Reason: r.GetReason(), Output: r.GetOutput(), RunUsage: r.GetRunUsage(), TreeUsage: r.GetTreeUsage(),
		}
	}
	return nil
}

// ReasonName is agent-core's name of an end reason: no-tool, tool-stop, step-limit.
func ReasonName(r agentv1.EndReason) string {
	if r == agentv1.EndReason_END_REASON_UNSPECIFIED {
		return ""
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(r.String(), "END_REASON_")), "_", "-")
}

// Stop stops the agent's running send and reports whether one was running;
// it returns once the run has fully stopped.
func (a *Agent) Stop(ctx context.Context) (bool, error) {
	resp, err := a.c.api.Stop(ctx, &agentv1.StopRequest{AgentId: a.ID})
	if err != nil {
		return false, asError(err)
	}
	return resp.GetStopped(), nil
}

// Compact summarises the history now (stopping a running send first) and
// returns the summary, which the server appended to the history. onCompact,
// if set, gets the compaction's events.
func (a *Agent) Compact(ctx context.Context, onCompact func(*agentv1.Event)) (string, error) {
	stream, err := a.c.api.Compact(ctx, &agentv1.CompactRequest{AgentId: a.ID})
	if err != nil {
		return "", asError(err)
	}
	summary, done := "", false
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if !done {
				return "", &Error{Message: "the compaction ended without a summary"}
			}
			return summary, nil
		}
		if err != nil {
			return "", asError(err)
		}
		e := resp.GetEvent()
		if onCompact != nil {
			onCompact(e)
		}
		if f := e.GetCompactFinished(); f != nil {
			summary, done = f.GetSummary(), true
		}
	}
}

// Get returns the agent (its config without secrets, state, usage).
func (a *Agent) Get(ctx context.Context) (*agentv1.Agent, error) {
	resp, err := a.c.api.GetAgent(ctx, &agentv1.GetAgentRequest{AgentId: a.ID})
	if err != nil {
		return nil, asError(err)
	}
	return resp.GetAgent(), nil
}

// Update changes the agent's config: the paths in mask (e.g. "config.model"),
// or, with no mask, every field set in cfg (provider replaced whole).
func (a *Agent) Update(ctx context.Context, cfg *agentv1.AgentConfig, mask ...string) (*agentv1.Agent, error) {
	req := &agentv1.UpdateAgentRequest{Agent: &agentv1.Agent{Id: a.ID, Config: cfg}}
	if len(mask) > 0 {
		req.UpdateMask = &fieldmaskpb.FieldMask{Paths: mask}
	}
	resp, err := a.c.api.UpdateAgent(ctx, req)
	if err != nil {
		return nil, asError(err)
	}
	return resp.GetAgent(), nil
}

// Delete stops any run and forgets the agent.
func (a *Agent) Delete(ctx context.Context) error {
	_, err := a.c.api.DeleteAgent(ctx, &agentv1.DeleteAgentRequest{AgentId: a.ID})
	return asError(err)
}

// History returns the agent's history, the whole of it: a history larger
// than one response comes in pages, which History follows.
func (a *Agent) History(ctx context.Context) ([]*agentv1.Message, error) {
	h, err := a.history(ctx, &agentv1.GetHistoryRequest{AgentId: a.ID})
	return h.messages, err
}

// Turns returns the history grouped into turns (a model response with its
// tool calls and their results stay together), as agent-core's History.turns.
func (a *Agent) Turns(ctx context.Context) ([][]*agentv1.Message, error) {
	h, err := a.history(ctx, &agentv1.GetHistoryRequest{AgentId: a.ID, IncludeTurns: true})
	if err != nil {
		return nil, err
	}
	turns := make([][]*agentv1.Message, 0, len(h.turns))
	for _, t := range h.turns {
		turn := make([]*agentv1.Message, 0, len(t.GetMessageIndexes()))
		for _, i := range t.GetMessageIndexes() {
			if int(i) < len(h.messages) {
				turn = append(turn, h.messages[i])
			}
		}
		turns = append(turns, turn)
	}
	return turns, nil
}

// Render returns the history as text, as agent-core's History.render, with
// the server's labels (English unless its -render-labels says original).
func (a *Agent) Render(ctx context.Context) (string, error) {
	return a.RenderWith(ctx, agentv1.RenderLabels_RENDER_LABELS_UNSPECIFIED)
}

// RenderWith is Render with the labels asked for: RENDER_LABELS_ENGLISH, or
// RENDER_LABELS_ORIGINAL for agent-core's own ([调用 read …], [read 返回]).
func (a *Agent) RenderWith(ctx context.Context, labels agentv1.RenderLabels) (string, error) {
	h, err := a.history(ctx, &agentv1.GetHistoryRequest{AgentId: a.ID, IncludeRendered: true, RenderLabels: labels})
	return strings.Join(h.rendered, "\n"), err
}

// fullHistory is a history read page by page.
type fullHistory struct {
	messages []*agentv1.Message
	turns    []*agentv1.Turn // over the whole history, as every page has them
	rendered []string        // each page's
}

// history reads every page of the agent's history.
func (a *Agent) history(ctx context.Context, req *agentv1.GetHistoryRequest) (fullHistory, error) {
	var h fullHistory
	for {
		resp, err := a.c.api.GetHistory(ctx, req)
		if err != nil {
			return fullHistory{}, asError(err)
		}
		if req.PageToken == "" {
			h.turns = resp.GetTurns()
		}
		h.messages = append(h.messages, resp.GetMessages()...)
		if r := resp.GetRendered(); r != "" {
			h.rendered = append(h.rendered, r)
		}
		if resp.GetNextPageToken() == "" {
			return h, nil
		}
		req.PageToken = resp.GetNextPageToken()
	}
}

// SetHistory replaces the history, e.g. restoring it from a database. It
// fails while a send runs.
func (a *Agent) SetHistory(ctx context.Context, msgs []*agentv1.Message) error {
	_, err := a.c.api.SetHistory(ctx, &agentv1.SetHistoryRequest{AgentId: a.ID, Messages: msgs})
	return asError(err)
}

// Preview returns what the next model request would hold and its size.
func (a *Agent) Preview(ctx context.Context, input ...*agentv1.Part) (*agentv1.PreviewContextResponse, error) {
	resp, err := a.c.api.PreviewContext(ctx, &agentv1.PreviewContextRequest{AgentId: a.ID, Input: input})
	return resp, asError(err)
}
