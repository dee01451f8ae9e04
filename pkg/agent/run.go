package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcore/agentcore/pkg/agent/hostreq"
	"github.com/agentcore/agentcore/pkg/compact"
	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tokens"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/truncate"
	"github.com/agentcore/agentcore/pkg/window"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// run is one send or compaction holding the session's slot.
type run struct {
	id     string
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the run has fully ended

	session *Session
	cfg     *llm.Config
	tools   *toolbox
	perm    permission
	emit    *emitter
	limiter *tool.Limiter
	counter *tokens.Counter // nil unless the config has a token budget
	usage   *agentv1.Usage  // summed over the run
	ids     map[string]bool // tool-call ids in the history, made on first use
	// begun says the journal knows the run (Begin succeeded), as jrun.
	begun bool
	jrun  JournalRun
	// win and conv keep the run's context and the model layer's form of
	// the history between its steps, so a step works on what is new.
	win  window.Cache
	conv llm.ConversionCache
	// info is what the session's Observer is told about the run;
	// toolCalls counts the calls that ran (from the tools' goroutines).
	info      RunInfo
	toolCalls atomic.Int64
	// budget counts what the run spends, within its limits and its
	// ancestors'; price is its model's; over is the limit a tool call
	// found reached (the run ends after the round).
	budget *Budget
	price  Price
	over   atomic.Pointer[BudgetError]
	// onElicit answers the tools' elicitation requests (nil: none can be);
	// sampleMu guards usage against the tools' samplings of one round.
	onElicit hostreq.ElicitFunc
	// onCredential answers the MCP host processes' credential requests.
	onCredential hostreq.CredentialFunc
	sampleMu     sync.Mutex
}

// observe tells the session's Observer that the run starts; the run's
// context becomes the one the Observer returns.
func (r *run) observe(compaction bool) {
	r.info = RunInfo{
		AgentID: r.session.id, RunID: r.id, Compaction: compaction, Attempt: r.jrun.Attempt,
		Protocol: string(r.cfg.Protocol), Model: r.cfg.Model, Start: time.Now(), Budget: r.budget,
	}
	r.ctx = r.session.opts.Observer.RunStarted(r.ctx, &r.info)
}

// ended tells the session's Observer that the run has ended.
func (r *run) ended(res *Result, err error) {
	r.info.ToolCalls = int(r.toolCalls.Load())
	r.info.Usage = r.usage
	if r.info.Usage == nil {
		r.info.Usage = &agentv1.Usage{}
	}
	r.session.opts.Observer.RunEnded(r.ctx, &r.info, res, err)
}

// modelCall describes a model request of the run to the Observer.
func (r *run) modelCall(step int, w *window.Context, compaction bool) *ModelCall {
	m := &ModelCall{
		Run: &r.info, Step: step, Compaction: compaction, Protocol: string(r.cfg.Protocol), Model: r.cfg.Model,
		System: w.System, Messages: w.Messages, Start: time.Now(),
	}
	if cc := r.cfg.Compact; compaction && cc != nil {
		if cc.Protocol != "" {
			m.Protocol = string(cc.Protocol)
		}
		if cc.Model != "" {
			m.Model = cc.Model
		}
	}
	return m
}

