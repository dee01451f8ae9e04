"""AsyncClient and AsyncAgent: the asyncio client, on grpc.aio. Each method
is the sync client's (see Client and Agent for what it does) as a coroutine."""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

import grpc
import grpc.aio

from agentcore import v1
from agentcore.v1.agent_service_pb2_grpc import AgentServiceAsyncStub

from ._aio_run import AsyncRun
from ._common import (
    PAGE, Answer, Busy, Callbacks, ElicitationAction, Result, SendOptions, agent_message, decision_of, elicitation_answer,
    elicited, preview_input, start_request, to_struct, turns_of, update_request,
)
from ._errors import AgentcoreError, ended_without_result, from_rpc_error
from ._sync import Credentials, bearer, channel_credentials

_Resp = TypeVar("_Resp")


class AsyncClient:
    """A connection to one agent-server, for asyncio::

        async with AsyncClient("127.0.0.1:50051") as c:
            agent = await c.create_agent(config=v1.AgentConfig(system="Use the tools."))
            res = await agent.send("Say hello to Ming", Callbacks(on_text=print, on_permission=lambda req: allow()))

    The arguments are Client's. A callback may be a coroutine function.
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
            self._channel: Optional[grpc.aio.Channel] = grpc.aio.insecure_channel(target, options=list(options))
        else:
            self._channel = grpc.aio.secure_channel(target, creds, options=list(options))
        self.api = AgentServiceAsyncStub(self._channel)
        """The generated stub, for what this client does not wrap."""
        self._metadata = bearer(token)

    @classmethod
    def from_channel(cls, channel: grpc.aio.Channel, *, token: Optional[str] = None) -> AsyncClient:
        """A client over a grpc.aio channel the caller owns (close() leaves it open)."""
        c = cls.__new__(cls)
        c._channel, c.api, c._metadata = None, AgentServiceAsyncStub(channel), bearer(token)
        return c

    async def close(self) -> None:
        """Closes the connection the client made."""
        if self._channel is not None:
            await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _unary(self, method: Callable[..., Awaitable[_Resp]], request: Any, timeout: Optional[float]) -> _Resp:
        try:
            return await method(request, timeout=timeout, metadata=self._metadata)
        except grpc.aio.AioRpcError as e:
            raise from_rpc_error(e) from None

    async def create_agent(
        self,
        id: str = "",
        *,
        config: Optional[v1.AgentConfig] = None,
        tools: Optional[Sequence[str]] = None,
        skills: Optional[Sequence[str]] = None,
        all_skills: bool = False,
        history: Optional[Sequence[v1.Message]] = None,
        timeout: Optional[float] = None,
    ) -> AsyncAgent:
        req = v1.CreateAgentRequest(agent_id=id, agent=agent_message("", config, tools, skills, all_skills), history=history)
        return AsyncAgent(self, (await self._unary(self.api.CreateAgent, req, timeout)).agent.id)

    def agent(self, id: str) -> AsyncAgent:
        return AsyncAgent(self, id)

    async def list_agents(self, *, timeout: Optional[float] = None) -> List[v1.Agent]:
        out: List[v1.Agent] = []
        req = v1.ListAgentsRequest(page_size=PAGE)
        while True:
            resp = await self._unary(self.api.ListAgents, req, timeout)
            out += resp.agents
            if not resp.next_page_token:
                return out
            req.page_token = resp.next_page_token

    async def list_tools(self, *, timeout: Optional[float] = None) -> v1.ListToolsResponse:
        return await self._unary(self.api.ListTools, v1.ListToolsRequest(), timeout)

    async def reload_tools(self, *, timeout: Optional[float] = None) -> v1.ReloadToolsResponse:
        return await self._unary(self.api.ReloadTools, v1.ReloadToolsRequest(), timeout)

    async def execute_tool(
        self,
        name: str,
        input: Any = None,
        *,
        limit: int = 0,
        on_output: Optional[Callable[[v1.ToolOutputChunk], Any]] = None,
        timeout: Optional[float] = None,
    ) -> v1.DirectToolResult:
        req = v1.ExecuteToolRequest(name=name, input=to_struct(input), limit=limit)
        call = self.api.ExecuteTool(req, timeout=timeout, metadata=self._metadata)
        try:
            async for resp in call:
                if resp.HasField("output") and on_output is not None:
                    r = on_output(resp.output)
                    if inspect.isawaitable(r):
                        await r
                if resp.HasField("result"):
                    return resp.result
        except grpc.aio.AioRpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()
        raise ended_without_result("", 0)

    async def attach(
        self, run_id: str, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None,
    ) -> Result:
        return await self.attach_stream(run_id, after_seq, callbacks, timeout=timeout).wait()

    def attach_stream(
        self, run_id: str, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None,
    ) -> AsyncRun:
        return AsyncRun(self, callbacks, attach=v1.AttachRequest(run_id=run_id, after_seq=after_seq), timeout=timeout)

    async def get_run(self, run_id: str, *, timeout: Optional[float] = None) -> v1.Run:
        return (await self._unary(self.api.GetRun, v1.GetRunRequest(run_id=run_id), timeout)).run

    async def runs(
        self, agent_id: str = "", state: v1.RunState = v1.RUN_STATE_UNSPECIFIED, max: int = 0, *, timeout: Optional[float] = None,
    ) -> List[v1.Run]:
        out: List[v1.Run] = []
        req = v1.ListRunsRequest(agent_id=agent_id, state=state, page_size=PAGE)
        while True:
            if max > 0:
                req.page_size = min(PAGE, max - len(out))
            resp = await self._unary(self.api.ListRuns, req, timeout)
            out += resp.runs
            if max > 0 and len(out) >= max:
                return out[:max]
            if not resp.next_page_token:
                return out
            req.page_token = resp.next_page_token

    async def respond_permission(
        self, run_id: str, tool_call_id: str, decision: Answer, *, timeout: Optional[float] = None,
    ) -> None:
        d = decision_of(decision)
        req = v1.RespondPermissionRequest(run_id=run_id, tool_call_id=tool_call_id, allow=d.allow, reason=d.reason)
        await self._unary(self.api.RespondPermission, req, timeout)

    async def respond_elicitation(
        self, run_id: str, elicitation_id: str, action: ElicitationAction, content: Optional[Mapping[str, Any]] = None,
        *, timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Answers a run's elicitation request (see Client.respond_elicitation)."""
        req = elicitation_answer(run_id, elicitation_id, action, content)
        return elicited(await self._unary(self.api.RespondElicitation, req, timeout))


