"""What the end-to-end tests of agentcore.client share: the server under test,
the scripted model's plans, a TCP proxy that breaks connections, and the
asyncio client behind the sync client's interface.

The tests run against a real agent-server whose default model is agentcore's
fake model server (internal/fakemodel, speaking the chat protocol on
127.0.0.1), started by TestPythonClient (tests/python_client_test.go), which
sets AGENTCORE_TEST_TARGET and AGENTCORE_TEST_TOKEN. The model answers each
request from the plan on the second line of the agent's system prompt
(pyPlanned there).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import socket
import threading
import unittest
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence

from agentcore import v1
from agentcore.client import AsyncAgent, AsyncClient, AsyncRun, Client

TARGET = os.environ.get("AGENTCORE_TEST_TARGET", "")
TOKEN = os.environ.get("AGENTCORE_TEST_TOKEN", "")
SCRIPT_KEY = os.environ.get("AGENTCORE_TEST_SCRIPT_KEY", "py-client")
RESULTS = "{results}"  # replaced by the model with the last tool results
# The longest any one call of a test may take.
TIMEOUT = 60.0


def require_server() -> None:
    if not TARGET:
        raise unittest.SkipTest("AGENTCORE_TEST_TARGET is not set: go test ./tests -run TestPythonClient runs these tests against agent-server")


def turn(
    text: Optional[str] = None,
    *,
    chunks: Optional[Sequence[str]] = None,
    calls: Sequence[Dict[str, Any]] = (),
    status: int = 0,
    chunk_delay_ms: int = 0,
    delay_ms: int = 0,
    usage: Optional[Dict[str, int]] = None,
) -> Dict[str, Any]:
    """One answer of the fake model (internal/fakemodel's Turn)."""
    t: Dict[str, Any] = {}
    if text is not None:
        t["Text"] = text
    if chunks is not None:
        t["TextChunks"] = list(chunks)
    if calls:
        t["ToolCalls"] = list(calls)
    if status:
        t["Status"] = status
    if chunk_delay_ms:
        t["ChunkDelay"] = chunk_delay_ms * 1_000_000
    if delay_ms:
        t["Delay"] = delay_ms * 1_000_000
    if usage:
        t["Usage"] = usage
    return t


def call(id: str, tool: str, /, **args: Any) -> Dict[str, Any]:
    """A tool call the model makes."""
    return {"ID": id, "Name": tool, "Arguments": json.dumps(args)}


def plan(test: unittest.TestCase, *steps: Any) -> str:
    """The system prompt of an agent whose model answers step i (a request
    with i assistant messages) with steps[i], the last step answering any
    later one. A step is a turn, or a list of turns: one per attempt, for
    retries."""
    norm = [s if isinstance(s, list) else [s] for s in steps]
    # The model counts the attempts of each plan: a plan of its own each time.
    plan = {"test": test.id(), "nonce": uuid.uuid4().hex, "steps": norm}
    return SCRIPT_KEY + "\n" + json.dumps(plan, separators=(",", ":"))


def config(test: unittest.TestCase, *steps: Any, **fields: Any) -> v1.AgentConfig:
    """An agent config with the plan as its system prompt, fast retries, and fields."""
    c = v1.AgentConfig(system=plan(test, *steps), **fields)
    c.retry_max_delay.FromMilliseconds(20)
    return c


class Proxy:
    """A proxy to the server whose connections cut() breaks, as a network
    that fails would: the client sees its streams end UNAVAILABLE. It
    listens on 127.0.0.1, or on the unix socket path; address is what a
    client dials."""

    def __init__(self, target: str, path: Optional[str] = None) -> None:
        host, port = target.rsplit(":", 1)
        self._upstream = (host, int(port))
        if path is None:
            self._lis = socket.create_server(("127.0.0.1", 0))
            self.address = "127.0.0.1:%d" % self._lis.getsockname()[1]
        else:
            self._lis = socket.socket(socket.AF_UNIX)
            self._lis.bind(path)
            self._lis.listen()
            self.address = "unix:" + path
        self._lock = threading.Lock()
        self._conns: List[socket.socket] = []
        self._threads: List[threading.Thread] = []
        self._closed = False
        self._start(self._accept)

    def _start(self, fn: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True)
        with self._lock:
            self._threads.append(t)
        t.start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self._lis.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(self._upstream)
            except OSError:
                c.close()
                continue
            with self._lock:
                if self._closed:
                    c.close()
                    u.close()
                    return
                self._conns += [c, u]
            self._start(self._pipe, c, u)
            self._start(self._pipe, u, c)

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        """Breaks every connection through the proxy; new ones may follow."""
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        try:
            self._lis.shutdown(socket.SHUT_RDWR)  # wakes the accept: close alone does not
        except OSError:
            pass
        self._lis.close()
        self.cut()
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(5)


def quiet_grpc_poller(loop: asyncio.AbstractEventLoop) -> None:
    """Keeps out of the test output grpc.aio's spurious BlockingIOError from
    PollerCompletionQueue._handle_events, which it reports when one process
    runs gRPC calls on several event loops, as these tests do (each loop is
    woken, one reads the event; grpc/grpc issue 25364). The calls are not
    affected."""

    def handle(loop: asyncio.AbstractEventLoop, context: Dict[str, Any]) -> None:
        if isinstance(context.get("exception"), BlockingIOError) and "PollerCompletionQueue" in repr(context.get("handle")):
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handle)