// loop is the agent loop of one send, after its input is in the history;
// a continued run (c) first takes up where its history stands.
func (r *run) loop(c *Continuation) (*Result, error) {
	ctx := r.ctx
	res := &Result{RunID: r.id, Usage: &agentv1.Usage{}}
	r.usage = res.Usage
	if r.cfg.MaxTokens > 0 {
		c, err := r.session.tokenCounter(r.cfg.Model)
		if err != nil {
			return nil, err
		}
		r.counter = c
	}
	offered := r.tools.offered(r.cfg)
	var tools *llm.ToolSet
	if offered {
		tools = r.tools.llm
	}
	first, noTool := 1, 0
	if c != nil {
		next, n, done, err := r.resume(ctx, c, offered)
		if err != nil || done != nil {
			return done, err
		}
		first, noTool = next, n
	}
	for step := first; ; step++ {
		if ctx.Err() != nil {
			return r.cut(ctx, res)
		}
		if be := r.budget.take(true); be != nil {
			return r.overBudget(res, be)
		}
		w, err := r.window(offered)
		if err != nil {
			return nil, err
		}
		if w.Compact { // at most once per round, however large the result
			if _, err := r.compact(ctx, w, false); err != nil {
				if ctx.Err() != nil {
					return r.cut(ctx, res)
				}
				return nil, err
			}
			if w, err = r.window(offered); err != nil {
				return nil, err
			}
		}
		if r.emit.on() {
			ev := &agentv1.ModelRequestEvent{Step: int32(step), MessageCount: int32(len(w.Messages))}
			if r.cfg.MaxTokens > 0 {
				ev.TokenEstimate = int64(w.Tokens.Total)
			}
			if offered {
				ev.Tools = r.tools.names
			}
			r.emit.modelRequest(ev)
		}
		r.info.Steps = step
		out, price, err := r.ask(ctx, step, w, tools)
		if err != nil && ctx.Err() != nil {
			return r.cut(ctx, res)
		}
		if err != nil {
			if out != nil && out.Message != nil && errors.Is(err, llm.ErrInvalidOutput) {
				if _, jerr := r.record(out, price); jerr != nil { // the answer is kept; the send fails
					return nil, jerr
				}
			}
			return nil, r.failure(ctx, err)
		}
		calls, err := r.record(out, price)
		if err != nil {
			return nil, err
		}
		resp := r.response(step, out)
		r.emit.modelResponse(resp)
		res.Steps, res.Text = step, out.Text

		if len(calls) == 0 {
			noTool++
			r.emit.step(step, resp, nil)
			n := r.cfg.NoToolRounds
			switch {
			case !offered || out.Output != nil || n > 0 && noTool >= n:
				// A valid structured answer is final, whatever no_tool_rounds says.
				res.Reason, res.Output = agentv1.EndReason_END_REASON_NO_TOOL, out.Output
				return res, nil
			case r.cfg.MaxSteps > 0 && step >= r.cfg.MaxSteps:
				res.Reason = agentv1.EndReason_END_REASON_STEP_LIMIT
				return res, nil
			case n >= 2 && noTool == n-1 && r.cfg.NoToolPrompt != "":
				// The next round is the last one allowed without a tool call.
				if err := r.commit(false, nil, history.User(r.cfg.NoToolPrompt)); err != nil {
					return nil, err
				}
			}
			continue
		}
		noTool = 0
		results, stop := r.runTools(ctx, step, calls)
		if err := r.commit(true, nil, history.Tool(results...)); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return r.cut(ctx, res)
		}
		r.emit.step(step, resp, results)
		switch {
		case stop:
			res.Reason = agentv1.EndReason_END_REASON_TOOL_STOP
			return res, nil
		case r.over.Load() != nil:
			return r.overBudget(res, r.over.Load())
		case r.cfg.MaxSteps > 0 && step >= r.cfg.MaxSteps:
			res.Reason = agentv1.EndReason_END_REASON_STEP_LIMIT
			return res, nil
		}
	}
}

// cut ends a run whose context ended: normally when a wall time of its
// budget passed, else aborted.
func (r *run) cut(ctx context.Context, res *Result) (*Result, error) {
	var be *BudgetError
	if errors.As(context.Cause(ctx), &be) {
		return r.overBudget(res, be)
	}
	return nil, aborted(ctx)
}

// overBudget ends a run whose budget (or an ancestor's) reached a limit.
func (r *run) overBudget(res *Result, be *BudgetError) (*Result, error) {
	r.emit.budgetExceeded(be.Proto())
	res.Reason, res.Exceeded = agentv1.EndReason_END_REASON_BUDGET, be
	return res, nil
}

// options are the window options of the run's requests.
func (r *run) options(offered bool) window.Options {
	o := window.Options{
		System:    r.cfg.System,
		Skills:    r.tools.skills,
		Reasoning: r.cfg.Capabilities.Reasoning,
		Counter:   r.counter,
		MaxTokens: int(r.cfg.MaxTokens),
		Threshold: r.cfg.CompactThreshold,
		Cache:     &r.win,
	}
	if offered {
		o.Tools = r.tools.specs
	}
	return o
}

// window builds the context of the next request from the history.
func (r *run) window(offered bool) (*window.Context, error) {
	return window.Build(r.session.snapshot(), r.options(offered))
}

// failure turns an error of a model request into the send's error.
func (r *run) failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return aborted(ctx)
	}
	var problems violations
	if err := problems.addErr(err, "history"); err != nil {
		return err
	}
	return problems.err()
}

