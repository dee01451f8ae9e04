"""Agents, their history, tools run directly, runs and attaching to them;
with the sync client and with the asyncio client."""

from __future__ import annotations

import re
import unittest

from agentcore import v1
from agentcore.client import AgentcoreError, Callbacks, Client, Reason, allow, output_text

from harness import RESULTS, SCRIPT_KEY, TIMEOUT, AsyncAsSync, call, turn
from scenario import HELLO, Recorder, Scenario


class AgentScenarios(Scenario):
    def unique_id(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]", "-", self.id())[-100:]

    def test_create_get_list_update_delete(self) -> None:
        a = self.c.create_agent(self.unique_id(), config=v1.AgentConfig(system="Be brief.", model="model-one"), tools=["say_hello"])
        self.addCleanup(self._forget, a)
        self.assertEqual(a.id, self.unique_id())
        got = a.get()
        self.assertEqual((got.config.system, got.config.model, list(got.tools.names)), ("Be brief.", "model-one", ["say_hello"]))
        self.assertEqual(got.state, v1.AGENT_STATE_IDLE)
        self.assertIn(a.id, [x.id for x in self.c.list_agents()])

        got = a.update(v1.AgentConfig(model="model-two", system="ignored: not in the mask"), "config.model")
        self.assertEqual((got.config.system, got.config.model), ("Be brief.", "model-two"))
        got = a.update(v1.AgentConfig(system="Be kind."))
        self.assertEqual((got.config.system, got.config.model), ("Be kind.", "model-two"))
        self.assertEqual(list(a.update(tools=["add", "say_hello"]).tools.names), ["add", "say_hello"])
        self.assertEqual(self.c.agent(a.id).get().config.system, "Be kind.")

        self.assertFalse(a.delete())
        with self.assertRaises(AgentcoreError) as cm:
            a.get()
        self.assertEqual(cm.exception.reason, Reason.AGENT_NOT_FOUND)
        self.assertNotIn(a.id, [x.id for x in self.c.list_agents()])

    def test_history_turns_render_set_and_preview(self) -> None:
        a = self.agent(*HELLO)
        a.send("Say hello to Ming", timeout=TIMEOUT)
        h = a.history()
        self.assertEqual([m.role for m in h], [v1.ROLE_USER, v1.ROLE_ASSISTANT, v1.ROLE_TOOL, v1.ROLE_ASSISTANT])
        self.assertEqual(h[0].parts[0].text, "Say hello to Ming")
        self.assertEqual(h[1].parts[-1].tool_call.name, "say_hello")
        self.assertEqual(output_text(h[2].parts[0].tool_result.output), "Hello, Ming!")

        turns = a.turns()
        self.assertEqual([m for t in turns for m in t], h)
        self.assertIn([h[1], h[2]], turns)  # the call and its result make one turn

        text = a.render()
        self.assertIn("Say hello to Ming", text)
        self.assertIn("Hello, Ming!", text)
        self.assertIn("I said: Hello, Ming!", text)

        self.assertEqual(a.set_history(h[:1]), 1)
        self.assertEqual(a.history(), h[:1])

        p = a.preview("And now?")
        self.assertEqual([m.parts[0].text for m in p.messages], ["Say hello to Ming", "And now?"])
        self.assertTrue(p.system.startswith(SCRIPT_KEY + "\n"))
        self.assertGreater(p.tokens, 0)

    def test_tools_run_directly(self) -> None:
        names = [t.name for t in self.c.list_tools().tools]
        self.assertIn("say_hello", names)
        self.assertIn("count", names)
        r = self.c.execute_tool("say_hello", {"name": "Ada"}, timeout=TIMEOUT)
        self.assertEqual((output_text(r.output), r.error, r.stop), ("Hello, Ada!", False, False))
        chunks = []
        r = self.c.execute_tool("count", '{"n": 3, "delay_ms": 10}', on_output=chunks.append, timeout=TIMEOUT)
        self.assertEqual(output_text(r.output), "counted to 3")
        self.assertEqual("".join(c.data for c in chunks), "counted to 1\ncounted to 2\ncounted to 3\n")
        self.assertGreater(self.c.reload_tools(timeout=TIMEOUT).tools, 0)

    def test_runs_and_attaching_from_a_seq(self) -> None:
        a = self.agent(*HELLO)
        rec = Recorder()
        res = a.send("Say hello to Ming", rec.callbacks, timeout=TIMEOUT)
        events = rec.events()

        [run] = a.runs()
        self.assertEqual((run.id, run.agent_id, run.state, run.result.text), (res.run_id, a.id, v1.RUN_STATE_SUCCEEDED, res.text))
        got = self.c.get_run(res.run_id)
        self.assertEqual(got.last_seq, events[-1].seq)
        self.assertEqual([r.id for r in self.c.runs(a.id, v1.RUN_STATE_SUCCEEDED)], [res.run_id])
        self.assertEqual(len(self.c.runs(max=1)), 1)
        self.assertEqual(self.c.runs(a.id, v1.RUN_STATE_FAILED), [])

        later = Recorder()
        again = self.c.attach(res.run_id, 3, later.callbacks, timeout=TIMEOUT)
        self.assertEqual(later.events(), [e for e in events if e.seq > 3])
        self.assertEqual(again, res)
        self.assertEqual(a.attach(timeout=TIMEOUT), res)  # the agent's latest run, from the start
        with self.c.attach_stream(res.run_id, events[-3].seq, timeout=TIMEOUT) as run:
            self.assertEqual(list(run), events[-2:])
        with a.attach_stream(events[-2].seq, timeout=TIMEOUT) as run:
            self.assertEqual(list(run), events[-1:])

    def test_a_permission_answered_after_the_stream_is_gone(self) -> None:
        a = self.agent(turn(calls=[call("call_hello", "say_hello", name="Ming")]), turn(text="I said: " + RESULTS))
        with a.send_stream("Say hello to Ming", ask=True, detach=True, timeout=TIMEOUT) as run:
            for event in run:
                if event.HasField("permission_request"):
                    break
        # The client went away; the detached run waits for its answer.
        pending = self.c.get_run(run.run_id).pending_permissions
        self.assertEqual([(p.tool_call_id, p.tool_name) for p in pending], [("call_hello", "say_hello")])
        self.c.respond_permission(run.run_id, "call_hello", allow(), timeout=TIMEOUT)
        res = self.c.attach(run.run_id, run.last_seq, timeout=TIMEOUT)
        self.assertEqual(res.text, "I said: Hello, Ming!")
        with self.assertRaises(AgentcoreError) as cm:
            self.c.respond_permission(run.run_id, "call_hello", allow())
        self.assertIn(cm.exception.reason, (Reason.PERMISSION_ANSWERED, Reason.PERMISSION_NOT_FOUND))

    def test_attach_answers_permissions_with_respond_permission(self) -> None:
        a = self.agent(turn(calls=[call("call_hello", "say_hello", name="Ming")]), turn(text="I said: " + RESULTS))
        with a.send_stream("Say hello to Ming", ask=True, detach=True, timeout=TIMEOUT) as run:
            for event in run:
                if event.HasField("run_started"):
                    break
        asked = []
        res = a.attach(0, Callbacks(on_permission=lambda req: asked.append(req.tool_name) or allow()), timeout=TIMEOUT)
        self.assertEqual((asked, res.text), (["say_hello"], "I said: Hello, Ming!"))


class Sync(AgentScenarios, unittest.TestCase):
    make = staticmethod(Client)


class Asyncio(AgentScenarios, unittest.TestCase):
    make = staticmethod(AsyncAsSync)
