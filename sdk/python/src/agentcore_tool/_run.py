"""Running commands inside a call, their output streamed live."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._proto import plugin_pb2 as pb
from ._result import ToolError

# How long run waits, once the command has exited, for descendants that still
# hold its stdout or stderr open.
_WAIT_DELAY = 0.5


def run(call: Any, args: Union[str, Sequence[str]], **popen: Any) -> int:
    """Runs a command to completion inside a call and returns its exit code
    (negative: killed by that signal), like the Go SDK's tool.Run.

    Its stdout and stderr stream live as the call's output, tagged stdout and
    stderr, and all of it has been sent when run returns, so it arrives
    before the call's result. Standard input is /dev/null unless ``stdin=``
    is given. Other keyword arguments go to :class:`subprocess.Popen`
    (``cwd``, ``env``, ``shell``...).

    The command stays in the plugin's process group, so the host's kill (a
    timeout, a stopped call, the host dying) takes it and its children along.
    When the call is stopped, run kills the command and all its descendants
    at once and raises :class:`ToolError`.

    When the host traces the call (``call.trace_context`` holds a valid
    ``traceparent``), the command gets it as ``TRACEPARENT`` and
    ``TRACESTATE`` in its environment (``env=`` or the plugin's own), the
    OpenTelemetry convention for processes, so a traced command joins the
    trace.
    """
    for k in ("stdout", "stderr"):
        if k in popen:
            raise TypeError(f"run() streams {k} itself")
    popen.setdefault("stdin", subprocess.DEVNULL)
    env = trace_env(getattr(call, "trace_context", None), popen.get("env"))
    if env is not None:
        popen["env"] = env
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)
    readers = [
        _Reader(proc.stdout.fileno(), call, pb.OUTPUT_STREAM_STDOUT, sys.stdout),  # type: ignore[union-attr]
        _Reader(proc.stderr.fileno(), call, pb.OUTPUT_STREAM_STDERR, sys.stderr),  # type: ignore[union-attr]
    ]
    killed = threading.Event()
    cancelled = getattr(call, "cancelled", None)
    if cancelled is not None:
        def watch() -> None:
            while proc.poll() is None:
                if cancelled.wait(0.05):
                    kill_tree(proc.pid)
                    killed.set()
                    return
        threading.Thread(target=watch, name="run-watch", daemon=True).start()
    code = proc.wait()
    for r in readers:
        r.thread.join(_WAIT_DELAY)
        r.stop.set()
    for r in readers:
        r.thread.join()
    proc.stdout.close()  # type: ignore[union-attr]
    proc.stderr.close()  # type: ignore[union-attr]
    if killed.is_set():
        name = args if isinstance(args, str) else (args[0] if args else "")
        raise ToolError(f"command {name} killed: the call was stopped")
    return code


# A W3C traceparent: version, trace id, parent id, flags; a later version
# may add fields after a dash.
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")


def valid_traceparent(tp: str) -> bool:
    """Reports whether tp is a W3C traceparent a tracer would accept."""
    m = _TRACEPARENT.match(tp or "")
    if m is None or m.group(1) == "ff" or (m.group(1) == "00" and m.group(5)):
        return False
    return m.group(2) != "0" * 32 and m.group(3) != "0" * 16


def trace_env(trace_context: Optional[Mapping[str, str]], env: Optional[Mapping[str, str]]) -> Optional[Dict[str, str]]:
    """The environment of a command started in a traced call: env (None: the
    plugin's) with TRACEPARENT and TRACESTATE set from trace_context. None
    when the call carries no valid traceparent: the environment stays as
    it is."""
    tc = trace_context or {}
    tp = tc.get("traceparent", "")
    if not valid_traceparent(tp):
        return None
    out = {k: v for k, v in (os.environ if env is None else env).items() if k not in ("TRACEPARENT", "TRACESTATE")}
    out["TRACEPARENT"] = tp
    if tc.get("tracestate"):
        out["TRACESTATE"] = tc["tracestate"]
    return out


class _Reader:
    def __init__(self, fd: int, call: Any, stream: int, fallback: Any) -> None:
        self.fd, self.call, self.stream, self.fallback = fd, call, stream, fallback
        self.stop = threading.Event()
        os.set_blocking(fd, False)
        self.thread = threading.Thread(target=self._loop, name="run-output", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self.stop.is_set():
            if not poller.poll(50):
                continue
            while True:
                try:
                    b = os.read(self.fd, 65536)
                except BlockingIOError:
                    break
                if not b:
                    return
                self._out(b)

    def _out(self, b: bytes) -> None:
        send = getattr(self.call, "send_after_stdio", None)
        if send is not None:
            send(self.stream, b)
            return
        try:
            self.fallback.buffer.write(b)
            self.fallback.flush()
        except (AttributeError, ValueError):
            pass


def kill_tree(root: int) -> None:
    """Kills root and all its descendants: it stops the tree first, level by
    level, so that nothing forks away while it is being killed, then kills
    every stopped process."""
    stopped: List[int] = []
    for _ in range(16):
        fresh = [p for p in _tree(root) if p not in stopped]
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
            stopped.append(pid)
    for pid in stopped:
        _signal(pid, signal.SIGKILL)
    _signal(root, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _tree(root: int) -> List[int]:
    """root and its descendants, read from /proc."""
    children: dict = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [root]
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", "rb") as f:
                stat = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 1:].split()
        if len(rest) >= 2:
            children.setdefault(int(rest[1]), []).append(int(e))
    out = [root]
    i = 0
    while i < len(out):
        out.extend(children.get(out[i], []))
        i += 1
    return out
