// Package tool is the host side of tools: it finds tool plugins in
// directories, keeps a pool of plugin processes per binary, and executes
// calls with agent-core's semantics (declared timeouts, cancellation,
// crashes turned into results, output truncation, a per-caller concurrency
// cap), with results expressed in the public agentcore.v1 types. With a
// limits controller (pkg/tool/limits) every plugin process and all it
// starts is one limits group: a call over its memory, process or CPU time
// limit is killed whole and its result names the limit.
//
// A [Host] owns every plugin process. [Host.Scan] returns a [Set] of tools;
// sets merge (later wins by name) and [Set.Execute] runs one call.
package tool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentcore/agentcore/pkg/tool/limits"
	"github.com/agentcore/agentcore/pkg/tool/live"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// Spec describes a tool as the model and the host see it.
type Spec struct {
	// Name is how the model calls the tool.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the input (an object schema).
	InputSchema json.RawMessage
	// Timeout, when positive, is how long a call may run before it is killed.
	Timeout time.Duration
	// ReadOnly hints that the tool does not change its environment.
	ReadOnly bool
	// Idempotent hints that repeating a call with the same input has no further effect.
	Idempotent bool
	// Source says where the tool comes from: the plugin's path, "mcp:<file>", "builtin".
	Source string
	// Limits are the resource limits of the tool's calls, as enforced: what
	// the tool asked for under the host's LimitPolicy, without what the
	// host's mechanism cannot enforce. Zero for in-process tools.
	Limits limits.Limits
}

// Result is the outcome of one call, ready for history.
type Result struct {
	// Output is what the model gets.
	Output *agentv1.ToolOutput
	// Error marks a failed call (tool error, crash, timeout, cancel, bad input, unknown tool).
	Error bool
	// Stop asks the agent's loop to end after this round.
	Stop bool
	// Duration is how long the call ran, queueing excluded.
	Duration time.Duration
	// Outcome says how the call ended: ok, or why it failed (Execute always sets it).
	Outcome Outcome
}

// Outcome says how a call ended, for telemetry (the error.type of a span,
// the outcome label of a metric) and logs.
type Outcome string

// The outcomes of a call.
const (
	// OutcomeOK: the tool returned a result that is not an error.
	OutcomeOK Outcome = "ok"
	// OutcomeError: the tool returned an error, or the call was refused
	// (unknown tool, bad input, the plugin could not start).
	OutcomeError Outcome = "error"
	// OutcomeCrash: the plugin process died during the call, or the tool panicked.
	OutcomeCrash Outcome = "crash"
	// OutcomeTimeout: the tool's declared timeout passed and the call was killed.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeKilled: the call was stopped (its run stopped, its client went
	// away, the host closed) and its process group killed.
	OutcomeKilled Outcome = "killed"
	// OutcomeLimit: the call was killed for exceeding a resource limit of
	// its tool (memory, processes, CPU time, open files).
	OutcomeLimit Outcome = "limit"
)

// Part returns the result as a tool-result part of a history message.
func (r Result) Part(callID, toolName string) *agentv1.ToolResultPart {
	return &agentv1.ToolResultPart{ToolCallId: callID, ToolName: toolName, Output: r.Output, Error: r.Error}
}

// Chunk is a piece of a call's live output.
type Chunk = live.Chunk

// Options tune one call.
type Options struct {
	// CallID is the model's tool-call id, passed to the plugin for its logs.
	CallID string
	// IdempotencyKey names the call for the tool across its executions (a
	// run's id and the call's id): a plugin gets it in ExecuteRequest, so
	// that a tool with side effects can make them happen once.
	IdempotencyKey string
	// Attempt counts the executions of the call: 1 the first time, more
	// when it runs again after a crash cut it off; 0 outside a run.
	Attempt int
	// OnStart, if set, is called once the call is handed to the tool: after
	// its input passed validation, it got its turn (Limiter) and a process,
	// and its request was sent; before any output. A call that fails before
	// that (unknown tool, bad input, no process) never starts. Work done here
	// (announcing the call) overlaps with the tool's.
	OnStart func()
	// OnOutput, if set, receives the call's live output in order, one chunk
	// at a time, all before Execute returns.
	OnOutput func(Chunk)
	// Live bounds and coalesces the chunks OnOutput receives; the zero
	// value passes each on as it comes.
	Live live.Options
	// Limit, when positive, caps the characters of text output: longer text
	// is cut from the middle with a notice (see Truncate). Media is never cut.
	Limit int
	// Limiter, if set, caps how many calls sharing it run at once; the rest queue.
	Limiter *Limiter
	// MaxBytes, when positive, caps the size of the output, media included,
	// after Limit (see truncate.Bytes): what one result may add to a history.
	MaxBytes int
	// Redact, if set, cleans the text of every output chunk before OnOutput
	// gets it, and of the result before Limit and MaxBytes cut it (see
	// RedactOutput), e.g. to keep secrets the caller holds out of what a
	// tool found.
	Redact func(string) string
	// HostHandler, if set, answers the plugin's requests to its host during the
	// call (ask the person behind the run, sample its model); unset, the
	// plugin is told this host cannot. In-process tools get none.
	HostHandler *HostHandler
}

// Func is the body of an in-process tool (see InProcess). It gets the
// validated input and an emit function for live output; its error becomes an
// error result. It must return once ctx is done.
type Func func(ctx context.Context, input json.RawMessage, emit func(text string)) (Result, error)

// TextOutput returns a text output.
func TextOutput(s string) *agentv1.ToolOutput {
	// The message and its oneof wrapper in one allocation.
	o := &struct {
		out  agentv1.ToolOutput
		text agentv1.ToolOutput_Text
	}{text: agentv1.ToolOutput_Text{Text: s}}
	o.out.Value = &o.text
	return &o.out
}

// JSONOutput returns a JSON output; raw must be valid JSON.
func JSONOutput(raw json.RawMessage) *agentv1.ToolOutput {
	return &agentv1.ToolOutput{Value: &agentv1.ToolOutput_Json{Json: string(raw)}}
}

// OutputText returns the output as text: text and JSON as they are, content
// parts as their text parts joined by newlines with a placeholder per file.
func OutputText(out *agentv1.ToolOutput) string {
	switch v := out.GetValue().(type) {
	case *agentv1.ToolOutput_Text:
		return v.Text
	case *agentv1.ToolOutput_Json:
		return v.Json
	case *agentv1.ToolOutput_Content:
		var s string
		for i, p := range v.Content.GetParts() {
			if i > 0 {
				s += "\n"
			}
			if f := p.GetFile(); f != nil {
				s += "[file " + f.GetMediaType() + "]"
				continue
			}
			s += p.GetText()
		}
		return s
	}
	return ""
}

// outcome returns r with its outcome set.
func outcome(r Result, o Outcome) Result {
	r.Outcome = o
	return r
}

func errorResult(msg string) Result {
	return Result{Output: TextOutput(msg), Error: true}
}
