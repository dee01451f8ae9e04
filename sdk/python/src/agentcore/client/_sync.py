"""Client and Agent: the blocking client."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

import grpc

from agentcore import v1
from agentcore.v1.agent_service_pb2_grpc import AgentServiceStub

from ._common import (
    PAGE, Answer, Busy, Callbacks, ElicitationAction, Result, SendOptions, agent_message, decision_of, elicitation_answer,
    elicited, preview_input, start_request, to_struct, turns_of, update_request,
)
from ._errors import AgentcoreError, ended_without_result, from_rpc_error
from ._run import Run

_Resp = TypeVar("_Resp")
Credentials = Union[bool, grpc.ChannelCredentials]


def channel_credentials(tls: Credentials) -> Optional[grpc.ChannelCredentials]:
    if tls is True:
        return grpc.ssl_channel_credentials()
    if tls is False:
        return None
    return tls


def bearer(token: Optional[str]) -> Tuple[Tuple[str, str], ...]:
    return (("authorization", "Bearer " + token),) if token else ()


class Client:
    """A connection to one agent-server::

        with Client("127.0.0.1:50051") as c:          # or "unix:/path/agent.sock"
            agent = c.create_agent(config=v1.AgentConfig(system="Use the tools."))
            res = agent.send("Say hello to Ming", Callbacks(on_text=print, on_permission=lambda req: allow()))

    target is host:port or unix:PATH. token is sent as "authorization:
    Bearer TOKEN" with every call (also over a plaintext connection, as to a
    sidecar on localhost or a unix socket). tls: True for TLS with the
    system's roots, or grpc.ssl_channel_credentials(...) for your own roots
    and client certificates. Every method raises AgentcoreError; timeout
    (seconds) bounds one call.
    """

    def __init__(
        self,
        target: str,
        *,
        token: Optional[str] = None,
        tls: Credentials = False,
        options: Sequence[Tuple[str, Any]] = (),
    ) -> None:
        creds = channel_credentials(tls)
        if creds is None:
            self._channel: Optional[grpc.Channel] = grpc.insecure_channel(target, options=list(options))
        else:
            self._channel = grpc.secure_channel(target, creds, options=list(options))
        self.api = AgentServiceStub(self._channel)
        """The generated stub, for what this client does not wrap."""
        self._metadata = bearer(token)

    @classmethod
    def from_channel(cls, channel: grpc.Channel, *, token: Optional[str] = None) -> Client:
        """A client over a channel the caller owns (close() leaves it open)."""
        c = cls.__new__(cls)
        c._channel, c.api, c._metadata = None, AgentServiceStub(channel), bearer(token)
        return c

    def close(self) -> None:
        """Closes the connection the client made."""
        if self._channel is not None:
            self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _unary(self, method: Callable[..., _Resp], request: Any, timeout: Optional[float]) -> _Resp:
        try:
            return method(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def create_agent(
        self,
        id: str = "",
        *,
        config: Optional[v1.AgentConfig] = None,
        tools: Optional[Sequence[str]] = None,
        skills: Optional[Sequence[str]] = None,
        all_skills: bool = False,
        history: Optional[Sequence[v1.Message]] = None,
        timeout: Optional[float] = None,
    ) -> Agent:
        """Creates an agent (agent-core's Agent.create). id: generated when
        empty; config: None for the server's default profile; tools: None
        for every server tool; skills: None for none (all_skills: every one)."""
        req = v1.CreateAgentRequest(agent_id=id, agent=agent_message("", config, tools, skills, all_skills), history=history)
        return Agent(self, self._unary(self.api.CreateAgent, req, timeout).agent.id)

    def agent(self, id: str) -> Agent:
        """A handle to an existing agent (no call is made)."""
        return Agent(self, id)

    def list_agents(self, *, timeout: Optional[float] = None) -> List[v1.Agent]:
        """Every agent, following pages."""
        out: List[v1.Agent] = []
        req = v1.ListAgentsRequest(page_size=PAGE)
        while True:
            resp = self._unary(self.api.ListAgents, req, timeout)
            out += resp.agents
            if not resp.next_page_token:
                return out
            req.page_token = resp.next_page_token

    def list_tools(self, *, timeout: Optional[float] = None) -> v1.ListToolsResponse:
        """The server's tools and skills."""
        return self._unary(self.api.ListTools, v1.ListToolsRequest(), timeout)

    def reload_tools(self, *, timeout: Optional[float] = None) -> v1.ReloadToolsResponse:
        """Asks the server to rescan its tools and skills."""
        return self._unary(self.api.ReloadTools, v1.ReloadToolsRequest(), timeout)

    def execute_tool(
        self,
        name: str,
        input: Any = None,
        *,
        limit: int = 0,
        on_output: Optional[Callable[[v1.ToolOutputChunk], Any]] = None,
        timeout: Optional[float] = None,
    ) -> v1.DirectToolResult:
        """Runs one tool directly (agent-core's Agent.tool.execute). input: a
        mapping, a dataclass or JSON text of an object; on_output gets the
        live output; limit > 0 cuts long text output from the middle."""
        req = v1.ExecuteToolRequest(name=name, input=to_struct(input), limit=limit)
        call = self.api.ExecuteTool(req, timeout=timeout, metadata=self._metadata)
        try:
            for resp in call:
                if resp.HasField("output") and on_output is not None:
                    on_output(resp.output)
                if resp.HasField("result"):
                    return resp.result
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()  # a no-op once the call has ended; else (on_output raised) the tool is stopped
        raise ended_without_result("", 0)

    def attach(
        self, run_id: str, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None,
    ) -> Result:
        """Follows a run from the event after after_seq (the stored events,
        then the live ones, each once and in order) until it ends, and
        returns its result or raises its error. It works for a run that is
        live or finished, on this server or another replica. Permission
        requests go to on_permission and are answered with RespondPermission."""
        return self.attach_stream(run_id, after_seq, callbacks, timeout=timeout).wait()

    def attach_stream(
        self, run_id: str, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None,
    ) -> Run:
        """attach's events as a Run to iterate."""
        return Run(self, callbacks, attach=v1.AttachRequest(run_id=run_id, after_seq=after_seq), timeout=timeout)

    def get_run(self, run_id: str, *, timeout: Optional[float] = None) -> v1.Run:
        """One run: its state, result or error, pending permission requests."""
        return self._unary(self.api.GetRun, v1.GetRunRequest(run_id=run_id), timeout).run

    def runs(
        self, agent_id: str = "", state: v1.RunState = v1.RUN_STATE_UNSPECIFIED, max: int = 0, *, timeout: Optional[float] = None,
    ) -> List[v1.Run]:
        """Runs, newest first, following pages: every agent's, or agent_id's;
        in any state, or in state (v1.RUN_STATE_RUNNING...); all, or the
        max newest."""
        out: List[v1.Run] = []
        req = v1.ListRunsRequest(agent_id=agent_id, state=state, page_size=PAGE)
        while True:
            if max > 0:
                req.page_size = min(PAGE, max - len(out))
            resp = self._unary(self.api.ListRuns, req, timeout)
            out += resp.runs
            if max > 0 and len(out) >= max:
                return out[:max]
            if not resp.next_page_token:
                return out
            req.page_token = resp.next_page_token

    def respond_permission(self, run_id: str, tool_call_id: str, decision: Answer, *, timeout: Optional[float] = None) -> None:
        """Answers a run's permission request from any connection, also after
        the run's Send stream is gone."""
        d = decision_of(decision)
        req = v1.RespondPermissionRequest(run_id=run_id, tool_call_id=tool_call_id, allow=d.allow, reason=d.reason)
        self._unary(self.api.RespondPermission, req, timeout)

    def respond_elicitation(
        self, run_id: str, elicitation_id: str, action: ElicitationAction, content: Optional[Mapping[str, Any]] = None,
        *, timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Answers a run's elicitation request (Callbacks.on_elicitation) from
        any connection: "accept" with the form's values, "decline" or
        "cancel". Returns the values the tool got (the schema's defaults
        filled into the fields content leaves out)."""
        req = elicitation_answer(run_id, elicitation_id, action, content)
        return elicited(self._unary(self.api.RespondElicitation, req, timeout))


class Agent:
    """A handle to one agent on the server."""

    def __init__(self, client: Client, id: str) -> None:
        self.client = client
        self.id = id
        """The agent's id."""

    def __repr__(self) -> str:
        return f"Agent({self.id!r})"

    def send(
        self,
        text: str = "",
        callbacks: Optional[Callbacks] = None,
        *,
        parts: Optional[Sequence[v1.Part]] = None,
        config: Optional[v1.AgentConfig] = None,
        history: Optional[Sequence[v1.Message]] = None,
        tools: Optional[Sequence[str]] = None,
        ask: Optional[bool] = None,
        ask_tools: Optional[Sequence[str]] = None,
        busy: Optional[Busy] = None,
        detach: bool = False,
        reconnect: bool = False,
        resume: bool = False,
        budget: Optional[v1.Budget] = None,
        timeout: Optional[float] = None,
    ) -> Result:
        """Runs a task and returns its result (agent-core's agent.send); the
        callbacks get its events. parts: the input as parts instead of text;
        config: overrides for this send; history: replaces the history
        first; tools: the only tools of this send; ask, ask_tools: which
        calls need a permission (default: all when on_permission is set);
        busy: when the agent runs already, "replace" (default), "reject" or
        "queue"; detach: the run goes on when this client goes away;
        reconnect: a broken connection is survived by attaching again from
        the last event seen; resume: go on from the stored history without
        input; budget: limits on what the run and its child runs spend.
        Ctrl-C or another exception stops the run (unless detach or
        reconnect)."""
        return self.send_stream(
            text, callbacks, parts=parts, config=config, history=history, tools=tools, ask=ask, ask_tools=ask_tools,
            busy=busy, detach=detach, reconnect=reconnect, resume=resume, budget=budget, timeout=timeout,
        ).wait()

    def send_stream(
        self,
        text: str = "",
        callbacks: Optional[Callbacks] = None,
        *,
        parts: Optional[Sequence[v1.Part]] = None,
        config: Optional[v1.AgentConfig] = None,
        history: Optional[Sequence[v1.Message]] = None,
        tools: Optional[Sequence[str]] = None,
        ask: Optional[bool] = None,
        ask_tools: Optional[Sequence[str]] = None,
        busy: Optional[Busy] = None,
        detach: bool = False,
        reconnect: bool = False,
        resume: bool = False,
        budget: Optional[v1.Budget] = None,
        timeout: Optional[float] = None,
    ) -> Run:
        """send's events as a Run to iterate (see send and Run)."""
        o = SendOptions(text, parts, config, history, tools, ask, ask_tools, busy, detach, reconnect, resume, budget)
        asks = bool(callbacks and callbacks.on_permission)
        return Run(self.client, callbacks, start=start_request(self.id, o, asks), reconnect=reconnect, timeout=timeout)

    def attach(self, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None) -> Result:
        """Follows the agent's latest run from the event after after_seq (see Client.attach)."""
        return self.attach_stream(after_seq, callbacks, timeout=timeout).wait()

    def attach_stream(self, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None) -> Run:
        """attach's events as a Run to iterate."""
        return Run(self.client, callbacks, attach=v1.AttachRequest(agent_id=self.id, after_seq=after_seq), timeout=timeout)

    def stop(self, *, timeout: Optional[float] = None) -> bool:
        """Stops the agent's running send; whether one was running. It returns
        once the run has fully stopped."""
        return self.client._unary(self.client.api.Stop, v1.StopRequest(agent_id=self.id), timeout).stopped

    def stop_run(self, run_id: str, *, timeout: Optional[float] = None) -> bool:
        """Stops run_id if it is still the agent's running send, wherever it runs."""
        return self.client._unary(self.client.api.Stop, v1.StopRequest(agent_id=self.id, run_id=run_id), timeout).stopped

    def compact(self, on_compact: Optional[Callable[[v1.Event], Any]] = None, *, timeout: Optional[float] = None) -> str:
        """Summarises the history now (stopping a running send first) and
        returns the summary, which the server appended to the history."""
        summary: Optional[str] = None
        call = self.client.api.Compact(v1.CompactRequest(agent_id=self.id), timeout=timeout, metadata=self.client._metadata)
        try:
            for resp in call:
                if on_compact is not None:
                    on_compact(resp.event)
                if resp.event.HasField("compact_finished"):
                    summary = resp.event.compact_finished.summary
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()
        if summary is None:
            raise AgentcoreError(grpc.StatusCode.UNKNOWN, "the compaction ended without a summary")
        return summary

    def get(self, *, timeout: Optional[float] = None) -> v1.Agent:
        """The agent: its config (without secrets), state, usage."""
        return self.client._unary(self.client.api.GetAgent, v1.GetAgentRequest(agent_id=self.id), timeout).agent

    def update(
        self, config: Optional[v1.AgentConfig] = None, *mask: str, tools: Optional[Sequence[str]] = None,
        timeout: Optional[float] = None,
    ) -> v1.Agent:
        """Changes the agent: the paths in mask (e.g. "config.model"), or,
        with no mask, every field set in config (provider replaced whole).
        tools replaces the agent's tools (its path is added to the mask)."""
        return self.client._unary(self.client.api.UpdateAgent, update_request(self.id, config, mask, tools), timeout).agent

    def delete(self, *, timeout: Optional[float] = None) -> bool:
        """Stops any run and forgets the agent; whether a run was stopped."""
        return self.client._unary(self.client.api.DeleteAgent, v1.DeleteAgentRequest(agent_id=self.id), timeout).stopped_run

    def _history_pages(self, timeout: Optional[float], turns: bool = False, rendered: bool = False) -> List[v1.GetHistoryResponse]:
        pages: List[v1.GetHistoryResponse] = []
        req = v1.GetHistoryRequest(agent_id=self.id, include_turns=turns, include_rendered=rendered)
        while True:
            pages.append(self.client._unary(self.client.api.GetHistory, req, timeout))
            if not pages[-1].next_page_token:
                return pages
            req.page_token, req.include_turns = pages[-1].next_page_token, False

    def history(self, *, timeout: Optional[float] = None) -> List[v1.Message]:
        """The agent's history, every page of it."""
        return [m for p in self._history_pages(timeout) for m in p.messages]

    def turns(self, *, timeout: Optional[float] = None) -> List[List[v1.Message]]:
        """The history grouped into turns (a model response with its tool
        calls and their results stay together), as agent-core's History.turns."""
        pages = self._history_pages(timeout, turns=True)
        return turns_of([m for p in pages for m in p.messages], pages[0].turns)

    def render(self, *, timeout: Optional[float] = None) -> str:
        """The history as text, as agent-core's History.render."""
        return "\n".join(p.rendered for p in self._history_pages(timeout, rendered=True))

    def set_history(self, messages: Sequence[v1.Message], *, timeout: Optional[float] = None) -> int:
        """Replaces the history (e.g. restoring it from a database); its new
        length. It fails while a send runs."""
        req = v1.SetHistoryRequest(agent_id=self.id, messages=messages)
        return self.client._unary(self.client.api.SetHistory, req, timeout).history_length

    def preview(self, input: Union[str, Sequence[v1.Part], None] = None, *, timeout: Optional[float] = None) -> v1.PreviewContextResponse:
        """What the next model request would hold, and its size; input is
        counted as if it were sent."""
        req = v1.PreviewContextRequest(agent_id=self.id, input=preview_input(input))
        return self.client._unary(self.client.api.PreviewContext, req, timeout)

    def runs(self, *, timeout: Optional[float] = None) -> List[v1.Run]:
        """The agent's runs, newest first."""
        return self.client.runs(self.id, timeout=timeout)
