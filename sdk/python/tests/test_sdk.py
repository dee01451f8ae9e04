"""Unit tests of agentcore_tool: schemas from type hints, results, tool definitions.
The protocol itself is tested by tests/conformance, against a real host."""

import dataclasses
import enum
import json
import os
import sys
import unittest
from typing import Annotated, Dict, List, Literal, Optional, TypedDict

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from agentcore_tool import (  # noqa: E402
    Content, Limits, RawJSON, Result, Stop, ToolError, file_url, image, run, schema_for, text, tool,
)
from agentcore_tool._result import to_result  # noqa: E402
from agentcore_tool._run import trace_env, valid_traceparent  # noqa: E402
from agentcore_tool._server import _spec  # noqa: E402
from agentcore_tool._tool import check  # noqa: E402


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Inner:
    x: int


@dataclasses.dataclass
class Input:
    """What to paint."""

    name: Annotated[str, "who it is for"]
    color: Color
    size: Literal["s", "m", "l"]
    tags: List[str]
    inner: Inner
    weights: Dict[str, float] = dataclasses.field(default_factory=dict)
    note: Optional[str] = dataclasses.field(default=None, metadata={"description": "anything else"})


class Movie(TypedDict, total=False):
    title: str
    year: int


class SchemaTest(unittest.TestCase):
    def test_dataclass(self):
        s = schema_for(Input)
        self.assertEqual(s["type"], "object")
        self.assertEqual(s["description"], "What to paint.")
        self.assertEqual(s["required"], ["name", "color", "size", "tags", "inner"])
        self.assertFalse(s["additionalProperties"])
        p = s["properties"]
        self.assertEqual(p["name"], {"type": "string", "description": "who it is for"})
        self.assertEqual(p["color"], {"enum": ["red", "blue"]})
        self.assertEqual(p["size"], {"enum": ["s", "m", "l"]})
        self.assertEqual(p["tags"], {"type": "array", "items": {"type": "string"}})
        self.assertEqual(p["inner"]["properties"], {"x": {"type": "integer"}})
        self.assertEqual(p["weights"], {"type": "object", "additionalProperties": {"type": "number"}})
        self.assertEqual(p["note"]["description"], "anything else")

    def test_typeddict(self):
        s = schema_for(Movie)
        self.assertEqual(s["properties"], {"title": {"type": "string"}, "year": {"type": "integer"}})
        self.assertNotIn("required", s)

    def test_decoding(self):
        t = tool("paint", "Paints.", lambda inp: inp)
        got = t.decode({"name": "a", "color": "red", "size": "s", "tags": ["t"], "inner": {"x": 1}})
        self.assertEqual(got, {"name": "a", "color": "red", "size": "s", "tags": ["t"], "inner": {"x": 1}})

        def paint(inp: Input) -> str:
            return inp.name

        t = tool("paint", "Paints.", paint)
        got = t.decode({"name": "a", "color": "red", "size": "s", "tags": ["t"], "inner": {"x": 1}, "weights": {"w": 2}})
        self.assertIsInstance(got, Input)
        self.assertEqual(got.color, Color.RED)
        self.assertEqual(got.inner, Inner(x=1))
        self.assertEqual(got.weights, {"w": 2.0})
        self.assertIsNone(got.note)
        self.assertFalse(t.takes_call)


class ToolTest(unittest.TestCase):
    def test_forms(self):
        def greet(inp: Inner, call) -> str:
            """Greets."""
            return "hi"

        direct = tool("greet", "Says hi.", greet, timeout=2, read_only=True)
        self.assertEqual((direct.name, direct.description, direct.timeout, direct.read_only), ("greet", "Says hi.", 2.0, True))
        bare = tool(greet)
        self.assertEqual((bare.name, bare.description), ("greet", "Greets."))
        deco = tool(name="hello", idempotent=True)(greet)
        self.assertEqual((deco.name, deco.idempotent, deco.takes_call), ("hello", True, True))
        self.assertEqual(deco(Inner(1), None), "hi")

    def test_explicit_schema(self):
        t = tool("raw", "Raw.", lambda inp: inp, schema='{"type":"object","properties":{"a":{"type":"integer"}}}')
        self.assertEqual(t.input_schema["properties"], {"a": {"type": "integer"}})
        self.assertIsNone(check(t))

    def test_invalid(self):
        self.assertIn("must match", check(tool("bad name", "x", lambda inp: inp)))
        self.assertIn('"type": "object"', check(tool("t", "x", lambda inp: inp, schema={"type": "string"})))
        with self.assertRaises(TypeError):
            tool("t", "x", lambda: None)
        with self.assertRaises(TypeError):
            tool("t", "x", lambda inp: inp, colour="red")

    def test_spec(self):
        t = tool("t", "x", lambda inp: inp, timeout=1.5, limits=Limits(memory_bytes=1 << 20, max_processes=3, cpu_time=2.5, max_open_files=9))
        s = _spec(t)
        self.assertEqual(s.timeout.ToNanoseconds(), 1_500_000_000)
        self.assertEqual((s.limits.memory_bytes, s.limits.max_processes, s.limits.max_open_files), (1 << 20, 3, 9))
        self.assertEqual(s.limits.cpu_time.ToMilliseconds(), 2500)
        self.assertFalse(_spec(tool("u", "y", lambda inp: inp)).HasField("limits"))


