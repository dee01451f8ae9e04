"""Serving tools as a plugin: the go-plugin handshake and ToolPluginService."""

from __future__ import annotations

import asyncio
import concurrent.futures
import ctypes
import faulthandler
import inspect
import json
import os
import queue
import signal
import sys
import tempfile
import threading
import traceback
from typing import Any, Dict, Iterator, List, Optional

import grpc
from google.protobuf import duration_pb2

from ._proto import plugin_pb2 as pb
from ._result import ToolError, error_result, to_result
from ._stdio import Stdio
from ._tool import Tool, check

#: The go-plugin handshake shared with the host (proto/agentcore/plugin/v1/handshake.go).
MAGIC_COOKIE_KEY = "AGENTCORE_TOOL_PLUGIN"
MAGIC_COOKIE_VALUE = "tool-plugin-v1"
CORE_PROTOCOL_VERSION = 1
APP_PROTOCOL_VERSION = 1

_SERVICE = "agentcore.plugin.v1.ToolPluginService"
_OUTPUT = pb.OUTPUT_STREAM_OUTPUT
_STDOUT = pb.OUTPUT_STREAM_STDOUT
_STDERR = pb.OUTPUT_STREAM_STDERR

# A call's messages wait here for the RPC to send them; a tool that writes
# faster than the host reads blocks, as a Go plugin's Send would.
_QUEUE_SIZE = 1024


class Call:
    """The running call, handed to a tool function as its second argument."""

    def __init__(self, req: pb.ExecuteRequest, stdio: Optional[Stdio]) -> None:
        #: The tool's name.
        self.tool: str = req.tool
        #: The model's tool-call id, for logs; may be empty.
        self.call_id: str = req.call_id
        #: The same for every execution of this call, also when agent-server
        #: runs it again after a crash cut it off ("RUN/CALL"). A tool with
        #: side effects keeps the keys it acted on and answers a key it has
        #: seen with its first result, so that its effect happens once.
        #: Empty outside a run.
        self.idempotency_key: str = req.idempotency_key
        #: 1 for the call's first execution, 2 or more when agent-server runs
        #: it again after a crash (an earlier one may or may not have had its
        #: effect); 0 outside a run.
        self.attempt: int = req.attempt
        #: The W3C trace context ("traceparent", "tracestate") of the host's
        #: span of this call (execute_tool), empty when the host is not
        #: tracing. With OpenTelemetry, start the tool's spans in
        #: ``opentelemetry.propagate.extract(call.trace_context)``; commands
        #: started with :func:`run` get it as TRACEPARENT and TRACESTATE.
        self.trace_context: Dict[str, str] = dict(req.trace_context)
        #: Set when the host stopped the call (the host also kills the process group).
        self.cancelled = threading.Event()
        self._stdio = stdio
        self._queue: "queue.Queue[pb.ExecuteResponse]" = queue.Queue(_QUEUE_SIZE)
        self._lock = threading.Lock()
        self._done = False

    def emit(self, text: str) -> None:
        """Sends a piece of live output (stream "output"). Safe from any
        thread; after the call has returned it does nothing."""
        data = text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)
        self.send_after_stdio(_OUTPUT, data)

    def send_after_stdio(self, stream: int, data: bytes) -> None:
        """Sends a chunk after whatever the process wrote to its stdout and
        stderr before, so that output keeps the order it was made in."""
        if not data:
            return
        if self._stdio is not None:
            self._stdio.flush()
        self.send(stream, data)

    def send(self, stream: int, data: bytes) -> None:
        with self._lock:
            if self._done or not data:
                return
            self._put(pb.ExecuteResponse(output=pb.OutputChunk(stream=stream, data=bytes(data))))

    def _put(self, msg: pb.ExecuteResponse) -> None:
        while not self.cancelled.is_set():
            try:
                self._queue.put(msg, timeout=0.5)
                return
            except queue.Full:
                continue

    def _finish(self, res: pb.ToolResult) -> None:
        with self._lock:
            self._done = True
            self._put(pb.ExecuteResponse(result=res))