class _Loop:
    """An event loop in a thread of its own, for calling coroutines from sync code."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        quiet_grpc_poller(self.loop)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(TIMEOUT)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


class _Wrapped:
    """An asyncio client object behind the sync client's interface: each
    coroutine method runs on the loop and returns its result, and what
    comes back is wrapped in turn."""

    def __init__(self, target: Any, loop: _Loop) -> None:
        self._target, self._loop = target, loop

    def _wrap(self, value: Any) -> Any:
        if isinstance(value, AsyncAgent):
            return _Wrapped(value, self._loop)
        if isinstance(value, AsyncRun):
            return _SyncRun(value, self._loop)
        return value

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if not callable(attr):
            return self._wrap(attr)

        def call(*args: Any, **kwargs: Any) -> Any:
            if inspect.iscoroutinefunction(attr):
                return self._wrap(self._loop.run(attr(*args, **kwargs)))
            # Not a coroutine (agent(), send_stream()...): run on the loop all the same.
            async def on_loop() -> Any:
                return attr(*args, **kwargs)

            return self._wrap(self._loop.run(on_loop()))

        return call


class _SyncRun(_Wrapped):
    """An AsyncRun as a Run: iterated from sync code."""

    def __iter__(self) -> Any:
        it = self._target.__aiter__()
        while True:
            try:
                event = self._loop.run(it.__anext__())
            except StopAsyncIteration:
                return
            try:
                yield event
            except GeneratorExit:  # the loop was left early
                self._loop.run(it.aclose())
                raise

    def close(self) -> None:
        """AsyncRun.close, which may be called from another thread: here, any."""
        self._loop.loop.call_soon_threadsafe(self._target.close)

    def __enter__(self) -> _SyncRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.run(self._target.__aexit__(*exc))


class AsyncAsSync(_Wrapped):
    """An AsyncClient that looks like a Client, so that one test body tests both."""

    def __init__(self, target: str, **kwargs: Any) -> None:
        loop = _Loop()

        async def make() -> AsyncClient:
            return AsyncClient(target, **kwargs)

        super().__init__(loop.run(make()), loop)

    def close(self) -> None:
        self._loop.run(self._target.close())
        self._loop.close()


def clients() -> Dict[str, Callable[..., Any]]:
    """How to make each client the scenarios run with: the sync one, and
    the asyncio one behind the sync interface."""
    return {"sync": Client, "asyncio": AsyncAsSync}
