#!/usr/bin/env python3
"""A tool plugin in Python showing every feature of the SDK (sdk/python).

Put it in a tool directory (it must be executable) and try it:

    toolhost list examples/tools/python
    toolhost call examples/tools/python greet '{"name": "Ada"}'

The same tools exist in Go (../go) and Node.js (../node); the conformance
suite (tests/conformance) runs one contract against all three.
"""

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

try:
    import agentcore_tool  # noqa: F401  (installed: pip install sdk/python)
except ImportError:  # run from this repository
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "sdk", "python", "src"))

from agentcore_tool import Call, Content, Limits, Stop, ToolError, image, run, serve, text, tool  # noqa: E402

# A 1x1 red PNG.
RED_DOT = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
    "53de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082"
)


@dataclass
class Greeting:
    name: str = field(metadata={"description": "who to greet"})
    excited: Optional[bool] = field(default=None, metadata={"description": "end with an exclamation mark"})


@tool(description="Greets someone by name.", read_only=True, idempotent=True,
      limits=Limits(memory_bytes=256 << 20, max_processes=64, cpu_time=10, max_open_files=256))
def greet(inp: Greeting, call: Call) -> str:
    call.emit("thinking of a greeting")
    return f"Hello, {inp.name}" + ("!" if inp.excited else ".")


@dataclass
class Count:
    n: int = field(metadata={"description": "how far to count"})


@tool(description="Counts to n: each number as live output, on stdout and on stderr.")
def count(inp: Count, call: Call) -> dict:
    for i in range(1, inp.n + 1):
        call.emit(f"emit {i}\n")
        print(f"stdout {i}")
        print(f"stderr {i}", file=sys.stderr)
    return {"counted": inp.n}


@dataclass
class Shell:
    command: str = field(metadata={"description": "a sh command line"})


@tool(description="Runs a sh command; its output streams live.")
def shell(inp: Shell, call: Call) -> dict:
    return {"exitCode": run(call, ["sh", "-c", inp.command])}


@dataclass
class Finish:
    summary: str


@tool(description="Ends the agent's loop with a summary.")
def finish(inp: Finish) -> object:
    return Stop(inp.summary)


@tool(description="Returns a caption and a picture.", read_only=True)
def picture(inp: dict) -> Content:
    return Content([text("a red dot"), image("image/png", RED_DOT)])


@dataclass
class Fail:
    message: str


@tool(description="Fails with the given message.")
def fail(inp: Fail) -> str:
    raise ToolError(inp.message)


@tool(description="Raises an exception.")
def explode(inp: dict) -> str:
    raise RuntimeError("kaboom")


@dataclass
class Crash:
    code: int


@tool(description="Exits the plugin process at once.")
def crash(inp: Crash) -> str:
    os._exit(inp.code)


@tool(description="Starts a process tree that sleeps, reports its pids and waits.")
def spawn(inp: dict, call: Call) -> str:
    # sh starts a grandchild in the background and reports both pids.
    run(call, ["sh", "-c", 'sleep 300 & echo "pids $$ $!"; wait'])
    return "the tree ended"


@tool(description="Allocates memory without end, 8 MiB at a time, saying how far it got; the host's memory limit kills it.")
def hog(inp: dict, call: Call) -> str:
    held = []
    while not call.cancelled.is_set():
        held.append(b"x" * (8 << 20))  # written, so it counts
        call.emit(f"{8 * len(held)} MiB\n")
    return "stopped"


@dataclass
class Swarm:
    n: int = field(metadata={"description": "how many sleeping processes to start"})


@tool(description="Starts n sleeping processes and waits for them; past 32 processes the host kills the call.",
      limits=Limits(max_processes=32))
def swarm(inp: Swarm, call: Call) -> dict:
    script = 'i=0; while [ $i -lt "$1" ]; do sleep 30 & i=$((i+1)); done; wait'
    return {"exitCode": run(call, ["sh", "-c", script, "sh", str(inp.n)])}


@tool(description="Spins on the CPU; past 250ms of CPU time the host kills it.", limits=Limits(cpu_time=0.25))
def spin(inp: dict, call: Call) -> str:
    while not call.cancelled.is_set():
        pass
    return "stopped"


@tool(description="Returns the call's trace context and runs a command that prints the TRACEPARENT and TRACESTATE it got.",
      read_only=True)
def traced(inp: dict, call: Call) -> dict:
    # call.trace_context is the host's span of the call: with OpenTelemetry,
    # start spans in opentelemetry.propagate.extract(call.trace_context).
    run(call, ["sh", "-c", 'echo "$TRACEPARENT|$TRACESTATE"'])
    return {"traceparent": call.trace_context.get("traceparent", ""), "tracestate": call.trace_context.get("tracestate", "")}


@tool(description="Returns the call's id, idempotency key and attempt.", read_only=True)
def keyed(inp: dict, call: Call) -> dict:
    return {"call_id": call.call_id, "idempotency_key": call.idempotency_key, "attempt": call.attempt}


@dataclass
class Sleep:
    seconds: float


@tool(description="Sleeps; the host kills it after 1s.", timeout=1.0)
def slow(inp: Sleep) -> str:
    time.sleep(inp.seconds)
    return "woke up"


if __name__ == "__main__":
    serve(greet, count, shell, finish, picture, fail, explode, crash, spawn, hog, swarm, spin, traced, keyed, slow)
