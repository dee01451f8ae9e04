package agent

import (
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentcore/agentcore/pkg/llm"
	"github.com/agentcore/agentcore/pkg/tool/live"
	agentv1 "github.com/agentcore/agentcore/proto/agentcore/v1"
)

// emitter numbers a run's events and hands them to the callback one at a
// time, in order. Tool calls run in parallel and emit from their own
// goroutines; the lock makes seq order the order the callback sees.
type emitter struct {
	mu    sync.Mutex
	seq   int64
	runID string
	fn    func(*agentv1.Event)
	// attempt is the run's attempt (0 unless resumed after a crash).
	attempt int32
}

// on reports whether anyone listens, so that events are not built for nobody.
func (e *emitter) on() bool { return e.fn != nil }

// emit stamps ev with the next seq, the time and the run id, and passes it on.
func (e *emitter) emit(ev *agentv1.Event) {
	if e.fn == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	ev.Seq = e.seq
	ev.Time = timestamppb.Now()
	ev.RunId = e.runID
	ev.Attempt = e.attempt
	e.fn(ev)
}

func (e *emitter) runStarted(agentID string) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_RunStarted{RunStarted: &agentv1.RunStartedEvent{AgentId: agentID}}})
}

func (e *emitter) modelRequest(m *agentv1.ModelRequestEvent) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_ModelRequest{ModelRequest: m}})
}

// delta emits a streamed piece of the model's response.
func (e *emitter) delta(step int, d llm.Delta) {
	if !e.on() {
		return
	}
	m := &agentv1.ModelDeltaEvent{Step: int32(step)}
	switch {
	case d.ToolCall != nil:
		m.Delta = &agentv1.ModelDeltaEvent_ToolCall{ToolCall: &agentv1.ToolCallDelta{
			Index: int32(d.ToolCall.Index), Id: d.ToolCall.ID, Name: d.ToolCall.Name, Arguments: d.ToolCall.Arguments,
		}}
	case d.Reasoning != "":
		m.Delta = &agentv1.ModelDeltaEvent_Reasoning{Reasoning: d.Reasoning}
	default:
		m.Delta = &agentv1.ModelDeltaEvent_Text{Text: d.Text}
	}
	e.emit(&agentv1.Event{Kind: &agentv1.Event_ModelDelta{ModelDelta: m}})
}

func (e *emitter) modelResponse(m *agentv1.ModelResponseEvent) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_ModelResponse{ModelResponse: m}})
}

func (e *emitter) permissionRequest(id, name, args string, rerun bool) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_PermissionRequest{PermissionRequest: &agentv1.PermissionRequestEvent{
		ToolCallId: id, ToolName: name, Arguments: args, Rerun: rerun,
	}}})
}

func (e *emitter) runResumed(m *agentv1.RunResumedEvent) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_RunResumed{RunResumed: m}})
}

// toolCall emits a call's start; perm is the answer to its permission
// request, nil when none was asked.
func (e *emitter) toolCall(step int, id, name, args string, perm *agentv1.PermissionDecision) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_ToolCall{ToolCall: &agentv1.ToolCallEvent{
		Step: int32(step), ToolCallId: id, ToolName: name, Arguments: args, Permission: perm,
	}}})
}

func (e *emitter) toolOutput(id, name string, stream agentv1.OutputStream, data string) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_ToolOutput{ToolOutput: &agentv1.ToolOutputEvent{
		ToolCallId: id, ToolName: name, Stream: stream, Data: data,
	}}})
}

// toolOutputCapped emits what a call's live output cap left out.
func (e *emitter) toolOutputCapped(id, name string, c live.Capped) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_ToolOutputCapped{ToolOutputCapped: &agentv1.ToolOutputCappedEvent{
		ToolCallId: id, ToolName: name, MaxBytes: c.MaxBytes, KeptBytes: c.KeptBytes,
		DroppedBytes: c.DroppedBytes, DroppedChunks: c.DroppedChunks, Stopped: c.Stopped,
	}}})
}

func (e *emitter) toolResult(step int, r *agentv1.ToolResultPart, stop bool, d time.Duration) {
	if !e.on() {
		return
	}
	e.emit(&agentv1.Event{Kind: &agentv1.Event_ToolResult{ToolResult: &agentv1.ToolResultEvent{
		Step: int32(step), ToolCallId: r.GetToolCallId(), ToolName: r.GetToolName(), Output: r.GetOutput(),
		Error: r.GetError(), Stop: stop, Duration: durationpb.New(d),
	}}})
}

func (e *emitter) step(step int, resp *agentv1.ModelResponseEvent, results []*agentv1.Part) {
	if !e.on() {
		return
	}
	m := &agentv1.StepEvent{Step: int32(step), Response: resp}
	for _, p := range results {
		m.ToolResults = append(m.ToolResults, p.GetToolResult())
	}
	e.emit(&agentv1.Event{Kind: &agentv1.Event_Step{Step: m}})
}

// retry emits a retry of a model request (compact: of a compaction request).
func (e *emitter) retry(r llm.Retry, compact bool) {
	if !e.on() {
		return
	}
	m := &agentv1.RetryEvent{Attempt: int32(r.Attempt), Delay: durationpb.New(r.Delay), Compact: compact}
	if r.Err != nil {
		m.Kind = ErrorKind(r.Err.Kind)
		m.Message = r.Err.Error()
		m.Status = int32(r.Err.Status)
	}
	e.emit(&agentv1.Event{Kind: &agentv1.Event_Retry{Retry: m}})
}

func (e *emitter) compactStarted(tokens int, manual bool) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_CompactStarted{CompactStarted: &agentv1.CompactStartedEvent{
		Tokens: int64(tokens), Manual: manual,
	}}})
}

func (e *emitter) compactDelta(text string) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_CompactDelta{CompactDelta: &agentv1.CompactDeltaEvent{Text: text}}})
}

func (e *emitter) compactFinished(summary string, u *agentv1.Usage) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_CompactFinished{CompactFinished: &agentv1.CompactFinishedEvent{
		Summary: summary, Usage: u,
	}}})
}

func (e *emitter) budgetExceeded(b *agentv1.BudgetExceededEvent) {
	e.emit(&agentv1.Event{Kind: &agentv1.Event_BudgetExceeded{BudgetExceeded: b}})
}

func (e *emitter) result(r *Result) {
	if !e.on() {
		return
	}
	e.emit(&agentv1.Event{Kind: &agentv1.Event_Result{Result: r.Proto()}})
}

// ErrorKind maps a model error kind to its proto enum, e.g. "auth" to
// ERROR_KIND_AUTH (UNSPECIFIED when unknown). The enum's name without its
// prefix is the reason of the server's google.rpc.ErrorInfo.
func ErrorKind(k llm.Kind) agentv1.ErrorKind {
	return agentv1.ErrorKind(agentv1.ErrorKind_value["ERROR_KIND_"+strings.ToUpper(string(k))])
}