class _Service:
    def __init__(self, tools: List[Tool], stdio: Optional[Stdio]) -> None:
        self.tools = {t.name: t for t in tools}
        self.names = sorted(self.tools)
        self.specs = [_spec(t) for t in tools]
        self.stdio = stdio
        self.call_lock = threading.Lock()  # one call at a time: output is attributed to it
        self.shutdown = threading.Event()

    # ToolPluginService

    def describe(self, req: pb.DescribeRequest, ctx: grpc.ServicerContext) -> pb.DescribeResponse:
        return pb.DescribeResponse(tools=self.specs)

    def execute(self, req: pb.ExecuteRequest, ctx: grpc.ServicerContext) -> Iterator[pb.ExecuteResponse]:
        current: List[Call] = []
        ctx.add_callback(lambda: [c.cancelled.set() for c in current])
        yield from self._serve_call(req, current)

    def session(self, reqs: Iterator[pb.SessionRequest], ctx: grpc.ServicerContext) -> Iterator[pb.SessionResponse]:
        current: List[Call] = []
        ctx.add_callback(lambda: [c.cancelled.set() for c in current])
        for msg in reqs:
            if not msg.HasField("execute"):
                ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "session message without a call")
            for out in self._serve_call(msg.execute, current):
                yield pb.SessionResponse(execute=out)

    def _serve_call(self, req: pb.ExecuteRequest, current: List[Call]) -> Iterator[pb.ExecuteResponse]:
        with self.call_lock:
            call = Call(req, self.stdio)
            current[:] = [call]
            if self.stdio is not None:
                self.stdio.attach(call)
            threading.Thread(target=self._body, args=(call, req), name=f"tool {req.tool}", daemon=True).start()
            while True:
                try:
                    msg = call._queue.get(timeout=0.5)
                except queue.Empty:
                    if call.cancelled.is_set():
                        return  # the RPC is gone; the host kills the process
                    continue
                yield msg
                if msg.HasField("result"):
                    return

    def _body(self, call: Call, req: pb.ExecuteRequest) -> None:
        try:
            res = self._run(call, req)
        except BaseException as e:  # the conversion itself failed
            res = error_result(f"tool {req.tool!r} failed: {e}")
        if self.stdio is not None:
            self.stdio.detach()
        call._finish(res)

    def _run(self, call: Call, req: pb.ExecuteRequest) -> pb.ToolResult:
        t = self.tools.get(req.tool)
        if t is None:
            return error_result(f"unknown tool {req.tool!r}; this plugin offers: {', '.join(self.names)}")
        try:
            raw = json.loads(req.input_json) if req.input_json else {}
            inp = t.decode(raw)
        except Exception as e:
            return error_result(f"invalid input for tool {t.name!r}: {e}")
        try:
            value = t.fn(inp, call) if t.takes_call else t.fn(inp)
            if inspect.isawaitable(value):
                value = asyncio.run(_await(value))
        except ToolError as e:
            return error_result(str(e))
        except SystemExit as e:
            return error_result(f"tool {t.name!r} called exit({e.code!r}); the plugin keeps serving")
        except BaseException as e:
            return error_result(f"tool {t.name!r} raised {type(e).__name__}: {e}\n\n{_tool_traceback(e)}")
        return to_result(value)

    # grpc.health.v1.Health, as go-plugin expects: SERVING for every service
    # name ("plugin" is go-plugin's). The messages are one field each, so the
    # handler speaks their bytes: HealthCheckResponse{status: SERVING} is 08 01.

    def health_check(self, req: bytes, ctx: grpc.ServicerContext) -> bytes:
        return b"\x08\x01"

    # plugin.GRPCController: the host asks the plugin to exit.

    def controller_shutdown(self, req: bytes, ctx: grpc.ServicerContext) -> bytes:
        self.shutdown.set()
        return b""


async def _await(aw: Any) -> Any:
    return await aw


