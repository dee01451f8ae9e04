"""Errors decoded from the server's statuses: code, reason, kind and details;
with the sync client and with the asyncio client."""

from __future__ import annotations

import threading
import unittest

import grpc

from agentcore import v1
from agentcore.client import AgentcoreError, Callbacks, Client, Kind, Reason, allow

from harness import TARGET, TIMEOUT, TOKEN, AsyncAsSync, config, turn
from scenario import SLOW, Scenario


class ErrorScenarios(Scenario):
    def check(self, e: AgentcoreError, code: grpc.StatusCode, reason: str, kind: str = "") -> None:
        self.assertIsInstance(e, AgentcoreError)
        self.assertEqual((e.code, e.reason, e.kind), (code, reason, kind), repr(e))
        self.assertTrue(str(e).startswith(f"agentcore: {code.name} ({reason}): "), str(e))

    def test_agents_not_found_and_existing(self) -> None:
        with self.assertRaises(AgentcoreError) as cm:
            self.c.agent("py-no-such-agent").get()
        self.check(cm.exception, grpc.StatusCode.NOT_FOUND, Reason.AGENT_NOT_FOUND)
        a = self.agent(turn(text="hi"))
        with self.assertRaises(AgentcoreError) as cm:
            self.c.create_agent(a.id)
        self.check(cm.exception, grpc.StatusCode.ALREADY_EXISTS, Reason.AGENT_EXISTS)

    def test_invalid_arguments_name_their_fields(self) -> None:
        with self.assertRaises(AgentcoreError) as cm:
            self.c.create_agent(config=v1.AgentConfig(compact_threshold=2))
        e = cm.exception
        self.check(e, grpc.StatusCode.INVALID_ARGUMENT, Reason.INVALID_ARGUMENT)
        self.assertEqual([f.field for f in e.fields], ["agent.config.compact_threshold"])
        self.assertIn("agent.config.compact_threshold", str(e))

    def test_a_busy_agent_rejects_a_send(self) -> None:
        a = self.agent(*SLOW)
        counting = threading.Event()
        errors = []

        def first() -> None:
            try:
                a.send("Count to 50.", Callbacks(on_tool_output=lambda e: counting.set()), timeout=TIMEOUT)
            except AgentcoreError as e:
                errors.append(e)
            finally:
                counting.set()

        t = threading.Thread(target=first)
        t.start()
        counting.wait(TIMEOUT)
        try:
            with self.assertRaises(AgentcoreError) as cm:
                a.send("again", busy="reject", timeout=TIMEOUT)
            self.check(cm.exception, grpc.StatusCode.ABORTED, Reason.AGENT_BUSY)
        finally:
            a.stop()
            t.join()
        self.assertEqual([e.reason for e in errors], [Reason.ABORTED])

    def test_model_errors_have_their_kind(self) -> None:
        a = self.agent(turn(status=401))
        with self.assertRaises(AgentcoreError) as cm:
            a.send("hi", timeout=TIMEOUT)
        e = cm.exception
        self.check(e, grpc.StatusCode.FAILED_PRECONDITION, Reason.AUTH, Kind.AUTH)
        self.assertEqual((e.status, e.retryable), (401, False))
        self.assertTrue(e.run_id)
        self.assertEqual(self.c.get_run(e.run_id).error.reason, Reason.AUTH)

        cfg = config(self, turn(status=429))
        cfg.retry_max_elapsed.SetInParent()  # zero: no retries
        limited = self.c.create_agent(config=cfg)
        self.addCleanup(self._forget, limited)
        with self.assertRaises(AgentcoreError) as cm:
            limited.send("hi", timeout=TIMEOUT)
        e = cm.exception
        self.check(e, grpc.StatusCode.RESOURCE_EXHAUSTED, Reason.LIMIT, Kind.LIMIT)
        self.assertEqual((e.status, e.retryable, e.metadata.get("kind")), (429, True, "limit"))

    def test_runs_permissions_and_tools_not_found(self) -> None:
        with self.assertRaises(AgentcoreError) as cm:
            self.c.get_run("py-no-such-run")
        self.check(cm.exception, grpc.StatusCode.NOT_FOUND, Reason.RUN_NOT_FOUND)
        with self.assertRaises(AgentcoreError) as cm:
            self.c.attach("py-no-such-run", timeout=TIMEOUT)
        self.check(cm.exception, grpc.StatusCode.NOT_FOUND, Reason.RUN_NOT_FOUND)
        res = self.agent(turn(text="hi")).send("hi", timeout=TIMEOUT)
        with self.assertRaises(AgentcoreError) as cm:
            self.c.respond_permission(res.run_id, "no-such-call", allow())
        self.check(cm.exception, grpc.StatusCode.NOT_FOUND, Reason.PERMISSION_NOT_FOUND)
        with self.assertRaises(AgentcoreError) as cm:
            self.c.execute_tool("no_such_tool", {})
        self.check(cm.exception, grpc.StatusCode.NOT_FOUND, Reason.TOOL_NOT_FOUND)

    def test_a_call_without_the_token_is_unauthenticated(self) -> None:
        if not TOKEN:
            self.skipTest("the server under test wants no token")
        anonymous = self.make(TARGET)
        self.addCleanup(anonymous.close)
        with self.assertRaises(AgentcoreError) as cm:
            anonymous.list_agents()
        self.check(cm.exception, grpc.StatusCode.UNAUTHENTICATED, Reason.UNAUTHENTICATED)
        wrong = self.make(TARGET, token="not-the-token")
        self.addCleanup(wrong.close)
        with self.assertRaises(AgentcoreError) as cm:
            wrong.list_agents()
        self.check(cm.exception, grpc.StatusCode.UNAUTHENTICATED, Reason.UNAUTHENTICATED)
        self.assertNotIn("not-the-token", str(cm.exception))


class Sync(ErrorScenarios, unittest.TestCase):
    make = staticmethod(Client)


class Asyncio(ErrorScenarios, unittest.TestCase):
    make = staticmethod(AsyncAsSync)
