"""AgentcoreError: every error a call of the client raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple, Union

import grpc

from . import _status_pb2
from ._reasons import Kind, Reason

_DETAILS_KEY = "grpc-status-details-bin"
_TYPE_PREFIX = "type.googleapis.com/google.rpc."


@dataclass(frozen=True)
class FieldViolation:
    """One bad field of an INVALID_ARGUMENT request: its path and what is wrong."""

    field: str
    description: str


class AgentcoreError(Exception):
    """Every error a call raises: the gRPC status code, and for the errors an
    agentcore server makes, the reason (compare it with Reason) and, for a
    model error, the kind (compare it with Kind)::

        try:
            agent.send("hi")
        except AgentcoreError as e:
            if e.reason == Reason.AGENT_BUSY: ...
            elif e.kind == Kind.LIMIT: ...
    """

    code: grpc.StatusCode
    """The gRPC status code."""
    reason: str
    """The google.rpc.ErrorInfo reason, one of Reason's constants (or one of a
    newer server: act on code then); "" when the status carried none."""
    kind: str
    """The model error kind (Kind: auth, limit, timeout, server, network,
    request, unknown, aborted), "" when the error is not a model error."""
    message: str
    """The server's message."""
    retryable: bool
    """Whether the same request may succeed later (model errors)."""
    status: int
    """The model service's HTTP status, 0 if none."""
    metadata: Dict[str, str]
    """The ErrorInfo metadata (kind, retryable, status, scope, cause...)."""
    fields: List[FieldViolation]
    """The bad fields of an INVALID_ARGUMENT."""
    retry_delay: Optional[float]
    """Seconds to wait before retrying, when the server said (RetryInfo)."""
    run_id: str
    """The run the error ended, when it came from a run's stream ("" otherwise)."""
    last_seq: int
    """The seq of the last event of that run this client saw: attach after it
    to follow the run on when it went on (detach or reconnect)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str = "",
        kind: str = "",
        *,
        retryable: bool = False,
        status: int = 0,
        metadata: Optional[Dict[str, str]] = None,
        fields: Optional[List[FieldViolation]] = None,
        retry_delay: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.reason, self.kind = code, message, reason, kind
        self.retryable, self.status = retryable, status
        self.metadata = dict(metadata or {})
        self.fields = list(fields or [])
        self.retry_delay = retry_delay
        self.run_id, self.last_seq = "", 0

    def __str__(self) -> str:
        s = f"agentcore: {self.code.name}"
        if self.reason:
            s += f" ({self.reason})"
        s += f": {self.message}"
        for f in self.fields:
            s += f"\n  {f.field}: {f.description}"
        return s

    def __repr__(self) -> str:
        return f"AgentcoreError(code={self.code.name}, reason={self.reason!r}, kind={self.kind!r}, message={self.message!r})"


Metadata = Iterable[Tuple[str, Union[str, bytes]]]


def from_status(code: grpc.StatusCode, message: str, trailers: Optional[Metadata]) -> AgentcoreError:
    """The error of a status, with the details of its grpc-status-details-bin trailer."""
    reason, kind, meta, fields, delay = "", "", {}, [], None
    for key, value in trailers or ():
        if key != _DETAILS_KEY or not isinstance(value, bytes):
            continue
        st = _status_pb2.Status.FromString(value)
        for any_ in st.details:
            name = any_.type_url[len(_TYPE_PREFIX):] if any_.type_url.startswith(_TYPE_PREFIX) else ""
            if name == "ErrorInfo":
                info = _status_pb2.ErrorInfo.FromString(any_.value)
                reason, meta = info.reason, dict(info.metadata)
            elif name == "BadRequest":
                bad = _status_pb2.BadRequest.FromString(any_.value)
                fields = [FieldViolation(v.field, v.description) for v in bad.field_violations]
            elif name == "RetryInfo":
                d = _status_pb2.RetryInfo.FromString(any_.value).retry_delay
                delay = d.seconds + d.nanos / 1e9
    if reason.lower() in Kind.ALL:
        kind = reason.lower()
    elif code == grpc.StatusCode.CANCELLED:
        kind = Kind.ABORTED
    try:
        http = int(meta.get("status", "0"))
    except ValueError:
        http = 0
    return AgentcoreError(
        code, message, reason, kind,
        retryable=meta.get("retryable") == "true", status=http, metadata=meta, fields=fields, retry_delay=delay,
    )


def from_rpc_error(e: grpc.RpcError) -> AgentcoreError:
    """The AgentcoreError of a failed call (sync or asyncio)."""
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    message = e.details() if hasattr(e, "details") else str(e)
    trailers = e.trailing_metadata() if hasattr(e, "trailing_metadata") else None
    return from_status(code or grpc.StatusCode.UNKNOWN, message or "", trailers)


def transient(e: AgentcoreError) -> bool:
    """A broken connection or a server going away rather than an answer of
    the server (whose errors carry a reason): worth attaching again."""
    return e.code == grpc.StatusCode.UNAVAILABLE and (not e.reason or e.reason == Reason.SHUTTING_DOWN)


def ended_without_result(run_id: str, last_seq: int) -> AgentcoreError:
    err = AgentcoreError(grpc.StatusCode.UNKNOWN, "the run's stream ended without a result")
    err.run_id, err.last_seq = run_id, last_seq
    return err


def aborted(message: str) -> AgentcoreError:
    """The error of a call the client itself cancelled."""
    return AgentcoreError(grpc.StatusCode.CANCELLED, message, Reason.ABORTED, Kind.ABORTED)
