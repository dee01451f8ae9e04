package agent

import (
	"context"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// SendOptions are one send: agent-core's agent.send options, shaped like the
// StartRun message.
type SendOptions struct {
	// Input is the user's message: text, image, audio, video or file parts.
	// Required, and not only blank text.
	Input []*agentv1.Part
	// Config overrides the session's config for this send (MergeConfig).
	Config *agentv1.AgentConfig
	// History, when set, replaces the session's history before the run, and
	// the replacement is kept.
	History *agentv1.HistoryReplacement
	// Tools, when set, are the tools of this send instead of the session's;
	// an empty set means none.
	Tools *tool.Set
	// Busy says what to do when the session is running: replace (default:
	// the running send is stopped and returns aborted), reject (ErrBusy) or
	// queue (wait for the sends before this one).
	Busy agentv1.BusyPolicy
	// PermissionMode says which tool calls need approval: none (default),
	// every call, or the calls of the tools in AskTools. OnPermission
	// answers; it is required when calls need approval.
	PermissionMode agentv1.PermissionMode
	AskTools       []string
	OnPermission   PermissionFunc
	// OnElicit answers the elicitation requests of the run's tool calls
	// (a tool asking the person behind the run for input); nil: such
	// requests are refused.
	OnElicit hostreq.ElicitFunc
	// OnCredential answers the MCP host processes' requests for their
	// server's OAuth credential (the token vault, for the run's tenant and
	// user); nil: refused.
	OnCredential hostreq.CredentialFunc
	// Resume re-enters the loop from the history as it is, without input
	// (Input must be empty, History unset): the model is asked to go on
	// from the last turn, e.g. after a run was interrupted. ErrNothingToResume
	// when the history is empty or ends with the model's answer.
	Resume bool
	// Continue, when set, resumes a run a crash cut off, as Resume does
	// but keeping the run's id and event numbering, from the last durable
	// step (see Continuation). The run is told to the journal as already
	// started (JournalRun.Attempt).
	Continue *Continuation
	// OnEvent receives the run's events in order, numbered from 1, on one
	// goroutine at a time. It must not block for long (tools wait on it) and
	// must not call Send, Stop or Compact of the same session, which wait for
	// the run it is part of.
	OnEvent func(*agentv1.Event)
	// Budget limits what the run spends, with its ancestors' limits when it
	// is a child run (NewBudget); nil means no limit of its own and no
	// parent. A budget belongs to one run.
	Budget *Budget
}

// PermissionRequest is a tool call waiting for approval. The run has just
// emitted a PermissionRequestEvent for it.
type PermissionRequest struct {
	RunID      string
	Step       int
	ToolCallID string
	ToolName   string
	// Arguments is the call's JSON text.
	Arguments string
}

// Decision answers a PermissionRequest. A denied call becomes a failed tool
// result telling the model so, with Reason; the loop goes on.
type Decision struct {
	Allow  bool
	Reason string
}

// PermissionFunc approves or denies one tool call. It is called on the
// call's own goroutine (calls of one round are asked in parallel) and must
// return once ctx is done.
type PermissionFunc func(ctx context.Context, req PermissionRequest) Decision

// Result is the outcome of a send (agent-core's resolved send).
type Result struct {
	// RunID is the run's id, as in its events.
	RunID string
	// Text is the text of the last model round.
	Text string
	// Steps counts the model rounds of the send (compaction requests not
	// included).
	Steps int
	// Usage is summed over every model response of the send, compaction
	// requests included.
	Usage *agentv1.Usage
	// Reason says why the send ended.
	Reason agentv1.EndReason
	// Output is the structured output, set only when the config asks for one
	// and the send ended no-tool.
	Output *structpb.Value
	// RunUsage is what the run spent, in a budget's units; TreeUsage what
	// it spent with its child runs.
	RunUsage, TreeUsage *agentv1.RunUsage
	// Exceeded is the limit that ended the run, when Reason is BUDGET.
	Exceeded *BudgetError
}

// Proto returns the result as the run's last event.
func (r *Result) Proto() *agentv1.RunResultEvent {
	return &agentv1.RunResultEvent{Text: r.Text, Steps: int32(r.Steps), Usage: r.Usage, Reason: r.Reason, Output: r.Output,
		RunUsage: r.RunUsage, TreeUsage: r.TreeUsage}
}

// Send appends the input to the history and loops "ask the model, run the
// tools it asked for" until the send ends (see the package doc), then
// returns the result, which is also its last event. The config is the
// session's as it is when Send is called, with opts.Config merged over it; a
// queued send keeps it while it waits. To stop only this send, cancel ctx
// (context.WithCancelCause: the send's error wraps the cause).
//
// Errors: a *ValidationError before anything runs (empty input, invalid
// config or overrides, a malformed history replacement, a missing
// permission hook); ErrBusy under the reject policy; *llm.Error for model
// failures with the model layer's kinds, and of kind aborted (wrapping
// ErrStopped, ErrReplaced or ErrClosed, or the context's cause) when the run
// was stopped, replaced, closed or its context ended — of kind timeout when
// ctx's deadline passed.
func (s *Session) Send(ctx context.Context, opts SendOptions) (res *Result, err error) {
	cont := opts.Continue
	if cont != nil {
		opts.Resume = true
	}
	input, perm, err := s.checkSend(opts)
	if err != nil {
		return nil, err
	}
	asked := s.StoredConfig() // never changed in place: read as it is
	if opts.Config != nil {
		asked = MergeConfig(asked, opts.Config)
	}
	cfg, err := s.resolve(asked, true)
	if err != nil {
		return nil, err
	}

	run, err := s.acquire(ctx, opts.Busy)
	if err != nil {
		return nil, err
	}
	defer func() { s.release(run, res, err) }()
	run.session, run.cfg, run.perm, run.onElicit, run.onCredential = s, cfg, perm, opts.OnElicit, opts.OnCredential
	run.budget = opts.Budget
	if run.budget == nil {
		run.budget = NewBudget(nil, nil)
	}
	if s.opts.Price != nil {
		run.price, _ = s.opts.Price(asked.GetProfile(), cfg.Model)
	}
	info := JournalRun{Busy: opts.Busy}
	if cont != nil {
		run.id, info.Attempt = cont.RunID, cont.Attempt
	}
	if err := run.begin(info); err != nil {
		return nil, err
	}
	run.budget.bind(run.id)
	run.observe(false)
	defer func() { run.ended(res, err) }()
	if at, why := run.budget.deadline(); !at.IsZero() {
		var stopTimer context.CancelFunc
		run.ctx, stopTimer = context.WithDeadlineCause(run.ctx, at, why)
		defer stopTimer()
	}
	run.emit = &emitter{runID: run.id, fn: opts.OnEvent}
	if cont != nil {
		run.emit.seq, run.emit.attempt = cont.LastSeq, int32(cont.Attempt)
	}
	run.limiter = tool.NewLimiter(cfg.MaxToolConcurrency)

	if opts.History != nil {
		if err := run.replace(opts.History.GetMessages()); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	tools, skills := s.tools, s.skills
	s.mu.Unlock()
	if opts.Tools != nil {
		tools = opts.Tools
	}
	if run.tools, err = newToolbox(tools, skills); err != nil {
		return nil, err
	}
	s.opts.Logger.Debug("run started", "agent", s.id, "run", run.id)
	if opts.Resume && cont == nil {
		if h := s.snapshot(); len(h) == 0 || h[len(h)-1].GetRole() == agentv1.Role_ROLE_ASSISTANT {
			return nil, ErrNothingToResume
		}
	}
	if cont == nil {
		run.emit.runStarted(s.id)
	}
	if cont != nil && len(cont.Input) > 0 && s.HistoryLength() <= cont.HistoryStart {
		opts.Resume, input = false, history.UserParts(cont.Input...) // the crash came before the input was stored
	}
	if !opts.Resume {
		if err := run.commit(false, nil, input); err != nil { // durable with the step's first response
			return nil, err
		}
	}
	res, err = run.loop(cont)
	if err != nil {
		return nil, err // the Observer logs the run's end
	}
	res.RunUsage, res.TreeUsage = run.budget.RunUsage()
	run.emit.result(res)
	return res, nil
}

// checkSend checks what can be checked before the session is touched.
func (s *Session) checkSend(opts SendOptions) (*agentv1.Message, permission, error) {
	var problems violations
	input := history.UserParts(opts.Input...)
	blank := true
	for _, p := range opts.Input {
		if t, ok := p.GetKind().(*agentv1.Part_Text); !ok || strings.TrimSpace(t.Text) != "" {
			blank = false
		}
	}
	switch {
	case opts.Resume:
		if len(opts.Input) > 0 {
			problems.add("input", "must be empty with resume: a resumed send goes on from the history as it is")
		}
		if opts.History != nil {
			problems.add("history", "cannot be replaced by a send with resume")
		}
	case len(opts.Input) == 0:
		problems.add("input", "is required: give at least one text or media part")
	case blank:
		problems.add("input", "is empty: the text parts hold only white space")
	default:
		problems.input(input)
	}
	if opts.History != nil {
		if err := problems.addErr(history.Validate(opts.History.GetMessages()), "history.messages"); err != nil {
			return nil, permission{}, err
		}
	}
	if _, ok := agentv1.BusyPolicy_name[int32(opts.Busy)]; !ok {
		problems.add("busy_policy", "unknown busy policy %d", opts.Busy)
	}
	perm := permission{mode: opts.PermissionMode, fn: opts.OnPermission}
	switch opts.PermissionMode {
	case agentv1.PermissionMode_PERMISSION_MODE_UNSPECIFIED, agentv1.PermissionMode_PERMISSION_MODE_ALLOW_ALL:
	case agentv1.PermissionMode_PERMISSION_MODE_ASK_ALL, agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED:
		if opts.OnPermission == nil {
			problems.add("permission_mode", "asks for approval, but no one can answer (no permission hook)")
		}
		if opts.PermissionMode == agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED {
			perm.ask = make(map[string]bool, len(opts.AskTools))
			for _, n := range opts.AskTools {
				perm.ask[n] = true
			}
		}
	default:
		problems.add("permission_mode", "unknown permission mode %d", opts.PermissionMode)
	}
	if err := problems.err(); err != nil {
		return nil, permission{}, err
	}
	return input, perm, nil
}

// modelFor returns the caller's eino model for cfg's requests, or nil to use
// the config's endpoint. A compaction uses the caller's model unless the
// compact block names a base URL or a model of its own.
func (s *Session) modelFor(cfg *llm.Config, compaction bool) model.ToolCallingChatModel {
	if compaction && cfg.Compact != nil && (cfg.Compact.BaseURL != "" || cfg.Compact.Model != "") {
		return nil
	}
	return s.opts.Model
}
