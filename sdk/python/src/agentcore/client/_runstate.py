"""RunState: what Run and AsyncRun keep of a run, sync or asyncio alike."""

from __future__ import annotations

import time
from typing import Dict, Optional

from agentcore import v1

from ._common import Callbacks, Decision, Result, result_of
from ._errors import AgentcoreError, aborted
from ._reasons import Reason

# An answer given already, or to a run that ended, is not an error for a callback.
LATE = (Reason.PERMISSION_ANSWERED, Reason.PERMISSION_NOT_FOUND)


class RunState:
    """A run followed by a stream: how it was started or attached to, its
    id, the last event seen, its result, and the permission answers sent on
    a Send stream that may break before they leave."""

    def __init__(
        self,
        callbacks: Optional[Callbacks],
        start: Optional[v1.SendRequest],
        attach: Optional[v1.AttachRequest],
        reconnect: bool,
        timeout: Optional[float],
    ) -> None:
        self._cb = callbacks or Callbacks()
        self._start, self._attach, self._reconnect = start, attach, reconnect
        self._deadline = None if timeout is None else time.monotonic() + timeout
        self._unconfirmed: Dict[str, Decision] = {}
        self.run_id = attach.run_id if attach else ""
        """The run's id, once its first event came."""
        self.agent_id = start.start.agent_id if start else attach.agent_id if attach else ""
        self.last_seq = attach.after_seq if attach else 0
        """The seq of the last event seen: attach after it to follow the run on."""
        self.attempt = attach.attempt if attach is not None and attach.HasField("attempt") else 0
        """The attempt of the last event seen (0 until the run is resumed
        after a crash of its server): Attach is given it back."""
        self.result: Optional[Result] = None
        """The result, once the run has succeeded."""

    def _remaining(self) -> Optional[float]:
        """Seconds left before the timeout, None without one."""
        if self._deadline is None:
            return None
        return max(self._deadline - time.monotonic(), 0.0)

    def _start_request(self) -> Optional[v1.SendRequest]:
        """The start of the Send stream to open next; None when the next
        stream is an Attach (the run is known, or is attached to)."""
        return None if self.run_id else self._start

    def _attach_request(self) -> v1.AttachRequest:
        """The Attach of the next stream: as asked, or, once the run is
        known, after the last event seen."""
        if self.run_id:
            return v1.AttachRequest(run_id=self.run_id, after_seq=self.last_seq, attempt=self.attempt)
        return self._attach or v1.AttachRequest()

    def _seen(self, e: v1.Event) -> None:
        """Notes an event: the run's id, the last seq, the agent, the result."""
        self.run_id, self.last_seq, self.attempt = e.run_id or self.run_id, e.seq, e.attempt
        if e.WhichOneof("kind") == "run_started":
            self.agent_id = e.run_started.agent_id
        r = result_of(e)
        if r is not None:
            self.result = r

    def _closed_error(self) -> AgentcoreError:
        return self._stamped(aborted("the run's stream was closed"))

    def _stamped(self, err: AgentcoreError) -> AgentcoreError:
        """err, with the run and the last seq seen."""
        err.run_id, err.last_seq = self.run_id, self.last_seq
        return err