class ResultTest(unittest.TestCase):
    def test_values(self):
        cases = [
            ("hi", "text", "hi"),
            ({"a": 1}, "json", '{"a": 1}'),
            (None, "json", "null"),
            (Inner(3), "json", '{"x": 3}'),
            (RawJSON('{"b":2}'), "json", '{"b":2}'),
        ]
        for value, kind, want in cases:
            r = to_result(value)
            self.assertEqual(r.WhichOneof("output"), kind, value)
            self.assertEqual(getattr(r, kind), want)
            self.assertFalse(r.error)

    def test_flags(self):
        r = to_result(Stop("done"))
        self.assertTrue(r.stop)
        self.assertEqual(r.text, "done")
        r = to_result(Result(output="bad", error=True))
        self.assertEqual((r.text, r.error), ("bad", "the tool reported a failure"))

    def test_content(self):
        r = to_result(Content([text("cap"), image("image/png", b"\x89PNG"), file_url("", "https://x.test/a.png")]))
        parts = r.content.parts
        self.assertEqual(parts[0].text, "cap")
        self.assertEqual((parts[1].file.media_type, parts[1].file.data), ("image/png", b"\x89PNG"))
        self.assertEqual((parts[2].file.media_type, parts[2].file.url), ("image/png", "https://x.test/a.png"))

    def test_invalid(self):
        for value, want in [
            (b"bytes", "return text"),
            (object(), "cannot be serialised as JSON"),
            (Content([]), "no parts"),
            (Content([image("png", b"x")]), "not a media type"),
            (Content([file_url("image/png", "ftp://x")]), "not an http(s) or data URL"),
            (RawJSON("{"), "invalid result"),
            (Result(output=Result("x")), "cannot hold another Result"),
        ]:
            r = to_result(value)
            self.assertTrue(r.error, value)
            self.assertIn(want, r.text)

    def test_tool_error_is_an_exception(self):
        self.assertTrue(issubclass(ToolError, Exception))
        self.assertEqual(json.loads(to_result([1, 2]).json), [1, 2])


TRACEPARENT = "00-a1b20000000000000000000000000000-c3d4000000000000-01"


class _FakeCall:
    """What run() uses of a Call: its trace context and its output."""

    def __init__(self, trace_context):
        self.trace_context = trace_context
        self.out = b""

    def send_after_stdio(self, stream, data):
        self.out += data


class TraceTest(unittest.TestCase):
    def test_valid_traceparent(self):
        for tp, want in [
            (TRACEPARENT, True),
            ("01-a1b20000000000000000000000000000-c3d4000000000000-01-later", True),
            ("00-a1b20000000000000000000000000000-c3d4000000000000-01-more", False),
            ("ff-a1b20000000000000000000000000000-c3d4000000000000-01", False),
            ("00-00000000000000000000000000000000-c3d4000000000000-01", False),
            ("00-a1b20000000000000000000000000000-0000000000000000-01", False),
            ("00-A1B20000000000000000000000000000-c3d4000000000000-01", False),
            ("", False),
        ]:
            self.assertEqual(valid_traceparent(tp), want, tp)

    def test_trace_env(self):
        base = {"PATH": "/bin", "TRACEPARENT": "stale", "TRACESTATE": "stale=1"}
        self.assertEqual(trace_env({"traceparent": TRACEPARENT, "tracestate": "v=abc"}, base),
                         {"PATH": "/bin", "TRACEPARENT": TRACEPARENT, "TRACESTATE": "v=abc"})
        self.assertEqual(trace_env({"traceparent": TRACEPARENT}, base), {"PATH": "/bin", "TRACEPARENT": TRACEPARENT})
        self.assertIsNone(trace_env({}, base))
        self.assertIsNone(trace_env({"traceparent": "junk", "tracestate": "v=abc"}, base))
        self.assertEqual(trace_env({"traceparent": TRACEPARENT}, None)["TRACEPARENT"], TRACEPARENT)

    def test_run_passes_the_trace_on(self):
        show = ["sh", "-c", 'printf "%s|%s|%s" "$TRACEPARENT" "$TRACESTATE" "$KEPT"']
        call = _FakeCall({"traceparent": TRACEPARENT, "tracestate": "v=abc"})
        self.assertEqual(run(call, show, env={"KEPT": "yes", "TRACESTATE": "stale=1"}), 0)
        self.assertEqual(call.out.decode(), TRACEPARENT + "|v=abc|yes")
        call = _FakeCall({})
        self.assertEqual(run(call, show, env={"KEPT": "yes", "TRACEPARENT": "outer"}), 0)
        self.assertEqual(call.out.decode(), "outer||yes")


if __name__ == "__main__":
    unittest.main()
