// Package compact summarises an agent's context with the compaction model,
// agent-core's Compact.run.
//
// The summary replaces, for the model, everything it summarises: the engine
// appends it to the history as a compaction summary (history.Compact) and
// pkg/window folds the latest one into the system prompt. So the request asks
// the model to keep what the agent cannot continue without: the user's
// original goal, the data tools confirmed, what is done and what is left.
//
// The conversation goes to the compaction model as a transcript in one user
// message (history.RenderWith, English labels), under Instructions as its
// system prompt, rather than as the original messages. That way the request
// holds no tool calls and needs no tool definitions (Anthropic rejects
// tool_use blocks without them; a cheaper compaction model may not support
// tools at all), the model cannot answer with a tool call, and any model can
// read it. Media are shown as placeholders ([image], [file …]).
//
// The request uses the compaction model (llm.Config.CompactionConfig): the
// `compact` block of the agent's config over its main model, never the
// task's structured output format, never tools. Retries and their callback
// are pkg/llm's.
package compact

import (
	"context"
	"strings"

	"github.com/cloudwego/eino/components/model"

	"github.com/agentcore/agentcore/pkg/history"
	"github.com/agentcore/agentcore/pkg/llm"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Instructions is the system prompt of a compaction request.
const Instructions = `You compact the working memory of an AI agent whose conversation has grown too long for its context window. You get the agent's system prompt (which may hold a summary it wrote earlier) and the conversation so far, as a transcript. Write the summary that will replace all of it: the agent will continue the task from your summary alone.

Keep, in this order:
1. The user's original goal: every request the user made, quoted word for word where it is short, with its constraints and preferences. This matters most: never drop the goal or water it down.
2. The data confirmed by tools: facts, numbers, names, paths, ids and results that the tools returned and later steps need, exactly as the tools gave them.
3. What is done: the steps completed and their outcomes, failures included, and what was learned from them.
4. What is left: the steps that remain, and the next one.

If the system prompt holds an earlier summary, fold it in and keep everything in it that still matters. Write plain text with short headed sections or lists, in the language of the user's requests. Output only the summary: no preamble, no questions, no tool calls.`

// Ask closes the transcript message of a compaction request.
const Ask = "Write the summary now, following your instructions."

// Request is one compaction.
type Request struct {
	// Config is the agent's resolved configuration. Run uses its compaction
	// model (Config.CompactionConfig): the compact block over the main model,
	// without structured output or tools. Required.
	Config *llm.Config
	// System is the system prompt the agent works under, as built for its
	// context (its own prompt, the skills list, the latest earlier summary).
	// It is shown to the compaction model inside the transcript.
	System string
	// Messages are the messages to summarise, e.g. the context the agent
	// would send next (window.Context.Messages).
	Messages []*agentv1.Message
	// Model, when set, is a caller's eino model used instead of one built from
	// the config (see llm.Request.Model).
	Model model.ToolCallingChatModel
	// OnDelta receives each streamed piece of the summary text, in order.
	OnDelta func(text string)
	// OnRetry is called before each retry of the request.
	OnRetry func(llm.Retry)
}

// Result is a finished compaction.
type Result struct {
	// Summary is the summary text, trimmed.
	Summary string
	// Usage counts the tokens of the compaction request.
	Usage *agentv1.Usage
}

// Run asks the compaction model for a summary of req's conversation. Errors
// are pkg/llm's: *llm.Error with its kind (an empty summary is KindUnknown,
// code "empty_summary"), or *llm.ConfigError.
func Run(ctx context.Context, c *llm.Client, req Request) (*Result, error) {
	if req.Config == nil {
		return nil, &llm.ConfigError{Violations: []llm.FieldViolation{{Field: "config", Description: "is required"}}}
	}
	cfg := req.Config.CompactionConfig()
	lreq := llm.Request{
		Config:   cfg,
		System:   Instructions,
		Messages: []*agentv1.Message{history.User(Transcript(req.System, req.Messages))},
		Model:    req.Model,
		OnRetry:  req.OnRetry,
	}
	if req.OnDelta != nil {
		lreq.OnDelta = func(d llm.Delta) {
			if d.Text != "" {
				req.OnDelta(d.Text)
			}
		}
	}
	res, err := c.Chat(ctx, lreq)
	if err != nil {
		return nil, err
	}
	summary := strings.TrimSpace(res.Text)
	if summary == "" {
		return nil, &llm.Error{Kind: llm.KindUnknown, Code: "empty_summary", Message: "the compaction model returned an empty summary"}
	}
	return &Result{Summary: summary, Usage: res.Usage}, nil
}

// Transcript is the user message of a compaction request: the agent's system
// prompt and the conversation, each in its own tagged block, then Ask.
func Transcript(system string, msgs []*agentv1.Message) string {
	var b strings.Builder
	if strings.TrimSpace(system) != "" {
		b.WriteString("<system_prompt>\n")
		b.WriteString(system)
		b.WriteString("\n</system_prompt>\n\n")
	}
	b.WriteString("<conversation>\n")
	b.WriteString(strings.TrimRight(history.RenderWith(msgs, history.English()), "\n"))
	b.WriteString("\n</conversation>\n\n")
	b.WriteString(Ask)
	return b.String()
}
