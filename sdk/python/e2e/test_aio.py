"""What only the asyncio client does: async for, coroutine callbacks, a task
cancelled under a send."""

from __future__ import annotations

import asyncio
import json
import unittest
from typing import Any, List

from agentcore import v1
from agentcore.client import AgentcoreError, AsyncClient, Callbacks, Kind, allow, deny

from harness import RESULTS, TARGET, TIMEOUT, TOKEN, call, config, quiet_grpc_poller, require_server, turn
from scenario import HELLO, SLOW


class AsyncioOnly(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        require_server()

    async def asyncSetUp(self) -> None:
        quiet_grpc_poller(asyncio.get_running_loop())
        self.c = AsyncClient(TARGET, token=TOKEN or None)
        self.addAsyncCleanup(self.c.close)  # after the agents' cleanups

    async def agent(self, *steps: Any) -> Any:
        a = await self.c.create_agent(config=config(self, *steps), timeout=TIMEOUT)
        self.addAsyncCleanup(a.delete)
        return a

    async def test_async_for_with_coroutine_callbacks(self) -> None:
        a = await self.agent(
            turn(calls=[call("call_hello", "say_hello", name="Ming"), call("call_add", "add", a=2, b=3)]),
            turn(text="Results: " + RESULTS),
        )
        texts: List[str] = []

        async def on_text(t: str) -> None:
            await asyncio.sleep(0)
            texts.append(t)

        async def decide(req: v1.PermissionRequestEvent) -> Any:
            await asyncio.sleep(0.05)  # events keep flowing meanwhile
            return allow() if req.tool_name == "say_hello" else deny("no sums")

        kinds = []
        async with a.send_stream("Greet and add.", Callbacks(on_text=on_text, on_permission=decide), timeout=TIMEOUT) as run:
            async for event in run:
                kinds.append(event.WhichOneof("kind"))
        self.assertEqual(kinds.count("permission_request"), 2)
        self.assertEqual((kinds[0], kinds[-1]), ("run_started", "result"))
        self.assertIn("Hello, Ming!", run.result.text)
        self.assertIn("no sums", run.result.text)
        self.assertEqual("".join(texts), run.result.text)

    async def test_a_blocking_permission_callback_runs_in_a_thread(self) -> None:
        a = await self.agent(*HELLO)
        seen = []

        def decide(req: v1.PermissionRequestEvent) -> bool:
            import time

            time.sleep(0.2)  # as input() would: the loop goes on
            seen.append(json.loads(req.arguments))
            return True

        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.get_running_loop().create_task(tick())
        try:
            res = await a.send("Say hello to Ming", Callbacks(on_permission=decide), timeout=TIMEOUT)
        finally:
            ticker.cancel()
        self.assertEqual((seen, res.text), ([{"name": "Ming"}], "I said: Hello, Ming!"))
        self.assertGreater(ticks, 5, "the event loop was blocked while the callback waited")

    async def test_cancelling_the_task_stops_the_run(self) -> None:
        a = await self.agent(*SLOW)
        counting = asyncio.Event()
        task = asyncio.get_running_loop().create_task(
            a.send("Count to 50.", Callbacks(on_tool_output=lambda e: counting.set()), timeout=TIMEOUT))
        await asyncio.wait_for(counting.wait(), TIMEOUT)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        [run] = await a.runs()
        with self.assertRaises(AgentcoreError) as cm:
            await self.c.attach(run.id, run.last_seq, timeout=TIMEOUT)  # waits for the run's end
        self.assertEqual(cm.exception.kind, Kind.ABORTED)
        self.assertEqual((await self.c.get_run(run.id)).state, v1.RUN_STATE_STOPPED)
