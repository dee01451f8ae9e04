package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Continuation resumes a run that a crash cut off (SendOptions.Continue):
// the run keeps its id, its events follow its stored ones, and it goes on
// from the last durable step of the history, never asking the model again
// for a round whose response is in it.
type Continuation struct {
	// RunID is the run's id.
	RunID string
	// Attempt numbers this resumption (1 the first time); the run's events
	// carry it.
	Attempt int
	// LastSeq is the seq of the run's last stored event: the next is LastSeq+1.
	LastSeq int64
	// HistoryStart is where the run's messages begin in the history (its
	// input, or its first response for a send with resume).
	HistoryStart int
	// Input is the send's input: stored with the run's first step, it is
	// not in the history when the crash came before that step's end, and
	// goes in first then.
	Input []*agentv1.Part
	// CutCalls says how a cut-off call of a tool neither idempotent nor
	// read-only is answered: reported as may-or-may-not-have-run, or (ASK)
	// after asking permission to run it again (OnPermission).
	CutCalls agentv1.CutCalls
	// Replica names who resumes the run, for the RunResumedEvent.
	Replica string
}

// CutText answers, in the history, a call that a crash cut off and that
// did not run again.
const CutText = "The server stopped (restart or crash) before this call of %s finished: it may or may not have run, and its result is lost."

// rerunSuffix marks the permission request asking to run a cut-off call
// again: the call's own id may have a request already.
const rerunSuffix = "#rerun"

// resumePoint is where a resumed run stands in its history.
type resumePoint struct {
	steps  int                     // model rounds recorded
	noTool int                     // consecutive rounds without a call at the end
	text   string                  // the last round's text
	last   *agentv1.Message        // the last response, when the history ends with one
	cut    []*agentv1.ToolCallPart // its calls, when they have no results
	usage  *agentv1.Usage          // summed over the recorded responses
	ended  bool                    // the history ends with the model's answer
	prompt bool                    // the history ends with the no-tool prompt
}

// resumePointOf reads the run's messages, those of h from start.
func resumePointOf(h []*agentv1.Message, start int, noToolPrompt string) resumePoint {
	p := resumePoint{usage: &agentv1.Usage{}}
	start = min(max(start, 0), len(h))
	for _, m := range h[start:] {
		switch m.GetRole() {
		case agentv1.Role_ROLE_ASSISTANT:
			if m.GetCompact() {
				continue
			}
			p.steps++
			addUsage(p.usage, m.GetUsage())
			p.text = textOf(m)
			if hasCalls(m) {
				p.noTool = 0
			} else {
				p.noTool++
			}
		}
	}
	if len(h) == start {
		return p
	}
	last := h[len(h)-1]
	switch {
	case last.GetRole() == agentv1.Role_ROLE_ASSISTANT && !last.GetCompact():
		p.last = last
		for _, part := range last.GetParts() {
			if c := part.GetToolCall(); c != nil {
				p.cut = append(p.cut, c)
			}
		}
		p.ended = len(p.cut) == 0
	case last.GetRole() == agentv1.Role_ROLE_USER && noToolPrompt != "" && textOf(last) == noToolPrompt:
		p.prompt = true
	}
	return p
}

