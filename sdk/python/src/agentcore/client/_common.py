"""What the sync and the asyncio clients share: callbacks, decisions,
results, and the requests they build."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

from google.protobuf import json_format, struct_pb2

from agentcore import v1


@dataclass(frozen=True)
class Decision:
    """The answer to a permission request."""

    allow: bool
    reason: str = ""
    """Told to the model when the call is denied."""


def allow() -> Decision:
    """The decision that lets the call run."""
    return Decision(True)


def deny(reason: str = "") -> Decision:
    """The decision that refuses the call; reason is told to the model."""
    return Decision(False, reason)


Answer = Union[Decision, bool]
"""What a permission callback returns: a Decision, or True (allow) / False (deny)."""


def decision_of(answer: Any) -> Decision:
    if isinstance(answer, Decision):
        return answer
    if isinstance(answer, bool):
        return Decision(answer, "" if answer else "denied")
    raise TypeError(f"a permission callback must return a Decision or a bool, not {type(answer).__name__}")


@dataclass
class Callbacks:
    """Receive a run's events, in order, as agent-core's send callbacks do.
    Every one is optional. With the asyncio client a callback may be a
    coroutine function; it is awaited before the next event.

    on_permission decides whether a tool call may run and returns a Decision
    (allow(), deny("why")) or a bool. It runs beside the stream, so events
    keep coming while it waits (e.g. for a person): in a thread of its own
    with the sync client, in a task with the asyncio client (a plain
    function there runs in a thread). Setting it makes the server ask for
    every call, unless ask_tools narrows it. A decision returned after the
    run ended is dropped.
    """

    on_event: Optional[Callable[[v1.Event], Any]] = None
    """Every event first, as it came."""
    on_start: Optional[Callable[[str], Any]] = None
    """The run started: its id (agent-core: onStart)."""
    on_model_request: Optional[Callable[[v1.ModelRequestEvent], Any]] = None
    """A model request is about to be sent (onLLMStart)."""
    on_text: Optional[Callable[[str], Any]] = None
    """A streamed piece of the model's text."""
    on_model_delta: Optional[Callable[[v1.ModelDeltaEvent], Any]] = None
    """Every streamed piece of the model's answer: text, reasoning, tool calls (onLLMEvent)."""
    on_model_response: Optional[Callable[[v1.ModelResponseEvent], Any]] = None
    """The model's complete answer (onLLMFinish)."""
    on_permission: Optional[Callable[[v1.PermissionRequestEvent], Union[Answer, Awaitable[Answer]]]] = None
    """Whether a tool call may run (onPermission)."""
    on_tool_call: Optional[Callable[[v1.ToolCallEvent], Any]] = None
    """A tool call starts (onToolCall)."""
    on_tool_output: Optional[Callable[[v1.ToolOutputEvent], Any]] = None
    """Live output of a running tool (onToolOutput)."""
    on_tool_output_capped: Optional[Callable[[v1.ToolOutputCappedEvent], Any]] = None
    """A tool call's live output went over its cap (the server's -max-live-output,
    config.max_live_output): the rest was not sent, and the event says how much.
    It comes once, before the call's result."""
    on_tool_result: Optional[Callable[[v1.ToolResultEvent], Any]] = None
    """A tool call finished (onToolResult)."""
    on_step: Optional[Callable[[v1.StepEvent], Any]] = None
    """A round of model and tools finished (onStep)."""
    on_retry: Optional[Callable[[v1.RetryEvent], Any]] = None
    """A failed model request is retried (onRetry)."""
    on_compact: Optional[Callable[[v1.Event], Any]] = None
    """Compaction started, streamed a piece of summary or finished (onCompact):
    the event holds compact_started, compact_delta or compact_finished."""
    on_resumed: Optional[Callable[[v1.RunResumedEvent], Any]] = None
    """The run's server crashed and a server resumed the run (on_interrupt
    resume): the events after it replace those after its seq-1 that this
    client may have seen on the broken stream."""
    on_child: Optional[Callable[[v1.ChildRunEvent], Any]] = None
    """An event of a child run (an agent this run called as a tool, or one of
    its descendants), with the child's run id and depth. A child's permission
    request is answered with respond_permission(child.run_id, …)."""
    on_budget_exceeded: Optional[Callable[[v1.BudgetExceededEvent], Any]] = None
    """A limit of the run tree's budget was reached: the run ends (END_REASON_BUDGET)."""
    on_elicitation: Optional[Callable[[v1.Event], Any]] = None
    """A tool asks the person behind the run for input (an MCP server's
    elicitation): the event's elicitation_request holds the message and the
    form's schema. Answer with respond_elicitation(event.run_id,
    elicitation_id, "accept", {...}) from any connection (a thread, another
    process); unanswered within the server's permission timeout it is
    cancelled. A child run's comes in on_child."""
    on_elicitation_result: Optional[Callable[[v1.ElicitationResultEvent], Any]] = None
    """An elicitation request was answered, or cancelled for want of an answer."""


