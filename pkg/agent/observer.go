package agent

import (
	"context"
	"time"

	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Observer is told what a session's runs do, for telemetry: traces, metrics
// and logs (pkg/telemetry implements it). The engine calls it at the edges
// of each piece of work, on the goroutine doing that work: the run, each
// model request (the compaction's included), each tool call. Tool calls of
// a round run in parallel, so an Observer must be safe for concurrent use,
// and quick: it runs inside the loop.
//
// The Started methods return the context the work runs under, so that what
// the Observer puts there travels with it: a span in the context of a model
// request becomes the parent of its HTTP request (pkg/llm sends its W3C
// traceparent), one in a tool call's context the parent of the plugin's
// spans (pkg/tool passes it in the plugin call). The matching Ended method
// gets that context back. Returning ctx unchanged is always correct.
//
// Embed NopObserver to implement only some methods.
type Observer interface {
	// RunStarted is called when a send or a compaction has taken the
	// session's slot and starts running.
	RunStarted(ctx context.Context, run *RunInfo) context.Context
	// RunEnded is called once the run has ended: res is the send's result,
	// nil for a compaction or when err is set.
	RunEnded(ctx context.Context, run *RunInfo, res *Result, err error)
	// ModelStarted is called before each model request of a run.
	ModelStarted(ctx context.Context, m *ModelCall) context.Context
	// ModelRetried is called before a failed model request is tried again.
	ModelRetried(ctx context.Context, m *ModelCall, r llm.Retry)
	// ModelEnded is called after each model request: out is its response
	// (it may be set with err when a structured answer failed its schema).
	ModelEnded(ctx context.Context, m *ModelCall, out *llm.Result, err error)
	// ToolStarted is called when a tool call starts (after its permission
	// was granted, when the run asks for permission).
	ToolStarted(ctx context.Context, c *ToolCall) context.Context
	// ToolEnded is called with the call's result.
	ToolEnded(ctx context.Context, c *ToolCall, res tool.Result)
	// PermissionDecided is called when a permission request was answered:
	// allowed, denied, or not answered because the run stopped (notRun).
	PermissionDecided(ctx context.Context, c *ToolCall, d Decision, notRun bool)
}

// RunInfo describes a run to an Observer. The engine fills Steps,
// ToolCalls and Usage as the run goes; they are final in RunEnded.
type RunInfo struct {
	AgentID string
	RunID   string
	// Compaction says the run is a manual compaction, not a send.
	Compaction bool
	// Protocol and Model are the main model's (the config's).
	Protocol string
	Model    string
	// Start is when the run started.
	Start time.Time
	// Attempt is 0 for a run as it started, 1 and more for a run resumed
	// after a crash (SendOptions.Continue).
	Attempt int
	// Steps counts the model rounds so far; ToolCalls the calls that ran.
	Steps     int
	ToolCalls int
	// Fallbacks counts the requests that went to a fallback model.
	Fallbacks int
	// Usage is summed over the run's model responses so far.
	Usage *agentv1.Usage
	// Budget counts what the run and its child runs spent (RunUsage); nil
	// for a compaction.
	Budget *Budget
}

// ModelCall describes one model request to an Observer.
type ModelCall struct {
	Run *RunInfo
	// Step is the round the request belongs to (0 for a manual compaction).
	Step int
	// Compaction says the request summarises the history.
	Compaction bool
	// Protocol and Model are the ones the request goes to.
	Protocol string
	Model    string
	// Fallback, when set, says the request goes to a fallback model after
	// the round's request to another model failed.
	Fallback *Fallback
	// SamplingFor, when set, is the id of the tool call whose sampling
	// request (an MCP server's, answered by the host) this is: not a
	// round's request.
	SamplingFor string
	// System and Messages are what is sent (shared: do not change them).
	System   string
	Messages []*agentv1.Message
	// Start is when the request started; FirstDelta when its first streamed
	// piece arrived (zero when nothing streamed).
	Start, FirstDelta time.Time
}

// ToolCall describes one tool call to an Observer.
type ToolCall struct {
	Run  *RunInfo
	Step int
	// ID is the model's tool-call id; Name the tool's.
	ID, Name string
	// Known says the tool exists (a model may call one that does not).
	Known bool
	// Arguments is the call's JSON text.
	Arguments string
	// Start is when the call started.
	Start time.Time
}

// NopObserver is an Observer that does nothing: the default.
type NopObserver struct{}

// RunStarted returns ctx.
func (NopObserver) RunStarted(ctx context.Context, _ *RunInfo) context.Context { return ctx }

// RunEnded does nothing.
func (NopObserver) RunEnded(context.Context, *RunInfo, *Result, error) {}

// ModelStarted returns ctx.
func (NopObserver) ModelStarted(ctx context.Context, _ *ModelCall) context.Context { return ctx }

// ModelRetried does nothing.
func (NopObserver) ModelRetried(context.Context, *ModelCall, llm.Retry) {}

// ModelEnded does nothing.
func (NopObserver) ModelEnded(context.Context, *ModelCall, *llm.Result, error) {}

// ToolStarted returns ctx.
func (NopObserver) ToolStarted(ctx context.Context, _ *ToolCall) context.Context { return ctx }

// ToolEnded does nothing.
func (NopObserver) ToolEnded(context.Context, *ToolCall, tool.Result) {}

// PermissionDecided does nothing.
func (NopObserver) PermissionDecided(context.Context, *ToolCall, Decision, bool) {}
