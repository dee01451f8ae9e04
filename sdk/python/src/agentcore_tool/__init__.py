"""agentcore_tool: write agentcore tool plugins in Python.

A plugin is an executable script that offers one or more tools and serves
them; the host (agent-server, toolhost) starts it, runs one call at a time in
it, and kills its whole process group to stop a call::

    #!/usr/bin/env python3
    from dataclasses import dataclass, field
    from agentcore_tool import Call, serve, tool

    @dataclass
    class Greeting:
        name: str = field(metadata={"description": "who to greet"})

    @tool(description="Greets someone by name.", read_only=True)
    def say_hello(inp: Greeting, call: Call) -> str:
        call.emit("thinking of a greeting...")   # live output
        return f"Hello, {inp.name}!"

    serve(say_hello)

While a call runs, everything the process writes to its standard output and
error (print, logging, commands it starts) reaches the host as that call's
output, and all of it arrives before the call's result. The protocol is
described in docs/plugin-protocol.md.
"""

from ._deps import ensure_runtime

ensure_runtime()

from ._result import Content, Part, RawJSON, Result, Stop, ToolError, file, file_url, image, text  # noqa: E402
from ._run import kill_tree, run  # noqa: E402
from ._server import (  # noqa: E402
    APP_PROTOCOL_VERSION,
    CORE_PROTOCOL_VERSION,
    MAGIC_COOKIE_KEY,
    MAGIC_COOKIE_VALUE,
    Call,
    serve,
)
from ._tool import Limits, Tool, schema_for, tool  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "APP_PROTOCOL_VERSION",
    "CORE_PROTOCOL_VERSION",
    "MAGIC_COOKIE_KEY",
    "MAGIC_COOKIE_VALUE",
    "Call",
    "Content",
    "Limits",
    "Part",
    "RawJSON",
    "Result",
    "Stop",
    "Tool",
    "ToolError",
    "file",
    "file_url",
    "image",
    "kill_tree",
    "run",
    "schema_for",
    "serve",
    "text",
    "tool",
]
