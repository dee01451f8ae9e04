package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/skill"
	"github.com/agentcore/agentcore/pkg/tool"
	"github.com/agentcore/agentcore/pkg/tool/live"
	pluginv1 "github.com/agentcore/agentcore/proto/agentcore/plugin/v1"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// InvalidCallName names, in history, a tool call whose tool name could not
// be read (text protocol): history requires a name on every call.
const InvalidCallName = "invalid_tool_call"

// toolbox is what one send offers the model: the tools with the built-in
// skill tool merged in (it wins over a tool of the same name), and their
// definitions for the window's estimate and the model request. It is built
// per send and dropped after, so an idle session holds none of it; the
// definitions themselves are converted once per tool (see toolForms).
type toolbox struct {
	set    *tool.Set
	skills string // the skills' system text; empty without skills
	specs  []*pluginv1.ToolSpec
	llm    *llm.ToolSet
	names  []string
}

// toolForms are the forms of one tool's definition a send needs, derived
// once per tool and kept with it (tool.Set.Derived).
type toolForms struct {
	spec *pluginv1.ToolSpec // for the window's token estimate
	def  *llm.ToolDef       // for the model request
}

// formsKey is the tool.Set.Derived key of toolForms.
type formsKey struct{}

func deriveForms(sp tool.Spec) (any, error) {
	def, err := llm.NewToolDef(sp.Name, sp.Description, sp.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", sp.Name, err)
	}
	spec := &pluginv1.ToolSpec{Name: sp.Name, Description: sp.Description, InputSchemaJson: string(sp.InputSchema)}
	return &toolForms{spec: spec, def: def}, nil
}

// newToolbox builds the toolbox of tools and skills.
func newToolbox(tools *tool.Set, skills *skill.Set) (*toolbox, error) {
	b := &toolbox{set: tools}
	if skills.Len() > 0 {
		st, err := skills.Tool()
		if err != nil {
			return nil, fmt.Errorf("skill tool: %w", err)
		}
		b.set = tool.Merge(tools, st)
		b.skills = skills.SystemText()
	}
	b.names = b.set.Names()
	b.specs = make([]*pluginv1.ToolSpec, len(b.names))
	defs := make([]*llm.ToolDef, len(b.names))
	for i, name := range b.names {
		f, err := b.set.Derived(name, formsKey{}, deriveForms)
		if err != nil {
			return nil, err
		}
		b.specs[i], defs[i] = f.(*toolForms).spec, f.(*toolForms).def
	}
	b.llm = llm.NewToolSet(defs...)
	return b, nil
}

// offered reports whether the model is offered any tool under cfg: there is
// one, and it goes out natively or through the text protocol.
func (b *toolbox) offered(cfg *llm.Config) bool {
	return len(b.names) > 0 && (cfg.Capabilities.Tools || cfg.ToolMode != llm.ToolModeNative)
}

// call is one tool call of a round: a call to run, or an invalid one to
// answer with its feedback.
type call struct {
	part    *agentv1.ToolCallPart
	invalid string // the error result text of an invalid call
}

// permission says which calls need approval and who approves them.
type permission struct {
	mode agentv1.PermissionMode
	ask  map[string]bool
	fn   PermissionFunc
}

func (p permission) asks(name string) bool {
	switch p.mode {
	case agentv1.PermissionMode_PERMISSION_MODE_ASK_ALL:
		return true
	case agentv1.PermissionMode_PERMISSION_MODE_ASK_LISTED:
		return p.ask[name]
	}
	return false
}

// Texts of results the engine writes itself.
const (
	// deniedText answers a call the permission hook refused.
	deniedText = "Permission denied: the user did not allow this call of %s, so it did not run. Do not repeat it unchanged."
	// unrecordedText answers a call that did not run because the history
	// holding it could not be stored.
	unrecordedText = "Not run: the history holding this call of %s could not be stored, so the call did not run."
	// notRunText answers a call the run was stopped before it ran.
	notRunText = "Not run: the run was stopped while this call of %s waited for permission."
	// overBudgetText answers a call past a limit of the run's budget.
	overBudgetText = "Not run: %v. This call of %s did not run, and the run ends after this round."
)

// runTools runs the calls of one round in parallel (the config's
// concurrency cap applies through the limiter) and returns their results
// in call order, and whether a tool asked to stop. When ctx ends the tools
// are killed and every call still gets a result saying so.
func (r *run) runTools(ctx context.Context, step int, calls []call) ([]*agentv1.Part, bool) {
	results := make([]*agentv1.Part, len(calls))
	stops := make([]bool, len(calls))
	for _, c := range calls {
		if _, known := r.tools.set.Lookup(c.part.GetName()); known && c.invalid == "" {
			// A call about to run is stored before it has any effect; when
			// it cannot be, none runs, and the run fails at its next write.
			if err := r.releaseJournal(); err != nil {
				for i, c := range calls {
					if c.invalid == "" {
						calls[i].invalid = fmt.Sprintf(unrecordedText, c.part.GetName())
					}
				}
			}
			break
		}
	}
	var wg sync.WaitGroup
	last := -1 // the last call to run runs on this goroutine: most rounds have one
	for i, c := range calls {
		if c.invalid != "" {
			results[i] = history.ToolResult(c.part.GetId(), c.part.GetName(), history.TextOutput(c.invalid), true)
			r.emit.toolCall(step, c.part.GetId(), c.part.GetName(), c.part.GetArguments(), nil)
			r.emit.toolResult(step, results[i].GetToolResult(), false, 0)
			continue
		}
		if last >= 0 {
			k := last
			wg.Go(func() { results[k], stops[k] = r.runTool(ctx, step, calls[k].part, 1) })
		}
		last = i
	}
	if last >= 0 {
		results[last], stops[last] = r.runTool(ctx, step, calls[last].part, 1)
	}
	wg.Wait()
	return results, slices.Contains(stops, true)
}

