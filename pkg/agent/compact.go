package agent

import (
	"context"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/window"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Compact summarises the history now, agent-core's agent.compact: it
// stops a running send first (that send returns aborted, wrapping
// ErrReplaced), asks the compaction model for a summary of the context the
// next request would hold, appends the summary to the history and returns
// it. onEvent (may be nil) receives the compaction's events (started with
// manual set, deltas, retries, finished), numbered from 1 under a run id of
// their own. Errors are as Send's; ErrNothingToCompact when no message
// follows the latest summary.
func (s *Session) Compact(ctx context.Context, onEvent func(*agentv1.Event)) (summary string, err error) {
	cfg, err := s.resolve(s.Config(), true)
	if err != nil {
		return "", err
	}
	run, err := s.acquire(ctx, agentv1.BusyPolicy_BUSY_POLICY_REPLACE)
	if err != nil {
		return "", err
	}
	defer func() {
		var res *Result
		if err == nil {
			res = &Result{RunID: run.id, Text: summary, Usage: run.usage}
		}
		s.release(run, res, err)
	}()
	run.session, run.cfg, run.usage = s, cfg, &agentv1.Usage{}
	if err := run.begin(JournalRun{Compaction: true, Busy: agentv1.BusyPolicy_BUSY_POLICY_REPLACE}); err != nil {
		return "", err
	}
	run.observe(true)
	defer func() { run.ended(nil, err) }()
	run.emit = &emitter{runID: run.id, fn: onEvent}
	s.mu.Lock()
	skills := s.skills
	s.mu.Unlock()
	run.tools = &toolbox{skills: skills.SystemText()}

	h := s.snapshot()
	if last := len(h) - 1; last < 0 || history.IsSummary(h[last]) {
		return "", ErrNothingToCompact
	}
	// Count tokens even without a budget: the started event reports them.
	if run.counter, err = s.tokenCounter(cfg.Model); err != nil {
		return "", err
	}
	w, err := run.window(false)
	if err != nil {
		return "", err
	}
	return run.compact(run.ctx, w, true)
}

// Preview is what the next model request would hold, for PreviewContext.
type Preview struct {
	// System is the system prompt, with skills and the latest summary
	// folded in (without the text tool protocol's instructions).
	System string
	// Messages are the messages that would be sent.
	Messages []*agentv1.Message
	// Tokens estimates system, tools and messages.
	Tokens int
	// MaxTokens is the config's budget, 0 if none.
	MaxTokens int
	// WouldCompact says the next round would compact first.
	WouldCompact bool
	// HistoryTokens estimates the whole history, as if nothing were trimmed.
	HistoryTokens int
}

// Preview builds the context the next send would start with, input (may be
// empty) counted as its user message, using the session's config, tools
// and skills. Bad input or config is a *ValidationError.
func (s *Session) Preview(input []*agentv1.Part) (*Preview, error) {
	var problems violations
	msg := history.UserParts(input...)
	if len(input) > 0 {
		problems.input(msg)
		if err := problems.err(); err != nil {
			return nil, err
		}
	}
	cfg, err := s.resolve(s.Config(), false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	tools, skills := s.tools, s.skills
	s.mu.Unlock()
	box, err := newToolbox(tools, skills)
	if err != nil {
		return nil, err
	}
	r := &run{session: s, cfg: cfg, tools: box}
	if r.counter, err = s.tokenCounter(cfg.Model); err != nil {
		return nil, err
	}
	h := s.snapshot()
	if len(input) > 0 {
		h = append(h, msg)
	}
	w, err := window.Build(h, r.options(box.offered(cfg)))
	if err != nil {
		return nil, err
	}
	return &Preview{
		System: w.System, Messages: w.Messages, Tokens: w.Tokens.Total, MaxTokens: int(cfg.MaxTokens),
		WouldCompact: w.Compact, HistoryTokens: w.HistoryTokens,
	}, nil
}