class AsyncAgent:
    """A handle to one agent on the server (see Agent)."""

    def __init__(self, client: AsyncClient, id: str) -> None:
        self.client = client
        self.id = id

    def __repr__(self) -> str:
        return f"AsyncAgent({self.id!r})"

    async def send(
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
        """Runs a task and returns its result (see Agent.send). Cancelling
        the task stops the run (unless detach or reconnect)."""
        return await self.send_stream(
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
    ) -> AsyncRun:
        """send's events as an AsyncRun to iterate with async for."""
        o = SendOptions(text, parts, config, history, tools, ask, ask_tools, busy, detach, reconnect, resume, budget)
        asks = bool(callbacks and callbacks.on_permission)
        return AsyncRun(self.client, callbacks, start=start_request(self.id, o, asks), reconnect=reconnect, timeout=timeout)

    async def attach(self, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None) -> Result:
        return await self.attach_stream(after_seq, callbacks, timeout=timeout).wait()

    def attach_stream(self, after_seq: int = 0, callbacks: Optional[Callbacks] = None, *, timeout: Optional[float] = None) -> AsyncRun:
        return AsyncRun(self.client, callbacks, attach=v1.AttachRequest(agent_id=self.id, after_seq=after_seq), timeout=timeout)

    async def stop(self, *, timeout: Optional[float] = None) -> bool:
        return (await self.client._unary(self.client.api.Stop, v1.StopRequest(agent_id=self.id), timeout)).stopped

    async def stop_run(self, run_id: str, *, timeout: Optional[float] = None) -> bool:
        req = v1.StopRequest(agent_id=self.id, run_id=run_id)
        return (await self.client._unary(self.client.api.Stop, req, timeout)).stopped

    async def compact(self, on_compact: Optional[Callable[[v1.Event], Any]] = None, *, timeout: Optional[float] = None) -> str:
        summary: Optional[str] = None
        call = self.client.api.Compact(v1.CompactRequest(agent_id=self.id), timeout=timeout, metadata=self.client._metadata)
        try:
            async for resp in call:
                if on_compact is not None:
                    r = on_compact(resp.event)
                    if inspect.isawaitable(r):
                        await r
                if resp.event.HasField("compact_finished"):
                    summary = resp.event.compact_finished.summary
        except grpc.aio.AioRpcError as e:
            raise from_rpc_error(e) from None
        finally:
            call.cancel()
        if summary is None:
            raise AgentcoreError(grpc.StatusCode.UNKNOWN, "the compaction ended without a summary")
        return summary

    async def get(self, *, timeout: Optional[float] = None) -> v1.Agent:
        return (await self.client._unary(self.client.api.GetAgent, v1.GetAgentRequest(agent_id=self.id), timeout)).agent

    async def update(
        self, config: Optional[v1.AgentConfig] = None, *mask: str, tools: Optional[Sequence[str]] = None,
        timeout: Optional[float] = None,
    ) -> v1.Agent:
        req = update_request(self.id, config, mask, tools)
        return (await self.client._unary(self.client.api.UpdateAgent, req, timeout)).agent

    async def delete(self, *, timeout: Optional[float] = None) -> bool:
        req = v1.DeleteAgentRequest(agent_id=self.id)
        return (await self.client._unary(self.client.api.DeleteAgent, req, timeout)).stopped_run

    async def _history_pages(self, timeout: Optional[float], turns: bool = False, rendered: bool = False) -> List[v1.GetHistoryResponse]:
        pages: List[v1.GetHistoryResponse] = []
        req = v1.GetHistoryRequest(agent_id=self.id, include_turns=turns, include_rendered=rendered)
        while True:
            pages.append(await self.client._unary(self.client.api.GetHistory, req, timeout))
            if not pages[-1].next_page_token:
                return pages
            req.page_token, req.include_turns = pages[-1].next_page_token, False

    async def history(self, *, timeout: Optional[float] = None) -> List[v1.Message]:
        return [m for p in await self._history_pages(timeout) for m in p.messages]

    async def turns(self, *, timeout: Optional[float] = None) -> List[List[v1.Message]]:
        pages = await self._history_pages(timeout, turns=True)
        return turns_of([m for p in pages for m in p.messages], pages[0].turns)

    async def render(self, *, timeout: Optional[float] = None) -> str:
        return "\n".join(p.rendered for p in await self._history_pages(timeout, rendered=True))

    async def set_history(self, messages: Sequence[v1.Message], *, timeout: Optional[float] = None) -> int:
        req = v1.SetHistoryRequest(agent_id=self.id, messages=messages)
        return (await self.client._unary(self.client.api.SetHistory, req, timeout)).history_length

    async def preview(
        self, input: Union[str, Sequence[v1.Part], None] = None, *, timeout: Optional[float] = None,
    ) -> v1.PreviewContextResponse:
        req = v1.PreviewContextRequest(agent_id=self.id, input=preview_input(input))
        return await self.client._unary(self.client.api.PreviewContext, req, timeout)

    async def runs(self, *, timeout: Optional[float] = None) -> List[v1.Run]:
        return await self.client.runs(self.id, timeout=timeout)