def _tool_traceback(e: BaseException) -> str:
    """The frames of e's traceback below the SDK's own."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(e), e, tb)).rstrip()


def _spec(t: Tool) -> pb.ToolSpec:
    spec = pb.ToolSpec(
        name=t.name,
        description=t.description,
        input_schema_json=json.dumps(t.input_schema, separators=(",", ":")),
        hints=pb.ToolHints(read_only=t.read_only, idempotent=t.idempotent),
    )
    if t.timeout:
        spec.timeout.CopyFrom(_duration(t.timeout))
    if t.limits is not None:
        lim = t.limits
        spec.limits.memory_bytes = int(lim.memory_bytes or 0)
        spec.limits.max_processes = int(lim.max_processes or 0)
        spec.limits.max_open_files = int(lim.max_open_files or 0)
        if lim.cpu_time:
            cpu = lim.cpu_time.total_seconds() if hasattr(lim.cpu_time, "total_seconds") else float(lim.cpu_time)
            spec.limits.cpu_time.CopyFrom(_duration(cpu))
    return spec


def _duration(seconds: float) -> duration_pb2.Duration:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(round(seconds * 1e9)))
    return d


def _handlers(svc: _Service) -> List[grpc.GenericRpcHandler]:
    ident = lambda b: b  # noqa: E731
    return [
        grpc.method_handlers_generic_handler(_SERVICE, {
            "Describe": grpc.unary_unary_rpc_method_handler(
                svc.describe, pb.DescribeRequest.FromString, pb.DescribeResponse.SerializeToString),
            "Execute": grpc.unary_stream_rpc_method_handler(
                svc.execute, pb.ExecuteRequest.FromString, pb.ExecuteResponse.SerializeToString),
            "Session": grpc.stream_stream_rpc_method_handler(
                svc.session, pb.SessionRequest.FromString, pb.SessionResponse.SerializeToString),
        }),
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
            "Check": grpc.unary_unary_rpc_method_handler(svc.health_check, ident, ident),
        }),
        grpc.method_handlers_generic_handler("plugin.GRPCController", {
            "Shutdown": grpc.unary_unary_rpc_method_handler(svc.controller_shutdown, ident, ident),
        }),
    ]


def serve(*tools: Tool) -> None:
    """Serves tools as a plugin and does not return. Call it from the script's
    main code.

    What a tool function returns becomes the result handed to the model: a
    str is text; a :class:`Content` (a list of parts), a list of parts or a
    part is content; a :class:`Result` (or :func:`Stop`) adds flags; a
    :class:`RawJSON` is sent as JSON as it is; anything else is serialised to
    JSON (dataclasses as objects). A raised :class:`ToolError` is an error
    result with its message; any other exception, an invalid part and a value
    that cannot be serialised are error results too, and the plugin keeps
    serving.

    serve exits with status 1 when the tools are invalid (bad or duplicate
    name, bad schema) or when the script is started by hand rather than by a
    host.
    """
    names = ", ".join(t.name for t in tools if isinstance(t, Tool))
    errs = []
    seen = set()
    for t in tools:
        if not isinstance(t, Tool):
            errs.append(f"{t!r} is not a tool: make it with tool()")
            continue
        msg = check(t)
        if msg:
            errs.append(msg)
        elif t.name in seen:
            errs.append(f"tool {t.name!r} is defined twice")
        seen.add(t.name)
    if not tools:
        errs.append("no tools to serve")
    if errs:
        sys.stderr.write("tool plugin: " + "\n".join(errs) + "\n")
        sys.exit(1)
    if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        sys.stderr.write(
            f"This is an agentcore tool plugin offering {names}.\n"
            "A host starts it; to try it, put it in a directory and run: toolhost list DIR\n")
        sys.exit(1)
    _take_signals()
    stdio = Stdio(_STDOUT, _STDERR)
    # Fatal errors (a crash in C code) reach the host, which reports their tail.
    faulthandler.enable(file=os.fdopen(os.dup(stdio.diag), "w"), all_threads=True)
    svc = _Service(list(tools), stdio)
    server = grpc.server(
        concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="rpc"),
        handlers=_handlers(svc),
        options=[("grpc.max_receive_message_length", 2**31 - 1), ("grpc.max_send_message_length", 2**31 - 1)],
    )
    path = _socket_path()
    try:
        if not server.add_insecure_port("unix:" + path):
            raise RuntimeError("the port was not added")
    except RuntimeError as e:
        os.write(stdio.diag, f"tool plugin: cannot listen on unix:{path}: {e}\n".encode())
        os._exit(1)
    server.start()
    stdio.handshake(f"{CORE_PROTOCOL_VERSION}|{APP_PROTOCOL_VERSION}|unix|{path}|grpc|\n")
    svc.shutdown.wait()
    server.stop(grace=1).wait()
    os._exit(0)


def _socket_path() -> str:
    """A new path in the directory the host gives in PLUGIN_UNIX_SOCKET_DIR
    (else the temporary directory), as go-plugin's own servers pick it."""
    d = os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or tempfile.gettempdir()
    fd, path = tempfile.mkstemp(prefix="plugin", dir=d)
    os.close(fd)
    os.remove(path)
    return path


_PR_SET_PDEATHSIG = 1
_PR_GET_PDEATHSIG = 2


def _take_signals() -> None:
    """When the host started the plugin leading its own process group with a
    parent-death signal of SIGKILL, swap that for SIGTERM and make SIGTERM
    kill the whole group: should the host die, the commands the plugin
    started die with it. Runs before any thread is started."""
    if os.getpgrp() != os.getpid():
        return  # sharing the parent's group: a kill of the group would take the parent along
    signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        sig = ctypes.c_int(0)
        if libc.prctl(_PR_GET_PDEATHSIG, ctypes.byref(sig), 0, 0, 0) == 0 and sig.value == signal.SIGKILL:
            # Had the host died before this line, SIGKILL would have come already.
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the host kills the group itself
        pass
