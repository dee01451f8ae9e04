"""Connections that break under a run: detach and attach again after the
last seq seen, or reconnect by itself; with the sync client and with the
asyncio client. The connection goes through a proxy the test cuts."""

from __future__ import annotations

import threading
import time
import unittest
from typing import Any, List

import grpc

from agentcore.client import AgentcoreError, Callbacks, Client, allow

from harness import RESULTS, TARGET, TIMEOUT, TOKEN, AsyncAsSync, Proxy, call, config, turn
from scenario import Scenario

# Twenty words, 30 ms apart: the connection is cut after the fifth.
WORDS = [f"w{i} " for i in range(20)]
CUT_AT = 5


class ReconnectScenarios(Scenario):
    def setUp(self) -> None:
        super().setUp()
        self.proxy = Proxy(TARGET)
        self.addCleanup(self.proxy.close)
        self.far = self.make(self.proxy.address, token=TOKEN or None)  # the client whose connection breaks
        self.addCleanup(self.far.close)

    def agent_far(self, *steps: Any) -> Any:
        a = self.far.create_agent(config=config(self, *steps), timeout=TIMEOUT)
        self.addCleanup(self._forget, self.c.agent(a.id))
        return a

    def cutting_text(self, texts: List[str]) -> Callbacks:
        """Callbacks that keep the text and cut the connection at the CUT_AT-th piece."""
        def on_text(t: str) -> None:
            texts.append(t)
            if len(texts) == CUT_AT:
                self.proxy.cut()

        return Callbacks(on_text=on_text)

    def test_detach_then_attach_after_the_last_seq_seen(self) -> None:
        a = self.agent_far(turn(chunks=WORDS, chunk_delay_ms=30))
        texts: List[str] = []
        with self.assertRaises(AgentcoreError) as cm:
            a.send("talk", self.cutting_text(texts), detach=True, timeout=TIMEOUT)
        e = cm.exception
        self.assertEqual((e.code, e.reason), (grpc.StatusCode.UNAVAILABLE, ""), e)
        self.assertTrue(e.run_id)
        self.assertGreaterEqual(len(texts), CUT_AT)
        self.assertLess(len(texts), len(WORDS), "the run should still be going when the connection broke")

        # The run went on without its client; from another connection, the
        # events after the last one seen, each once.
        rest: List[str] = []
        res = self.c.attach(e.run_id, e.last_seq, Callbacks(on_text=rest.append), timeout=TIMEOUT)
        self.assertEqual("".join(texts + rest), "".join(WORDS))
        self.assertEqual(res.text, "".join(WORDS))

    def test_reconnect_goes_on_from_the_last_seq_seen(self) -> None:
        a = self.agent_far(turn(chunks=WORDS, chunk_delay_ms=30))
        texts: List[str] = []
        seqs: List[int] = []
        cb = self.cutting_text(texts)
        cb.on_event = lambda e: seqs.append(e.seq)
        res = a.send("talk", cb, reconnect=True, timeout=TIMEOUT)
        self.assertEqual(res.text, "".join(WORDS))
        self.assertEqual("".join(texts), "".join(WORDS))
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)))

    def test_reconnect_delivers_a_permission_answered_after_the_break(self) -> None:
        a = self.agent_far(turn(calls=[call("call_hello", "say_hello", name="Ming")]), turn(text="I said: " + RESULTS))
        answered = threading.Event()

        def decide(req: Any) -> object:
            self.proxy.cut()
            time.sleep(0.3)  # the answer comes while the client reconnects
            answered.set()
            return allow()

        res = a.send("Say hello to Ming", Callbacks(on_permission=decide), reconnect=True, timeout=TIMEOUT)
        self.assertTrue(answered.is_set())
        self.assertEqual(res.text, "I said: Hello, Ming!")


class Sync(ReconnectScenarios, unittest.TestCase):
    make = staticmethod(Client)


class Asyncio(ReconnectScenarios, unittest.TestCase):
    make = staticmethod(AsyncAsSync)
