"""Standard output and error of the plugin process, captured for the running call.

File descriptors 1 and 2 are pointed at pipes the plugin reads itself, so that
whatever writes there (print, logging, C extensions, child processes that
inherit them) reaches the host as the running call's output, tagged stdout or
stderr, in order and before the call's result.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from typing import Optional, Protocol


class Sink(Protocol):
    def send(self, stream: int, data: bytes) -> None: ...


class Capture:
    """Reads one redirected descriptor. Every read and forward happens under
    the lock, so once drain() has read the pipe empty, everything written
    before it was called has been forwarded."""

    def __init__(self, fd: int, stream: int, fallback: int) -> None:
        self.stream = stream
        self.fallback = fallback
        r, w = os.pipe()
        os.dup2(w, fd)  # inheritable: child processes write here too
        os.close(w)
        os.set_blocking(r, False)
        self.r = r
        self.lock = threading.Lock()
        self.sink: Optional[Sink] = None
        threading.Thread(target=self._loop, name=f"capture-{fd}", daemon=True).start()

    def _loop(self) -> None:
        poller = select.poll()
        poller.register(self.r, select.POLLIN)
        while True:
            poller.poll()
            with self.lock:
                if self._read_all():
                    return

    def _read_all(self) -> bool:
        """Forwards what the pipe holds; True at its end. Call with the lock held."""
        while True:
            try:
                b = os.read(self.r, 65536)
            except BlockingIOError:
                return False
            except InterruptedError:
                continue
            if not b:
                return True
            if self.sink is not None:
                self.sink.send(self.stream, b)
            else:
                _write_all(self.fallback, b)

    def drain(self, detach: bool) -> None:
        with self.lock:
            self._read_all()
            if detach:
                self.sink = None

    def attach(self, sink: Sink) -> None:
        with self.lock:
            self.sink = sink


def _write_all(fd: int, b: bytes) -> None:
    try:
        while b:
            n = os.write(fd, b)
            b = b[n:]
    except OSError:
        pass


class Stdio:
    """The captured descriptors 1 and 2, and the host's own pipes."""

    def __init__(self, stdout_stream: int, stderr_stream: int) -> None:
        # The host's pipes: stdout for the handshake line, stderr for logs,
        # crash output and whatever is written between calls.
        self.host_out = os.dup(1)
        self.diag = os.dup(2)
        os.set_inheritable(self.host_out, False)
        os.set_inheritable(self.diag, False)
        _flush_python_streams()
        self.out = Capture(1, stdout_stream, self.diag)
        self.err = Capture(2, stderr_stream, self.diag)
        for f in (sys.stdout, sys.stderr):
            try:  # prints reach the call line by line, not in 8 KB blocks
                f.reconfigure(line_buffering=True)  # type: ignore[union-attr]
            except (AttributeError, ValueError):
                pass

    def handshake(self, line: str) -> None:
        _write_all(self.host_out, line.encode())

    def attach(self, sink: Sink) -> None:
        self.out.attach(sink)
        self.err.attach(sink)

    def flush(self) -> None:
        """Forwards everything written so far to the attached call."""
        _flush_python_streams()
        self.out.drain(False)
        self.err.drain(False)

    def detach(self) -> None:
        """Forwards everything written so far, then detaches the call."""
        _flush_python_streams()
        self.out.drain(True)
        self.err.drain(True)


def _flush_python_streams() -> None:
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:  # a closed or replaced stream: nothing to flush
            pass
