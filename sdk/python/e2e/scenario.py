"""The base of the end-to-end scenarios: a client of the server under test
(sync or asyncio, by the subclass) and agents with scripted models."""

from __future__ import annotations

from typing import Any, Callable, List, Sequence

from agentcore import v1
from agentcore.client import AgentcoreError, Callbacks

from harness import RESULTS, TARGET, TOKEN, call, config, require_server, turn

# The five-minute task: greet Ming with say_hello, then say what it said.
HELLO = (
    turn(chunks=["Greeting ", "Ming."], calls=[call("call_hello", "say_hello", name="Ming")], usage={"Input": 50, "Output": 10}),
    turn(text="I said: " + RESULTS, usage={"Input": 80, "Output": 12}),
)
# Counting to 50, a tenth of a second a number: long enough to be stopped.
SLOW = (turn(calls=[call("call_count", "count", n=50, delay_ms=100)]), turn(text="never reached"))


class Scenario:
    """Mixed into a unittest.TestCase with make, the client's constructor."""

    make: Callable[..., Any]

    @classmethod
    def setUpClass(cls) -> None:
        require_server()

    def setUp(self) -> None:
        self.c = self.make(TARGET, token=TOKEN or None)
        self.addCleanup(self.c.close)

    def agent(self, *steps: Any, tools: Sequence[str] = (), **fields: Any) -> Any:
        """A new agent whose model answers with steps (harness.plan), deleted
        when the test ends."""
        a = self.c.create_agent(config=config(self, *steps, **fields), tools=list(tools) or None)
        self.addCleanup(self._forget, a)
        return a

    @staticmethod
    def _forget(agent: Any) -> None:
        try:
            agent.delete()
        except AgentcoreError:
            pass


class Recorder:
    """Callbacks that record what they got, by callback name."""

    def __init__(self, **extra: Any) -> None:
        self.got: List[tuple] = []
        names = [f.name for f in Callbacks.__dataclass_fields__.values() if f.name != "on_permission"]
        fns = {n: self._record(n) for n in names}
        fns.update(extra)
        self.callbacks = Callbacks(**fns)

    def _record(self, name: str) -> Callable[[Any], None]:
        return lambda arg: self.got.append((name, arg))

    def of(self, name: str) -> List[Any]:
        return [arg for n, arg in self.got if n == name]

    def names(self) -> List[str]:
        return [n for n, _ in self.got if n != "on_event"]

    def events(self) -> List[v1.Event]:
        return self.of("on_event")