_END_REASON_PREFIX = "END_REASON_"


@dataclass(frozen=True)
class Result:
    """A finished send (agent-core's resolved send)."""

    run_id: str
    text: str
    """The last model round's text."""
    steps: int
    """How many model rounds ran."""
    usage: v1.Usage
    """Tokens, summed over the send."""
    reason: v1.EndReason
    """Why the send ended: v1.END_REASON_NO_TOOL, END_REASON_TOOL_STOP or END_REASON_STEP_LIMIT."""
    output: Any = None
    """The structured output (a JSON value), when an output format was set."""
    run_usage: Optional[v1.RunUsage] = None
    """What the run spent: tokens, model requests, tool calls, wall time, cost."""
    tree_usage: Optional[v1.RunUsage] = None
    """What the run spent with its child runs."""

    @property
    def reason_name(self) -> str:
        """agent-core's name of the reason: no-tool, tool-stop or step-limit."""
        return reason_name(self.reason)


def reason_name(reason: v1.EndReason) -> str:
    """agent-core's name of an end reason: no-tool, tool-stop, step-limit ("" if unset)."""
    if reason == v1.END_REASON_UNSPECIFIED:
        return ""
    return str(v1.EndReason.Name(reason))[len(_END_REASON_PREFIX):].lower().replace("_", "-")


def result_of(event: v1.Event) -> Optional[Result]:
    """The result, when the event is the run's result."""
    if event.WhichOneof("kind") != "result":
        return None
    r = event.result
    output = json_format.MessageToDict(r.output) if r.HasField("output") else None
    return Result(event.run_id, r.text, r.steps, r.usage, r.reason, output, r.run_usage, r.tree_usage)


def calls(event: v1.Event, cb: Callbacks) -> List[Tuple[Callable[[Any], Any], Any]]:
    """The callbacks an event goes to, with their argument, in order
    (on_permission aside: the clients run it beside the stream)."""
    out: List[Tuple[Callable[[Any], Any], Any]] = []
    if cb.on_event:
        out.append((cb.on_event, event))
    kind = event.WhichOneof("kind")
    if kind == "run_started" and cb.on_start:
        out.append((cb.on_start, event.run_id))
    elif kind == "model_request" and cb.on_model_request:
        out.append((cb.on_model_request, event.model_request))
    elif kind == "model_delta":
        if cb.on_text and event.model_delta.WhichOneof("delta") == "text":
            out.append((cb.on_text, event.model_delta.text))
        if cb.on_model_delta:
            out.append((cb.on_model_delta, event.model_delta))
    elif kind == "model_response" and cb.on_model_response:
        out.append((cb.on_model_response, event.model_response))
    elif kind == "tool_call" and cb.on_tool_call:
        out.append((cb.on_tool_call, event.tool_call))
    elif kind == "tool_output" and cb.on_tool_output:
        out.append((cb.on_tool_output, event.tool_output))
    elif kind == "tool_output_capped" and cb.on_tool_output_capped:
        out.append((cb.on_tool_output_capped, event.tool_output_capped))
    elif kind == "tool_result" and cb.on_tool_result:
        out.append((cb.on_tool_result, event.tool_result))
    elif kind == "step" and cb.on_step:
        out.append((cb.on_step, event.step))
    elif kind == "retry" and cb.on_retry:
        out.append((cb.on_retry, event.retry))
    elif kind in ("compact_started", "compact_delta", "compact_finished") and cb.on_compact:
        out.append((cb.on_compact, event))
    elif kind == "run_resumed" and cb.on_resumed:
        out.append((cb.on_resumed, event.run_resumed))
    elif kind == "child" and cb.on_child:
        out.append((cb.on_child, event.child))
    elif kind == "budget_exceeded" and cb.on_budget_exceeded:
        out.append((cb.on_budget_exceeded, event.budget_exceeded))
    elif kind == "elicitation_request" and cb.on_elicitation:
        out.append((cb.on_elicitation, event))
    elif kind == "elicitation_result" and cb.on_elicitation_result:
        out.append((cb.on_elicitation_result, event.elicitation_result))
    return out


