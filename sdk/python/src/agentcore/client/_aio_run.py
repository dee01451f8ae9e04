"""AsyncRun: a run's events as the asyncio client streams them."""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, Optional, Set

import grpc
import grpc.aio

from agentcore import v1

from ._common import RECONNECT_FIRST, RECONNECT_MAX, Answer, Callbacks, Decision, Result, calls, decision_of
from ._errors import AgentcoreError, ended_without_result, from_rpc_error, transient
from ._runstate import LATE, RunState

if TYPE_CHECKING:
    from ._aio import AsyncClient


class AsyncRun(RunState):
    """A run's events, from a send or an attach, as they come: iterate it
    (once) with async for, or await wait(). The callbacks get each event
    before the loop does; result is set when the run has succeeded::

        async with agent.send_stream("task", ask=True) as run:
            async for event in run:
                if event.HasField("permission_request"):
                    await run.respond(event.permission_request.tool_call_id, allow())
        print(run.result.text)

    Leaving the block, close(), cancelling the task or an exception in the
    loop cancels the stream: a run started without detach or reconnect then
    stops.
    """

    def __init__(
        self,
        client: AsyncClient,
        callbacks: Optional[Callbacks],
        *,
        start: Optional[v1.SendRequest] = None,
        attach: Optional[v1.AttachRequest] = None,
        reconnect: bool = False,
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__(callbacks, start, attach, reconnect, timeout)
        self._client = client
        self._send: Any = None  # the live Send call, None once it ended or for an attach
        self._call: Any = None
        self._write_lock = asyncio.Lock()
        self._closed = asyncio.Event()
        self._asks: Set[asyncio.Task[None]] = set()
        self._agen: Optional[AsyncGenerator[v1.Event, None]] = None
        self._done = False

    async def __aenter__(self) -> AsyncRun:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
        if self._agen is not None:
            await self._agen.aclose()  # a loop left early: end the generator now, not when collected

    def __aiter__(self) -> AsyncIterator[v1.Event]:
        if self._agen is not None:
            raise RuntimeError("a Run's events can be iterated once")
        self._agen = self._iterate()
        return self._agen

    async def _iterate(self) -> AsyncGenerator[v1.Event, None]:
        try:
            async for e in self._events():
                yield e
        except BaseException:
            self.close()
            raise
        finally:
            self._finish()

    async def wait(self) -> Result:
        """Follows the run to its end (the callbacks get its events) and returns its result."""
        async for _ in self:
            pass
        assert self.result is not None
        return self.result

    async def respond(self, tool_call_id: str, decision: Answer) -> None:
        """Answers a permission request of the run: on its Send stream while
        that is open, else with RespondPermission."""
        d = decision_of(decision)
        send = self._send
        if send is not None and not self._done:
            try:
                async with self._write_lock:
                    await send.write(v1.SendRequest(permission=v1.PermissionReply(
                        tool_call_id=tool_call_id, allow=d.allow, reason=d.reason)))
                # The stream may break before the reply leaves: sent again
                # with RespondPermission after a reconnection.
                self._unconfirmed[tool_call_id] = d
                return
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                if not self.run_id:
                    raise
        await self._client.respond_permission(self.run_id, tool_call_id, d)

    async def stop(self) -> None:
        """Stops the run (its stream then ends with a CANCELLED error): on
        its Send stream while that is open, else with Stop."""
        send = self._send
        if send is not None and not self._done:
            try:
                async with self._write_lock:
                    await send.write(v1.SendRequest(stop=v1.StopRun()))
                return
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                if not self.run_id:
                    raise
        agent_id = self.agent_id or (await self._client.get_run(self.run_id)).agent_id
        await self._client.agent(agent_id).stop_run(self.run_id)

    def close(self) -> None:
        """Cancels the stream: the run stops unless it was started with
        detach or reconnect."""
        self._closed.set()
        if self._call is not None:
            self._call.cancel()

    async def _open(self) -> Any:
        api, md = self._client.api, self._client._metadata
        start = self._start_request()
        if start is not None:
            self._call = self._send = api.Send(timeout=self._remaining(), metadata=md)
            await self._send.write(start)
        else:
            self._send = None
            self._call = api.Attach(self._attach_request(), timeout=self._remaining(), metadata=md)
            await self._resend()
        return self._call

    async def _resend(self) -> None:
        """Answers again, with RespondPermission, what was answered on a
        Send stream that broke since: an answer that did arrive is refused
        as answered already."""
        answers, self._unconfirmed = self._unconfirmed, {}
        for call_id, d in answers.items():
            try:
                await self._client.respond_permission(self.run_id, call_id, d)
            except AgentcoreError as e:
                if e.reason in LATE:
                    continue
                if transient(e):  # tried again after the next reconnection
                    self._unconfirmed.update({k: v for k, v in answers.items() if k not in self._unconfirmed})
                raise

    async def _events(self) -> AsyncIterator[v1.Event]:
        wait = RECONNECT_FIRST
        while True:
            try:
                call = await self._open()
                while True:
                    resp = await call.read()
                    if resp is grpc.aio.EOF:
                        break
                    e = resp.event
                    self._seen(e)
                    wait = RECONNECT_FIRST
                    await self._dispatch(e)
                    yield e
                break
            except asyncio.CancelledError:
                if self._closed.is_set() and not _cancelling():
                    raise self._closed_error() from None  # close() cancelled the call, not the task
                raise
            except (grpc.aio.AioRpcError, AgentcoreError) as failure:
                err = failure if isinstance(failure, AgentcoreError) else from_rpc_error(failure)
                if self._closed.is_set():
                    raise self._closed_error() from None
                if self._reconnect and self.run_id and transient(err):
                    self._send = None
                    if await self._pause(wait):
                        wait = min(2 * wait, RECONNECT_MAX)
                        continue
                    if self._closed.is_set():
                        raise self._closed_error() from None
                raise self._stamped(err) from None
        if self.result is None:
            raise ended_without_result(self.run_id, self.last_seq)

    async def _pause(self, seconds: float) -> bool:
        """Waits before attaching again; False when the run was closed or the timeout passed."""
        try:
            await asyncio.wait_for(self._closed.wait(), seconds)
            return False
        except asyncio.TimeoutError:
            return self._remaining() != 0

    async def _dispatch(self, e: v1.Event) -> None:
        for fn, arg in calls(e, self._cb):
            r = fn(arg)
            if inspect.isawaitable(r):
                await r
        if e.WhichOneof("kind") == "permission_request" and self._cb.on_permission is not None:
            task = asyncio.get_running_loop().create_task(self._ask(e.permission_request))
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)

    async def _ask(self, req: v1.PermissionRequestEvent) -> None:
        fn = self._cb.on_permission
        assert fn is not None
        try:
            if inspect.iscoroutinefunction(fn):
                answer = await fn(req)
            else:
                answer = await asyncio.to_thread(fn, req)  # it may block, e.g. on input()
                if inspect.isawaitable(answer):
                    answer = await answer
            d = decision_of(answer)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._answer(req.tool_call_id, Decision(False, f"the client's permission callback failed: {exc}"))
            raise  # the loop's exception handler reports it
        await self._answer(req.tool_call_id, d)

    async def _answer(self, tool_call_id: str, d: Decision) -> None:
        """Sends a callback's decision, again while the connection is broken,
        until the run ends."""
        wait = RECONNECT_FIRST
        while not self._done:
            try:
                await self.respond(tool_call_id, d)
                return
            except AgentcoreError as e:
                if e.reason in LATE:
                    return
                if not (self._reconnect and transient(e)):
                    raise
            if not await self._pause(wait):
                return
            wait = min(2 * wait, RECONNECT_MAX)

    def _finish(self) -> None:
        self._done = True
        self._send = None
        for task in list(self._asks):
            task.cancel()  # a decision after the run ended is not sent
        if self._call is not None:
            self._call.cancel()  # a no-op once the call has ended
            self._call = None


def _cancelling() -> bool:
    """Whether the current task is being cancelled (known from Python 3.11 on)."""
    task = asyncio.current_task()
    return task is not None and getattr(task, "cancelling", lambda: 0)() > 0
