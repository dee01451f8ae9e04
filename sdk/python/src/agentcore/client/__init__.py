"""agentcore.client: call agent-server from Python, as agent-core's Agent does in JavaScript.

Create an agent, send it a task with callbacks, answer its permission requests::

    from agentcore import v1
    from agentcore.client import Callbacks, Client, allow, output_text

    with Client("127.0.0.1:50051") as c:      # or "unix:/path/agent.sock"; token=..., tls=...
        agent = c.create_agent(config=v1.AgentConfig(system="Use the tools to do the task."))
        res = agent.send("Say hello to Ming", Callbacks(
            on_text=lambda t: print(t, end=""),
            on_tool_result=lambda e: print("\\ntool:", e.tool_name, output_text(e.output)),
            on_permission=lambda req: allow(),   # deny("why") refuses; the model is told why
        ))
        print(res.reason_name, res.steps, res.text)

AsyncClient is the same for asyncio (await agent.send(...), async for event
in agent.send_stream(...)). Every error is an AgentcoreError, whose reason
is one of Reason's constants and whose kind, for a model error, one of Kind's.
"""

from ._aio import AsyncAgent, AsyncClient
from ._aio_run import AsyncRun
from ._common import Answer, Callbacks, Decision, Result, allow, deny, output_text, reason_name
from ._errors import AgentcoreError, FieldViolation
from ._reasons import Kind, Reason
from ._run import Run
from ._sync import Agent, Client

__all__ = [
    "Agent",
    "AgentcoreError",
    "Answer",
    "AsyncAgent",
    "AsyncClient",
    "AsyncRun",
    "Callbacks",
    "Client",
    "Decision",
    "FieldViolation",
    "Kind",
    "Reason",
    "Result",
    "Run",
    "allow",
    "deny",
    "output_text",
    "reason_name",
]