ElicitationAction = Union["v1.ElicitationAction", str]
"""An answer to an elicitation request: v1.ELICITATION_ACTION_ACCEPT,
_DECLINE or _CANCEL, or "accept", "decline", "cancel"."""


def elicitation_answer(run_id: str, elicitation_id: str, action: ElicitationAction,
                       content: Optional[Mapping[str, Any]] = None) -> v1.RespondElicitationRequest:
    """The RespondElicitation request of an answer; content goes with "accept" only."""
    if isinstance(action, str):
        name = "ELICITATION_ACTION_" + action.upper()
        if name not in v1.ElicitationAction.keys() or name.endswith("UNSPECIFIED"):
            raise ValueError(f'an elicitation\'s answer is "accept", "decline" or "cancel", not {action!r}')
        action = cast(v1.ElicitationAction, v1.ElicitationAction.Value(name))
    req = v1.RespondElicitationRequest(run_id=run_id, elicitation_id=elicitation_id, action=action)
    if content is not None:
        req.content.update(dict(content))
    return req


def elicited(resp: v1.RespondElicitationResponse) -> Dict[str, Any]:
    """The values the tool got: the answer's, the schema's defaults filled in."""
    return cast(Dict[str, Any], json_format.MessageToDict(resp.content)) if resp.HasField("content") else {}


Busy = Union["v1.BusyPolicy", str]
"""A busy policy: v1.BUSY_POLICY_REPLACE, _REJECT or _QUEUE, or "replace", "reject", "queue"."""


def busy_policy(busy: Optional[Busy]) -> v1.BusyPolicy:
    if busy is None:
        return v1.BUSY_POLICY_UNSPECIFIED
    if isinstance(busy, str):
        try:
            return cast(v1.BusyPolicy, v1.BusyPolicy.Value("BUSY_POLICY_" + busy.upper()))
        except ValueError:
            raise ValueError(f"busy: {busy!r} is not replace, reject or queue") from None
    return busy


def parts_of(text: str, parts: Optional[Sequence[v1.Part]]) -> List[v1.Part]:
    if parts is not None:
        return list(parts)
    return [v1.Part(text=text)] if text else []


@dataclass
class SendOptions:
    """A send's input and overrides (agent-core's agent.send(options)); the
    keyword arguments of send and send_stream."""

    text: str = ""
    parts: Optional[Sequence[v1.Part]] = None
    """The input as parts (text, images, files), instead of text."""
    config: Optional[v1.AgentConfig] = None
    """Overrides the agent's config for this send (provider replaces whole)."""
    history: Optional[Sequence[v1.Message]] = None
    """Replaces the history before the run."""
    tools: Optional[Sequence[str]] = None
    """The only tools of this send."""
    ask: Optional[bool] = None
    """Whether the server asks before each tool call: by default when
    on_permission is set; True without it to answer with Run.respond."""
    ask_tools: Optional[Sequence[str]] = None
    """Ask for the calls of these tools only."""
    busy: Optional[Busy] = None
    """When the agent is running already: replace (default), reject or queue."""
    detach: bool = False
    """The run goes on when this client goes away; attach to follow it again."""
    reconnect: bool = False
    """Survive a broken connection: the run goes on and the client attaches
    again from the last event it saw, until the run ends."""
    resume: bool = False
    """Go on from the stored history without input."""
    budget: Optional[v1.Budget] = None
    """Limits on what the run and its child runs spend together."""


