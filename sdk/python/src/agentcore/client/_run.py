"""Run: a run's events as the sync client streams them."""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Dict, Iterator, Optional

import grpc

from agentcore import v1

from ._common import RECONNECT_FIRST, RECONNECT_MAX, Answer, Callbacks, Decision, Result, calls, decision_of
from ._errors import AgentcoreError, ended_without_result, from_rpc_error, transient
from ._runstate import LATE, RunState

if TYPE_CHECKING:
    from ._sync import Client


class Run(RunState):
    """A run's events, from a send or an attach, as they come: iterate it
    (once), or call wait(). The callbacks get each event before the loop
    does; result is set when the run has succeeded::

        with agent.send_stream("task", ask=True) as run:
            for event in run:
                if event.HasField("permission_request"):
                    run.respond(event.permission_request.tool_call_id, allow())
        print(run.result.text)

    Leaving the with block, close() or an exception in the loop cancels the
    stream: a run started without detach or reconnect then stops.
    """

    def __init__(
        self,
        client: Client,
        callbacks: Optional[Callbacks],
        *,
        start: Optional[v1.SendRequest] = None,
        attach: Optional[v1.AttachRequest] = None,
        reconnect: bool = False,
        timeout: Optional[float] = None,
    ) -> None:
        super().__init__(callbacks, start, attach, reconnect, timeout)
        self._client = client
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._requests: Optional[queue.Queue[Optional[v1.SendRequest]]] = None
        self._call: Optional[grpc.Call] = None
        self._iterated = self._done = False

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[v1.Event]:
        if self._iterated:
            raise RuntimeError("a Run's events can be iterated once")
        self._iterated = True
        try:
            yield from self._events()
        except BaseException:
            self.close()
            raise
        finally:
            self._finish()

    def wait(self) -> Result:
        """Follows the run to its end (the callbacks get its events) and returns its result."""
        for _ in self:
            pass
        assert self.result is not None
        return self.result

    def respond(self, tool_call_id: str, decision: Answer) -> None:
        """Answers a permission request of the run: on its Send stream while
        that is open, else with RespondPermission."""
        d = decision_of(decision)
        with self._lock:
            if self._requests is not None and not self._done:
                self._requests.put(v1.SendRequest(permission=v1.PermissionReply(
                    tool_call_id=tool_call_id, allow=d.allow, reason=d.reason)))
                # The stream may break before the reply leaves: sent again
                # with RespondPermission after a reconnection.
                self._unconfirmed[tool_call_id] = d
                return
        self._client.respond_permission(self.run_id, tool_call_id, d)

    def stop(self) -> None:
        """Stops the run (its stream then ends with a CANCELLED error): on
        its Send stream while that is open, else with Stop."""
        with self._lock:
            if self._requests is not None and not self._done:
                self._requests.put(v1.SendRequest(stop=v1.StopRun()))
                return
        agent_id = self.agent_id or self._client.get_run(self.run_id).agent_id
        self._client.agent(agent_id).stop_run(self.run_id)

    def close(self) -> None:
        """Cancels the stream (from any thread): the run stops unless it was
        started with detach or reconnect."""
        self._closed.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    def _open(self) -> Iterator[v1.SendResponse]:
        api, md = self._client.api, self._client._metadata
        with self._lock:
            start = self._start_request()
            if start is not None:
                self._requests = queue.Queue()
                self._requests.put(start)
                self._call = api.Send(_drain(self._requests), timeout=self._remaining(), metadata=md)
            else:
                self._requests = None
                self._call = api.Attach(self._attach_request(), timeout=self._remaining(), metadata=md)
            call, answers, self._unconfirmed = self._call, self._unconfirmed, {}
        self._resend(answers)
        return call

    def _resend(self, answers: Dict[str, Decision]) -> None:
        """Answers again, with RespondPermission, what was answered on a
        Send stream that broke since: an answer that did arrive is refused
        as answered already."""
        for call_id, d in answers.items():
            try:
                self._client.respond_permission(self.run_id, call_id, d)
            except AgentcoreError as e:
                if e.reason in LATE:
                    continue
                if transient(e):  # tried again after the next reconnection
                    self._unconfirmed.update({k: v for k, v in answers.items() if k not in self._unconfirmed})
                raise

    def _events(self) -> Iterator[v1.Event]:
        wait = RECONNECT_FIRST
        while True:
            try:
                for resp in self._open():
                    e = resp.event
                    self._seen(e)
                    wait = RECONNECT_FIRST
                    self._dispatch(e)
                    yield e
                break
            except (grpc.RpcError, AgentcoreError) as failure:
                err = failure if isinstance(failure, AgentcoreError) else from_rpc_error(failure)
                if self._closed.is_set():
                    raise self._closed_error() from None
                if self._reconnect and self.run_id and transient(err):
                    with self._lock:
                        self._end_requests()
                    if not self._closed.wait(wait) and self._remaining() != 0:
                        wait = min(2 * wait, RECONNECT_MAX)
                        continue
                    if self._closed.is_set():
                        raise self._closed_error() from None
                raise self._stamped(err) from None
        if self.result is None:
            raise ended_without_result(self.run_id, self.last_seq)

    def _dispatch(self, e: v1.Event) -> None:
        for fn, arg in calls(e, self._cb):
            _check_sync(fn(arg))
        if e.WhichOneof("kind") == "permission_request" and self._cb.on_permission is not None:
            threading.Thread(target=self._ask, args=(e.permission_request,), daemon=True,
                             name=f"agentcore permission {e.permission_request.tool_call_id}").start()

    def _ask(self, req: v1.PermissionRequestEvent) -> None:
        assert self._cb.on_permission is not None
        try:
            d = decision_of(_check_sync(self._cb.on_permission(req)))
        except Exception as exc:
            self._answer(req.tool_call_id, Decision(False, f"the client's permission callback failed: {exc}"))
            raise  # threading's excepthook prints it
        self._answer(req.tool_call_id, d)

    def _answer(self, tool_call_id: str, d: Answer) -> None:
        """Sends a callback's decision, again while the connection is broken,
        until the run ends."""
        wait = RECONNECT_FIRST
        while True:
            with self._lock:
                if self._done:
                    return
            try:
                self.respond(tool_call_id, d)
                return
            except AgentcoreError as e:
                if e.reason in LATE:
                    return
                if not (self._reconnect and transient(e)):
                    raise
            if self._closed.wait(wait):
                return
            wait = min(2 * wait, RECONNECT_MAX)

    def _end_requests(self) -> None:
        if self._requests is not None:
            self._requests.put(None)
            self._requests = None

    def _finish(self) -> None:
        with self._lock:
            self._done = True
            self._end_requests()
            call, self._call = self._call, None
        if call is not None:
            call.cancel()  # a no-op once the call has ended


def _drain(q: queue.Queue[Optional[v1.SendRequest]]) -> Iterator[v1.SendRequest]:
    """The Send stream's requests, until None."""
    while True:
        item = q.get()
        if item is None:
            return
        yield item


def _check_sync(value: object) -> object:
    if hasattr(value, "__await__"):
        close = getattr(value, "close", None)
        if close:
            close()  # no "never awaited" warning
        raise TypeError("a callback of the sync client returned an awaitable: use AsyncClient for coroutine callbacks")
    return value