// record writes a model response to the history and the usage totals (its
// cost at price, the price of the model that answered), and
// returns its tool calls in order (an error when the journal failed). Before that it makes the response safe to
// keep: a call id already used in the history (some gateways repeat ids) or
// missing gets a fresh one, and an invalid call (unreadable arguments) keeps
// `{}` as arguments and a name, its raw text going into its error result.
func (r *run) record(out *llm.Result, price Price) ([]call, error) {
	invalid := make(map[string]string, len(out.InvalidToolCalls))
	for _, ic := range out.InvalidToolCalls {
		text := ic.Feedback
		if ic.Arguments != "" {
			text += "\n\nWhat you wrote:\n" + truncate.Text(ic.Arguments, int(r.cfg.MaxToolOutput))
		}
		invalid[ic.ID] = text
	}
	var calls []call
	for _, p := range out.Message.GetParts() {
		c := p.GetToolCall()
		if c == nil {
			continue
		}
		orig := c.GetId()
		if r.ids == nil {
			r.ids = usedIDs(r.session.snapshot())
		}
		if c.Id == "" || r.ids[c.Id] {
			c.Id = newID("call_")
		}
		r.ids[c.Id] = true
		cl := call{part: c}
		if text, bad := invalid[orig]; bad {
			cl.invalid = text
			c.Arguments = "{}"
			if c.Name == "" {
				c.Name = InvalidCallName
			}
		} else if c.Arguments != "" && !json.Valid([]byte(c.Arguments)) {
			// Not reported invalid, yet not JSON: never store it.
			cl.invalid = "The arguments of your call to " + c.Name + " are not valid JSON. Call the tool again with valid JSON arguments."
			c.Arguments = "{}"
		}
		calls = append(calls, cl)
	}
	// A response with tool calls is durable with the step's tool results.
	if err := r.commitPriced(len(calls) == 0, out.Usage, price, out.Message); err != nil {
		return nil, err
	}
	return calls, nil
}

// usedIDs returns the tool-call ids of a history.
func usedIDs(h []*agentv1.Message) map[string]bool {
	ids := map[string]bool{}
	for _, m := range h {
		if m.GetRole() != agentv1.Role_ROLE_ASSISTANT {
			continue
		}
		for _, p := range m.GetParts() {
			if c := p.GetToolCall(); c != nil {
				ids[c.GetId()] = true
			}
		}
	}
	return ids
}

// response is the ModelResponseEvent of a recorded response.
func (r *run) response(step int, out *llm.Result) *agentv1.ModelResponseEvent {
	if !r.emit.on() {
		return nil
	}
	ev := &agentv1.ModelResponseEvent{
		Step: int32(step), Text: out.Text, Reasoning: out.Reasoning, Usage: out.Usage, FinishReason: out.FinishReason,
	}
	for _, p := range out.Message.GetParts() {
		if c := p.GetToolCall(); c != nil {
			ev.ToolCalls = append(ev.ToolCalls, c)
		}
	}
	return ev
}

// compact summarises the context w with the compaction model and appends
// the summary to the history.
func (r *run) compact(ctx context.Context, w *window.Context, manual bool) (string, error) {
	r.emit.compactStarted(w.Tokens.Total, manual)
	obs := r.session.opts.Observer
	mc := r.modelCall(r.info.Steps, w, true)
	ctx = obs.ModelStarted(ctx, mc)
	req := compact.Request{
		Config:   r.cfg,
		System:   w.System,
		Messages: w.Messages,
		Model:    r.session.modelFor(r.cfg, true),
		OnRetry: func(rt llm.Retry) {
			r.emit.retry(rt, true)
			obs.ModelRetried(ctx, mc, rt)
		},
		OnDelta: func(text string) {
			if mc.FirstDelta.IsZero() {
				mc.FirstDelta = time.Now()
			}
			if r.emit.on() {
				r.emit.compactDelta(text)
			}
		},
	}
	out, err := compact.Run(ctx, r.session.opts.LLM, req)
	var res *llm.Result
	if out != nil {
		res = &llm.Result{Text: out.Summary, Usage: out.Usage}
	}
	obs.ModelEnded(ctx, mc, res, err)
	if err != nil {
		return "", r.failure(ctx, err)
	}
	if err := r.commit(true, out.Usage, history.Compact(out.Summary)); err != nil {
		return "", err
	}
	r.emit.compactFinished(out.Summary, out.Usage)
	return out.Summary, nil
}
