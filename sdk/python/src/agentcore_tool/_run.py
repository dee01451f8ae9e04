"""Running commands inside a call, their output streamed live."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
from typing import Any, List, Sequence, Union

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
    """
    for k in ("stdout", "stderr"):
        if k in popen:
            raise TypeError(f"run() streams {k} itself")
    popen.setdefault("stdin", subprocess.DEVNULL)
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