// runTool asks permission when needed, then runs one call; attempt counts
// its executions (more than 1: run again after a crash cut it off).
func (r *run) runTool(ctx context.Context, step int, c *agentv1.ToolCallPart, attempt int) (*agentv1.Part, bool) {
	id, name, args := c.GetId(), c.GetName(), c.GetArguments()
	obs := r.session.opts.Observer
	tc := &ToolCall{Run: &r.info, Step: step, ID: id, Name: name, Arguments: args}
	var perm *agentv1.PermissionDecision // the answer, in the tool_call event
	if r.perm.asks(name) {
		r.emit.permissionRequest(id, name, args, false)
		d := r.perm.fn(ctx, PermissionRequest{RunID: r.id, Step: step, ToolCallID: id, ToolName: name, Arguments: args})
		obs.PermissionDecided(ctx, tc, d, ctx.Err() != nil)
		text := ""
		perm = &agentv1.PermissionDecision{Outcome: agentv1.PermissionOutcome_PERMISSION_OUTCOME_ALLOWED}
		switch {
		case ctx.Err() != nil:
			text = fmt.Sprintf(notRunText, name)
			perm.Outcome = agentv1.PermissionOutcome_PERMISSION_OUTCOME_NOT_ANSWERED
		case !d.Allow:
			text = fmt.Sprintf(deniedText, name)
			if d.Reason != "" {
				text += " Reason: " + d.Reason
			}
			perm.Outcome, perm.Reason = agentv1.PermissionOutcome_PERMISSION_OUTCOME_DENIED, d.Reason
		}
		if text != "" {
			p := history.ToolResult(id, name, history.TextOutput(text), true)
			r.emit.toolCall(step, id, name, args, perm)
			r.emit.toolResult(step, p.GetToolResult(), false, 0)
			return p, false
		}
	}
	if be := r.budget.take(false); be != nil {
		r.over.CompareAndSwap(nil, be)
		p := history.ToolResult(id, name, history.TextOutput(fmt.Sprintf(overBudgetText, be, name)), true)
		r.emit.toolCall(step, id, name, args, perm)
		r.emit.toolResult(step, p.GetToolResult(), false, 0)
		return p, false
	}
	ctx = withCall(ctx, &Call{AgentID: r.session.id, RunID: r.id, ToolCallID: id, Step: step, Budget: r.budget, emit: r.emit})
	opts := tool.Options{CallID: id, Limit: int(r.cfg.MaxToolOutput), Limiter: r.limiter, MaxBytes: r.session.opts.MaxToolResultBytes,
		Redact: r.session.opts.RedactToolOutput, IdempotencyKey: r.id + "/" + id, Attempt: attempt, HostHandler: r.hostHandler(step, id, name)}
	// The call is announced before it starts, and the run then yields
	// twice: the goroutines this step woke (the event stream's writer with
	// this event, the journal's write just released, the event log) run now
	// instead of between the call's request and its write on the plugin's
	// socket. grpc-go's writer yields once before it flushes a small batch,
	// so the first yield lets it take its batch and the second lets it
	// write it; without them, on two busy cores, the request waited behind
	// them (about 35 µs, half of what a run added to a warm call).
	r.emit.toolCall(step, id, name, args, perm)
	runtime.Gosched()
	runtime.Gosched()
	if r.emit.on() {
		opts.OnOutput = func(ch tool.Chunk) { r.emit.toolOutput(id, name, ch.Stream, ch.Data) }
		opts.Live = live.Options{MaxBytes: r.cfg.MaxLiveOutput, Stop: r.session.opts.LiveOutputStop, Interval: live.DefaultInterval,
			OnCapped: func(c live.Capped) {
				r.session.opts.Logger.Info("tool live output over its cap: the rest was not streamed or stored", "agent", r.session.id, "run", r.id,
					"call", id, "tool", name, "max_bytes", c.MaxBytes, "dropped_bytes", c.DroppedBytes, "stopped", c.Stopped)
				r.emit.toolOutputCapped(id, name, c)
			}}
	}
	r.toolCalls.Add(1)
	_, tc.Known = r.tools.set.Lookup(name)
	tc.Start = time.Now()
	tctx := obs.ToolStarted(ctx, tc)
	res := r.tools.set.Execute(tctx, name, json.RawMessage(args), opts)
	if res.Duration == 0 {
		res.Duration = time.Since(tc.Start)
	}
	obs.ToolEnded(tctx, tc, res)
	p := history.ToolResult(id, name, res.Output, res.Error)
	r.emit.toolResult(step, p.GetToolResult(), res.Stop, res.Duration)
	return p, res.Stop && ctx.Err() == nil
}