// resume takes a continued run up where its history stands: it answers the
// calls the crash cut off (step) and says whether the run had ended
// already (res), else from which step the loop goes on and how many rounds
// without a call came last.
func (r *run) resume(ctx context.Context, c *Continuation, offered bool) (next, noTool int, res *Result, err error) {
	p := resumePointOf(r.session.snapshot(), c.HistoryStart, r.cfg.NoToolPrompt)
	addUsage(r.usage, p.usage)
	r.info.Steps = p.steps
	ev := &agentv1.RunResumedEvent{Attempt: int32(c.Attempt), Replica: c.Replica, Step: int32(p.steps + 1)}
	rerun := make([]bool, len(p.cut))
	for i, call := range p.cut {
		sp, known := r.tools.set.Lookup(call.GetName())
		rerun[i] = known && (sp.Idempotent || sp.ReadOnly)
		if rerun[i] {
			ev.RerunCallIds = append(ev.RerunCallIds, call.GetId())
		} else {
			ev.ReportedCallIds = append(ev.ReportedCallIds, call.GetId())
		}
	}
	if len(p.cut) > 0 {
		ev.Step = int32(p.steps)
	}
	r.emit.runResumed(ev)
	// A valid structured answer stored is final, as in the loop.
	var output *structpb.Value
	if p.ended && r.cfg.Output != nil {
		output, _ = llm.ParseOutput(r.cfg.Output, p.text)
	}
	done := func(reason agentv1.EndReason) *Result {
		return &Result{RunID: r.id, Text: p.text, Steps: p.steps, Usage: r.usage, Reason: reason, Output: output}
	}
	n := r.cfg.NoToolRounds
	switch {
	case len(p.cut) > 0:
		step := p.steps
		results, stop := r.runCut(ctx, step, p.cut, rerun, c)
		if err := r.commit(true, nil, history.Tool(results...)); err != nil {
			return 0, 0, nil, err
		}
		if ctx.Err() != nil {
			return 0, 0, nil, aborted(ctx)
		}
		r.emit.step(step, r.recorded(step, p.last), results)
		switch {
		case stop:
			return 0, 0, done(agentv1.EndReason_END_REASON_TOOL_STOP), nil
		case r.cfg.MaxSteps > 0 && step >= r.cfg.MaxSteps:
			return 0, 0, done(agentv1.EndReason_END_REASON_STEP_LIMIT), nil
		}
		return step + 1, 0, nil, nil
	case p.ended && (!offered || output != nil || n > 0 && p.noTool >= n):
		return 0, 0, done(agentv1.EndReason_END_REASON_NO_TOOL), nil
	case p.ended && r.cfg.MaxSteps > 0 && p.steps >= r.cfg.MaxSteps:
		return 0, 0, done(agentv1.EndReason_END_REASON_STEP_LIMIT), nil
	case p.ended && n >= 2 && p.noTool == n-1 && r.cfg.NoToolPrompt != "" && !p.prompt:
		if err := r.commit(false, nil, history.User(r.cfg.NoToolPrompt)); err != nil {
			return 0, 0, nil, err
		}
	}
	return p.steps + 1, p.noTool, nil, nil
}

// recorded is the ModelResponseEvent of a response read from the history.
func (r *run) recorded(step int, m *agentv1.Message) *agentv1.ModelResponseEvent {
	if !r.emit.on() || m == nil {
		return nil
	}
	ev := &agentv1.ModelResponseEvent{Step: int32(step), Text: textOf(m), Usage: m.GetUsage(), FinishReason: m.GetFinishReason()}
	for _, p := range m.GetParts() {
		if c := p.GetToolCall(); c != nil {
			ev.ToolCalls = append(ev.ToolCalls, c)
		} else if rp := p.GetReasoning(); rp != nil {
			ev.Reasoning += rp.GetText()
		}
	}
	return ev
}

// runCut answers the calls a crash cut off, in parallel: those marked
// rerun run again; the others are asked about (cut_calls ASK, when someone
// can answer) or reported as may-or-may-not-have-run.
func (r *run) runCut(ctx context.Context, step int, calls []*agentv1.ToolCallPart, rerun []bool, c *Continuation) ([]*agentv1.Part, bool) {
	results := make([]*agentv1.Part, len(calls))
	stops := make([]bool, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() {
			again := rerun[i] || c.CutCalls == agentv1.CutCalls_CUT_CALLS_ASK && r.perm.fn != nil && r.askRerun(ctx, step, call)
			if again {
				results[i], stops[i] = r.runTool(ctx, step, call, c.Attempt+1)
				return
			}
			results[i] = history.ToolResult(call.GetId(), call.GetName(), history.TextOutput(fmt.Sprintf(CutText, call.GetName())), true)
			r.emit.toolCall(step, call.GetId(), call.GetName(), call.GetArguments(), nil)
			r.emit.toolResult(step, results[i].GetToolResult(), false, 0)
		})
	}
	wg.Wait()
	stop := false
	for _, s := range stops {
		stop = stop || s
	}
	return results, stop
}

// askRerun asks permission to run a cut-off call again.
func (r *run) askRerun(ctx context.Context, step int, call *agentv1.ToolCallPart) bool {
	id := call.GetId() + rerunSuffix
	r.emit.permissionRequest(id, call.GetName(), call.GetArguments(), true)
	d := r.perm.fn(ctx, PermissionRequest{RunID: r.id, Step: step, ToolCallID: id, ToolName: call.GetName(), Arguments: call.GetArguments()})
	return d.Allow && ctx.Err() == nil
}

// textOf joins the text parts of a message.
func textOf(m *agentv1.Message) string {
	var b strings.Builder
	for _, p := range m.GetParts() {
		if t, ok := p.GetKind().(*agentv1.Part_Text); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// hasCalls reports whether a message holds a tool call.
func hasCalls(m *agentv1.Message) bool {
	for _, p := range m.GetParts() {
		if p.GetToolCall() != nil {
			return true
		}
	}
	return false
}
