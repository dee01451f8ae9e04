"""Tools: what a plugin offers, and their input schemas derived from type hints."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import inspect
import json
import re
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

VALID_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resources a tool asks the host for, for one call's whole process tree.

    The host caps what a tool asks for by its own maximums; a field left at
    0 (or None) means "the host's default".
    """

    #: Memory of the process tree, in bytes.
    memory_bytes: int = 0
    #: Number of processes (and threads) in the tree.
    max_processes: int = 0
    #: CPU time of the call (user plus system), in seconds or a timedelta.
    cpu_time: Union[float, datetime.timedelta, None] = None
    #: Open file descriptors per process.
    max_open_files: int = 0


@dataclasses.dataclass
class Tool:
    """One tool a plugin offers. Build it with :func:`tool`."""

    #: How the model calls the tool: ^[a-zA-Z0-9_-]{1,64}$, unique in the plugin.
    name: str
    #: What the tool does and when to use it, written for the model.
    description: str
    #: JSON Schema of the input, an object schema (a dict).
    input_schema: Dict[str, Any]
    #: The body: fn(input, call) or fn(input), returning the result.
    fn: Callable[..., Any]
    #: The host kills a call that runs longer than this many seconds; None: no limit.
    timeout: Optional[float] = None
    #: Hint: the tool does not change its environment.
    read_only: bool = False
    #: Hint: repeating a call with the same input has no further effect.
    idempotent: bool = False
    #: Resources the tool asks for; None: the host's defaults.
    limits: Optional[Limits] = None
    #: Turns the JSON input (a dict) into what fn takes.
    decode: Callable[[Any], Any] = lambda v: v
    #: Whether fn takes the call as its second argument.
    takes_call: bool = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the function itself, e.g. from a unit test."""
        return self.fn(*args, **kwargs)


def tool(*args: Any, **options: Any) -> Any:
    """Defines a tool, directly or as a decorator.

    Directly, like the Go SDK's tool.New::

        serve(tool("greet", "Greets someone by name.", greet))

    As a decorator (the name defaults to the function's, the description to
    its docstring)::

        @tool(description="Greets someone by name.", read_only=True)
        def greet(inp: Greeting, call: Call) -> str: ...

    The function takes the input and, optionally, the :class:`Call`. The input
    schema is derived from the first parameter's type hint: a dataclass or a
    TypedDict (fields without a default, or required keys, are required; no
    other properties are allowed; ``Annotated[str, "text"]`` or
    ``field(metadata={"description": "text"})`` describe a field), or given
    as JSON Schema with ``schema=`` (the input is then a dict).

    Options: ``name``, ``description``, ``schema`` (a dict or JSON text),
    ``timeout`` (seconds or a timedelta), ``read_only``, ``idempotent``,
    ``limits`` (:class:`Limits`).
    """
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], str):
        return _make(args[0], **options)
    if len(args) == 3:
        name, description, fn = args
        return _make(fn, name=name, description=description, **options)
    if len(args) == 2:
        name, description = args
        return lambda fn: _make(fn, name=name, description=description, **options)
    if not args:
        return lambda fn: _make(fn, **options)
    raise TypeError("tool() takes (name, description, fn), (name, description) or a function, plus options")


_OPTIONS = {"name", "description", "schema", "timeout", "read_only", "idempotent", "limits"}


def _make(fn: Callable[..., Any], **options: Any) -> Tool:
    unknown = set(options) - _OPTIONS
    if unknown:
        raise TypeError(f"tool(): unknown option(s) {', '.join(sorted(unknown))}")
    if not callable(fn):
        raise TypeError(f"tool(): {fn!r} is not callable")
    name = options.get("name") or getattr(fn, "__name__", "")
    description = options.get("description")
    if description is None:
        description = inspect.cleandoc(fn.__doc__ or "")
    params = _positional_params(fn)
    if len(params) not in (1, 2):
        raise TypeError(f"tool {name!r}: the function must take (input) or (input, call), not {len(params)} parameters")
    hint = _first_hint(fn, params[0])
    schema = options.get("schema")
    if schema is not None:
        if isinstance(schema, (str, bytes)):
            schema = json.loads(schema)
        decode: Callable[[Any], Any] = lambda v: v
        if hint is not None and hint is not inspect.Parameter.empty and _is_struct(hint):
            decode = _decoder(hint)
    elif hint is None or hint is inspect.Parameter.empty or hint in (dict, Dict, Any) or typing.get_origin(hint) in (dict, Mapping):
        schema = {"type": "object"}
        decode = lambda v: v
    else:
        if not _is_struct(hint):
            raise TypeError(f"tool {name!r}: the input type must be a dataclass or a TypedDict, or give schema=")
        schema = schema_for(hint)
        decode = _decoder(hint)
    timeout = options.get("timeout")
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    return Tool(
        name=name,
        description=description,
        input_schema=schema,
        fn=fn,
        timeout=float(timeout) if timeout else None,
        read_only=bool(options.get("read_only", False)),
        idempotent=bool(options.get("idempotent", False)),
        limits=options.get("limits"),
        decode=decode,
        takes_call=len(params) == 2,
    )


def _positional_params(fn: Callable[..., Any]) -> List[inspect.Parameter]:
    sig = inspect.signature(fn)
    return [
        p
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]


def _first_hint(fn: Callable[..., Any], param: inspect.Parameter) -> Any:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to the raw annotation
        hints = {}
    return hints.get(param.name, param.annotation)


def check(t: Tool) -> Optional[str]:
    """Returns why t cannot be served, or None."""
    if not VALID_NAME.match(t.name or ""):
        return f"tool name {t.name!r} must match {VALID_NAME.pattern}"
    if not isinstance(t.input_schema, dict) or t.input_schema.get("type") != "object":
        return f'tool {t.name!r}: input schema must be a JSON object with "type": "object" at its root'
    try:
        json.dumps(t.input_schema)
    except (TypeError, ValueError) as e:
        return f"tool {t.name!r}: input schema is not JSON: {e}"
    if t.timeout is not None and t.timeout < 0:
        return f"tool {t.name!r}: timeout must not be negative"
    return None


# --- schemas from type hints -------------------------------------------------


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _is_struct(tp: Any) -> bool:
    return (isinstance(tp, type) and dataclasses.is_dataclass(tp)) or _is_typeddict(tp)


def _unannotate(tp: Any) -> "tuple[Any, Optional[str]]":
    """Strips Annotated[T, ...], returning T and the first string in it."""
    if typing.get_origin(tp) is typing.Annotated:
        base, *extras = typing.get_args(tp)
        desc = next((e for e in extras if isinstance(e, str)), None)
        return base, desc
    return tp, None


def schema_for(tp: Any) -> Dict[str, Any]:
    """Returns the JSON Schema of a type: a dataclass or TypedDict becomes an object schema."""
    tp, desc = _unannotate(tp)
    s = _schema(tp)
    if desc:
        s = dict(s, description=desc)
    return s


def _schema(tp: Any) -> Dict[str, Any]:
    if tp is Any or tp is object:
        return {}
    if tp is type(None):
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if _is_struct(tp):
        return _object_schema(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin is Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType"):
        non_null = [a for a in args if a is not type(None)]
        if len(non_null) == 1:
            inner = schema_for(non_null[0])
            if len(non_null) < len(args):
                return {"anyOf": [inner, {"type": "null"}]}
            return inner
        return {"anyOf": [schema_for(a) for a in args]}
    if origin in (list, List, Sequence, tuple) or tp in (list, tuple):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return {"type": "array", "prefixItems": [schema_for(a) for a in args], "minItems": len(args), "maxItems": len(args)}
        return {"type": "array", "items": schema_for(args[0])} if args else {"type": "array"}
    if origin in (dict, Dict, Mapping) or tp is dict:
        if len(args) == 2:
            return {"type": "object", "additionalProperties": schema_for(args[1])}
        return {"type": "object"}
    raise TypeError(f"cannot derive a JSON Schema for {tp!r}: give schema= instead")


def _object_schema(tp: type) -> Dict[str, Any]:
    hints = typing.get_type_hints(tp, include_extras=True)
    props: Dict[str, Any] = {}
    required: List[str] = []
    if dataclasses.is_dataclass(tp):
        for f in dataclasses.fields(tp):
            s = schema_for(hints.get(f.name, Any))
            if f.metadata.get("description"):
                s = dict(s, description=f.metadata["description"])
            props[f.name] = s
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                required.append(f.name)
    else:
        for key, hint in hints.items():
            hint, _ = _strip_required(hint)
            props[key] = schema_for(hint)
        required = [k for k in hints if k in tp.__required_keys__]  # type: ignore[attr-defined]
    s: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        s["required"] = required
    s["additionalProperties"] = False
    doc = inspect.cleandoc(tp.__doc__ or "") if tp.__doc__ and not tp.__doc__.startswith(tp.__name__ + "(") else ""
    if doc:
        s["description"] = doc
    return s


def _strip_required(hint: Any) -> "tuple[Any, Optional[bool]]":
    origin = typing.get_origin(hint)
    name = getattr(origin, "_name", None) or getattr(origin, "__name__", None)
    if name in ("Required", "NotRequired"):
        return typing.get_args(hint)[0], name == "Required"
    return hint, None


# --- decoding JSON input into the declared type ------------------------------


def _decoder(tp: Any) -> Callable[[Any], Any]:
    return lambda v: _decode(tp, v)


def _decode(tp: Any, v: Any) -> Any:
    tp, _ = _unannotate(tp)
    tp, _ = _strip_required(tp)
    if v is None:
        return None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        kwargs = {f.name: _decode(hints.get(f.name, Any), v[f.name]) for f in dataclasses.fields(tp) if f.name in v}
        return tp(**kwargs)
    if _is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return {k: _decode(hints.get(k, Any), x) for k, x in v.items()}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(v)
    if tp is float and isinstance(v, int):
        return float(v)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType"):
        non_null = [a for a in args if a is not type(None)]
        return _decode(non_null[0], v) if len(non_null) == 1 else v
    if origin in (list, List, Sequence) and args and isinstance(v, list):
        return [_decode(args[0], x) for x in v]
    if origin is tuple and isinstance(v, list):
        if args and args[-1] is not Ellipsis:
            return tuple(_decode(a, x) for a, x in zip(args, v))
        return tuple(_decode(args[0], x) for x in v) if args else tuple(v)
    if origin in (dict, Dict, Mapping) and len(args) == 2 and isinstance(v, dict):
        return {k: _decode(args[1], x) for k, x in v.items()}
    return v