def start_request(agent_id: str, o: SendOptions, asks: bool) -> v1.SendRequest:
    """The Send stream's first message; asks: an on_permission callback is set."""
    start = v1.StartRun(
        agent_id=agent_id, input=parts_of(o.text, o.parts), busy_policy=busy_policy(o.busy), resume=o.resume,
    )
    if o.config is not None:
        start.config.CopyFrom(o.config)
    if o.history is not None:
        start.history.SetInParent()
        start.history.messages.extend(o.history)
    if o.tools is not None:
        start.tools.SetInParent()
        start.tools.names.extend(o.tools)
    if o.budget is not None:
        start.budget.CopyFrom(o.budget)
    if o.detach or o.reconnect:
        start.on_disconnect = v1.ON_DISCONNECT_CONTINUE
    asking = bool(o.ask_tools) or (o.ask if o.ask is not None else asks)
    if not asking:
        start.permission_mode = v1.PERMISSION_MODE_ALLOW_ALL
    elif o.ask_tools:
        start.permission_mode = v1.PERMISSION_MODE_ASK_LISTED
        start.ask_tools.extend(o.ask_tools)
    else:
        start.permission_mode = v1.PERMISSION_MODE_ASK_ALL
    return v1.SendRequest(start=start)


def agent_message(
    agent_id: str,
    config: Optional[v1.AgentConfig],
    tools: Optional[Sequence[str]],
    skills: Optional[Sequence[str]],
    all_skills: bool,
) -> v1.Agent:
    a = v1.Agent(id=agent_id)
    if config is not None:
        a.config.CopyFrom(config)
    if tools is not None:
        a.tools.SetInParent()
        a.tools.names.extend(tools)
    if all_skills or skills is not None:
        a.skills.SetInParent()
        a.skills.all = all_skills
        a.skills.names.extend(skills or ())
    return a


def update_request(
    agent_id: str, config: Optional[v1.AgentConfig], mask: Sequence[str], tools: Optional[Sequence[str]]
) -> v1.UpdateAgentRequest:
    req = v1.UpdateAgentRequest(agent=v1.Agent(id=agent_id))
    if config is not None:
        req.agent.config.CopyFrom(config)
    paths = list(mask)
    if tools is not None:
        req.agent.tools.SetInParent()
        req.agent.tools.names.extend(tools)
        paths.append("tools")
    if paths:
        req.update_mask.paths.extend(paths)
    return req


def to_struct(value: Any) -> Optional[struct_pb2.Struct]:
    """A tool's input as a Struct: a mapping, a dataclass, JSON text of an
    object, or a Struct."""
    if value is None or isinstance(value, struct_pb2.Struct):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    elif isinstance(value, (str, bytes)):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise TypeError(f"a tool's input must be a JSON object, not {type(value).__name__}")
    s = struct_pb2.Struct()
    s.update(dict(value))
    return s


def output_text(output: v1.ToolOutput) -> str:
    """A tool's output as text: its text, its JSON, or its content's text parts."""
    kind = output.WhichOneof("value")
    if kind == "text":
        return output.text
    if kind == "json":
        return output.json
    if kind == "content":
        return "".join(p.text for p in output.content.parts if p.WhichOneof("kind") == "text")
    return ""


def turns_of(messages: Sequence[v1.Message], turns: Sequence[v1.Turn]) -> List[List[v1.Message]]:
    return [[messages[i] for i in t.message_indexes if i < len(messages)] for t in turns]


def preview_input(input: Union[str, Sequence[v1.Part], None]) -> List[v1.Part]:
    if input is None:
        return []
    if isinstance(input, str):
        return parts_of(input, None)
    return list(input)


# Reconnecting waits this long first, doubling up to the cap.
RECONNECT_FIRST, RECONNECT_MAX = 0.1, 2.0
# ListAgents and ListRuns ask for this many at a time.
PAGE = 1000
