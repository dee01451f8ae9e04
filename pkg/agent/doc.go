// Package agent is the engine. It has the semantics of agent-core, the
// JavaScript library agentcore follows (cited as agent-core throughout the
// code): a Session is agent-core's agent (its Agent.create result), and Send
// runs its loop, "ask the model, run the tools it asked for, ask again",
// until the task is done.
//
// # Sessions
//
// A Session holds an id, a config (the public AgentConfig, stored as given),
// a history, the tools and skills it may use, and usage totals. It runs one
// send or compaction at a time; everything else (reading state and history,
// Stop) may be called from any goroutine at any time. An idle session holds
// no goroutine, no process and no per-send data. The history is append-only
// while a run is active; SetHistory replaces it only when the session is
// idle.
//
// # A send
//
// Send checks everything it can before touching the session: the input
// (required, not blank), the config with its overrides (fields merge over
// the session's config, provider and output replace whole: MergeConfig), a
// history replacement, the permission settings. Each is a *ValidationError
// naming the field. Then the busy policy decides: replace (default) stops
// the running send, which returns aborted, and starts; reject fails with
// ErrBusy; queue waits its turn. The input is appended to the history and
// the loop runs, round after round:
//
//  1. The context is built from the history (pkg/window): the config's
//     system prompt, the skills list when the session has skills, the latest
//     summary, whole turns. With skills the built-in skill tool is offered
//     too and wins over a tool of the same name; without skills nothing is
//     added, not a byte.
//  2. When the window says the context reached compact_threshold ×
//     max_tokens, the history is compacted (pkg/compact) and the context
//     rebuilt, at most once per round: if it is still too large it is sent
//     as it is, and the next round may compact again. A failed compaction
//     fails the send with its error: a misconfigured compaction model shows
//     at once instead of when the main model starts refusing the context.
//  3. The model is asked, its deltas streamed as events, and its response
//     appended to the history.
//  4. No tool call: the round counts toward no_tool_rounds. The send ends
//     `no-tool` when that many consecutive rounds had no call (default 1; 0
//     means never for that reason), at once when the model is offered no
//     tool at all (none registered, or capabilities.tools off in native
//     mode), so a send without tools can never loop, and at once when the
//     config asks for structured output and the answer is a valid one (the
//     agent-core: "the final object validated: end at once"); an answer that
//     fails the schema fails the send with the model layer's error, the
//     answer kept in the history. Otherwise, when the next
//     round is the last one allowed without a call (no_tool_rounds ≥ 2 and
//     no_tool_rounds − 1 rounds in a row had none), no_tool_prompt is appended
//     to the history as a user message before it. With no_tool_rounds 1 there
//     is no round before the last to put it in, so it is never sent.
//  5. Tool calls run in parallel, at most max_tool_concurrency at once,
//     each after the permission hook allowed it when the permission mode
//     asks; their results are appended as one tool message in call order.
//     A denied call, a failing or crashing tool, an unknown tool, bad input:
//     each is a failed tool result the model reads, never a failed send.
//     Text output is cut to max_tool_output characters (media never);
//     Options.MaxToolOutput is its default and ceiling, and a result larger
//     than Options.MaxToolResultBytes loses its files, then text, to a note.
//     A call's live output (ToolOutputEvents, coalesced when it comes fast)
//     stops at max_live_output bytes (Options.MaxLiveOutput is its default
//     and ceiling); one ToolOutputCappedEvent then says what was left out.
//  6. The send ends `tool-stop` when a tool returned stop, after the round's
//     results are written; `step-limit` when the round was the max_steps-th,
//     also after its results are written, so a next send continues from
//     there. Otherwise the next round starts.
//
// The result holds the last round's text, the rounds (steps), the usage
// summed over the send, the reason, and the structured output — only when
// the send ended no-tool on a round that produced it; a tool-stop or
// step-limit never invents one.
//
// Usage sums every model response of the send, cache reads and writes
// included, and the compaction requests the send made: they were spent for
// it, and the result is where callers read what a send cost. A
// CompactFinishedEvent carries the compaction's own usage for those who want
// it apart. The session's totals include manual compactions too.
//
// # Invalid and unusual calls
//
// A call the model layer reports invalid (text protocol: arguments that are
// not a JSON object) is not run: its tool-call part keeps `{}` as
// arguments (history rejects unparseable JSON and providers reject it when
// it is sent back) and InvalidCallName when its name was unreadable, and its
// failed result holds the model layer's feedback and the raw text, so the
// model rewrites the call. A call id missing or already used in the history
// (some gateways repeat ids) is replaced by a fresh one before the response
// is stored, so results always pair with the right call.
//
// # Stopping
//
// Stop, a replacing send, a compaction, Close and the end of the send's
// context all cancel the run: the model request is abandoned and running
// tools are killed at once (their process groups, by pkg/tool). The history
// stays well-formed: a response is appended only when complete, and when
// tools were running their round's tool message is still written, with the
// real results of calls that finished and a failed result for each call cut
// off ("tool … was stopped: the run was stopped", or "Not run" for a call
// still waiting for permission). Stop returns after all that. The send
// returns an *llm.Error of kind aborted wrapping the cause (ErrStopped,
// ErrReplaced, ErrClosed, context.Canceled), or of kind timeout when its
// context's deadline passed.
//
// # Durability
//
// A session with a Journal (Options.Journal) is durable: Begin claims the
// agent for a run before it reads the history (across processes too: the
// journal applies the busy policy there and hands back a history another
// process wrote), every change to the history goes through the journal
// before memory (the input; each model response with its usage; each
// round's tool results; a summary), and End learns how the run ended. A
// journal that fails ends the run with a *JournalError, memory as the
// journal holds it. A send with Resume re-enters the loop from the history
// as it is, e.g. after the journal's owner repaired a run cut off by a crash.
//
// # Observing
//
// An Observer (Options.Observer; pkg/telemetry is the server's) is told when
// a run starts and ends, around each model request (retries included) and
// each tool call, and when a permission is decided. Its Started methods
// return the context the work runs under, which is how a trace span reaches
// the model's HTTP request and the plugin call. Without one, NopObserver
// costs a few interface calls per step.
//
// # Events
//
// A send's events (the one typed set of event.proto) reach SendOptions.OnEvent
// in order, numbered from 1: run started; per round model request, deltas,
// model response, then per call permission request, tool call (with the
// request's answer), tool output, tool result (every call the model made
// has its tool call and tool result events, a denied or invalid one too,
// which has no output), then step;
// retries and compaction events where they happen; the result last. A send
// that fails emits no result event: its error is the end.
package agent
