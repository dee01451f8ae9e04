"""Results: how what a tool returns becomes the protocol's ToolResult."""

from __future__ import annotations

import dataclasses
import json
import mimetypes
import urllib.parse
from typing import Any, List, Optional, Sequence

from ._proto import plugin_pb2 as pb


class ToolError(Exception):
    """Raise it for a failure the model should read as it is: the result is an
    error result whose text is the message, without a traceback."""


@dataclasses.dataclass(frozen=True)
class Part:
    """One block of multimodal output. Build parts with :func:`text`,
    :func:`image`, :func:`file` and :func:`file_url`."""

    #: "text" or "file".
    type: str
    text: str = ""
    #: IANA media type of a file part, e.g. image/png.
    media_type: str = ""
    #: The file's bytes; set exactly one of data and url.
    data: Optional[bytes] = None
    #: Where the file is: an https, http or data URL.
    url: str = ""
    filename: str = ""


class Content(list):
    """An ordered list of parts, returned as one result."""


def text(s: str) -> Part:
    """Returns a text part."""
    return Part(type="text", text=s)


def image(media_type: str, data: bytes) -> Part:
    """Returns an image part holding data (e.g. a PNG)."""
    return Part(type="file", media_type=media_type, data=bytes(data))


def file(media_type: str, data: bytes, filename: str = "") -> Part:
    """Returns a file part holding data."""
    return Part(type="file", media_type=media_type, data=bytes(data), filename=filename)


def file_url(media_type: str, url: str, filename: str = "") -> Part:
    """Returns a file part pointing at url."""
    return Part(type="file", media_type=media_type, url=url, filename=filename)


@dataclasses.dataclass
class Result:
    """A result with flags, for when a plain value is not enough."""

    #: The value handed to the model, converted like a plain return value.
    output: Any = None
    #: End the agent's loop after this round (reason tool-stop).
    stop: bool = False
    #: Mark the result as a failure that output describes.
    error: bool = False


def Stop(output: Any) -> Result:  # noqa: N802 (named like the Go SDK's tool.Stop)
    """Returns a result that ends the agent's loop, with output for the model."""
    return Result(output=output, stop=True)


class RawJSON(str):
    """JSON text sent as it is (it must be valid JSON)."""


def error_result(msg: str) -> pb.ToolResult:
    msg = _surrogates_replaced(str(msg)) or "the tool failed"
    return pb.ToolResult(text=msg, error=msg)


def to_result(value: Any) -> pb.ToolResult:
    """Converts what a handler returned; never raises: values that cannot be
    sent become error results."""
    stop = failed = False
    if isinstance(value, Result):
        value, stop, failed = value.output, value.stop, value.error
    try:
        res = _convert(value)
    except (TypeError, ValueError) as e:
        return error_result(f"invalid result: {e}")
    res.stop = stop
    if failed:
        res.error = "the tool reported a failure"
    return res


def _convert(v: Any) -> pb.ToolResult:
    if isinstance(v, Result):
        raise ValueError("a Result cannot hold another Result")
    if isinstance(v, RawJSON):
        json.loads(v)  # raises ValueError when it is not JSON
        return pb.ToolResult(json=str(v))
    if isinstance(v, str):
        return pb.ToolResult(text=_surrogates_replaced(v))
    if isinstance(v, Part):
        return _content([v])
    if isinstance(v, Content) or (isinstance(v, list) and v and all(isinstance(p, Part) for p in v)):
        return _content(v)
    if isinstance(v, (bytes, bytearray)):
        raise TypeError("the tool returned bytes: return text, or a file part (file(), image()) for binary data")
    try:
        out = json.dumps(v, default=_json_default, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TypeError(f"the value the tool returned ({type(v).__name__}) cannot be serialised as JSON: {e}") from e
    return pb.ToolResult(json=out)


def _surrogates_replaced(s: str) -> str:
    return s.encode("utf-8", "replace").decode("utf-8")


def _json_default(o: Any) -> Any:
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return dataclasses.asdict(o)
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _content(parts: Sequence[Part]) -> pb.ToolResult:
    if not parts:
        raise ValueError("content has no parts")
    out: List[pb.ContentPart] = []
    for i, p in enumerate(parts):
        try:
            out.append(_part(p))
        except ValueError as e:
            raise ValueError(f"content part {i}: {e}") from e
    return pb.ToolResult(content=pb.ContentParts(parts=out))


def _part(p: Part) -> pb.ContentPart:
    if not isinstance(p, Part):
        raise ValueError(f"{type(p).__name__} is not a Part")
    if p.type == "text":
        if p.data or p.url:
            raise ValueError("a text part holds text only, not data or a URL")
        return pb.ContentPart(text=_surrogates_replaced(p.text))
    if p.type not in ("file", "image"):
        raise ValueError(f"type {p.type!r} is not allowed: a part is text or file")
    if p.data and p.url:
        raise ValueError("file part has both data and a URL; give one")
    if not p.data and not p.url:
        raise ValueError("file part has neither data nor a URL")
    media_type = p.media_type
    f = pb.FilePart(filename=p.filename)
    if p.url:
        scheme = urllib.parse.urlparse(p.url).scheme
        if scheme not in ("https", "http", "data"):
            raise ValueError(f"file part URL {p.url!r} is not an http(s) or data URL")
        f.url = p.url
        if not media_type and scheme != "data":
            media_type = mimetypes.guess_type(urllib.parse.urlparse(p.url).path)[0] or ""
    else:
        f.data = bytes(p.data or b"")
    if not media_type or "/" not in media_type:
        raise ValueError(f"file part media type {media_type!r} is not a media type such as image/png")
    f.media_type = media_type
    return pb.ContentPart(file=f)
