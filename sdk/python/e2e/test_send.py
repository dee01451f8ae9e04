"""Sends: the callbacks, permissions, retries, compaction, stopping; with the
sync client and with the asyncio client."""

from __future__ import annotations

import json
import threading
import unittest
from typing import Any

from agentcore import v1
from agentcore.client import AgentcoreError, Callbacks, Client, Kind, Reason, allow, deny, output_text

from harness import RESULTS, TIMEOUT, AsyncAsSync, call, turn
from scenario import HELLO, SLOW, Recorder, Scenario

class SendScenarios(Scenario):
    def test_send_gives_every_callback_its_events(self) -> None:
        a = self.agent(
            turn(chunks=["Let me ", "count."], calls=[call("call_count", "count", n=3, delay_ms=10)]),
            turn(chunks=["Done: ", RESULTS]),
        )
        rec = Recorder()
        res = a.send("Count to 3.", rec.callbacks, timeout=TIMEOUT)

        self.assertEqual((res.text, res.steps, res.reason, res.reason_name), ("Done: counted to 3", 2, v1.END_REASON_NO_TOOL, "no-tool"))
        self.assertTrue(res.run_id)
        self.assertEqual(rec.of("on_start"), [res.run_id])
        self.assertEqual("".join(rec.of("on_text")), "Let me count.Done: counted to 3")
        self.assertEqual([r.step for r in rec.of("on_model_request")], [1, 2])
        self.assertEqual([r.text for r in rec.of("on_model_response")], ["Let me count.", "Done: counted to 3"])
        self.assertEqual([(c.tool_name, json.loads(c.arguments)) for c in rec.of("on_tool_call")], [("count", {"n": 3, "delay_ms": 10})])
        self.assertEqual("".join(o.data for o in rec.of("on_tool_output")), "counted to 1\ncounted to 2\ncounted to 3\n")
        [result] = rec.of("on_tool_result")
        self.assertEqual((result.tool_name, output_text(result.output), result.error), ("count", "counted to 3", False))
        self.assertEqual([s.step for s in rec.of("on_step")], [1, 2])
        names = rec.names()
        self.assertEqual(names[0], "on_start")
        self.assertLess(names.index("on_tool_call"), names.index("on_tool_output"))
        self.assertLess(names.index("on_tool_output"), names.index("on_tool_result"))
        seqs = [e.seq for e in rec.events()]
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)))
        self.assertEqual(rec.events()[-1].WhichOneof("kind"), "result")

    def test_a_send_lowers_the_live_output_cap(self) -> None:
        a = self.agent(
            turn(calls=[call("call_count", "count", n=3, delay_ms=10)]),
            turn(text="Done: " + RESULTS),
        )
        rec = Recorder()
        res = a.send("Count to 3.", rec.callbacks, config=v1.AgentConfig(max_live_output=20), timeout=TIMEOUT)

        self.assertEqual(res.text, "Done: counted to 3")
        self.assertEqual("".join(o.data for o in rec.of("on_tool_output")), "counted to 1\ncounted")
        [capped] = rec.of("on_tool_output_capped")
        self.assertEqual((capped.tool_call_id, capped.max_bytes, capped.kept_bytes, capped.dropped_bytes, capped.dropped_chunks, capped.stopped),
                         ("call_count", 20, 20, 19, 2, False))
        [result] = rec.of("on_tool_result")
        self.assertEqual(output_text(result.output), "counted to 3", "the result is the tool's, whatever the live output cap")
        names = rec.names()
        self.assertLess(names.index("on_tool_output_capped"), names.index("on_tool_result"))

    def test_send_stream_yields_the_events_the_callbacks_get(self) -> None:
        a = self.agent(*HELLO)
        rec = Recorder()
        with a.send_stream("Say hello to Ming", rec.callbacks, timeout=TIMEOUT) as run:
            seen = list(run)
        self.assertEqual(seen, rec.events())
        self.assertEqual(run.result.text, "I said: Hello, Ming!")
        self.assertEqual((run.run_id, run.last_seq), (run.result.run_id, seen[-1].seq))
        self.assertGreater(run.result.usage.output_tokens, 0)

    def test_permission_requests_are_answered_by_the_callback(self) -> None:
        a = self.agent(
            turn(calls=[call("call_hello", "say_hello", name="Ming"), call("call_add", "add", a=2, b=3)]),
            turn(text="Results: " + RESULTS),
        )
        asked = []

        def decide(req: v1.PermissionRequestEvent) -> object:
            asked.append((req.tool_name, json.loads(req.arguments)))
            return allow() if req.tool_name == "say_hello" else deny("no sums today")

        rec = Recorder(on_permission=decide)
        res = a.send("Greet Ming and add 2 and 3.", rec.callbacks, timeout=TIMEOUT)
        self.assertEqual(sorted(asked), [("add", {"a": 2, "b": 3}), ("say_hello", {"name": "Ming"})])
        results = {r.tool_name: r for r in rec.of("on_tool_result")}
        self.assertEqual((output_text(results["say_hello"].output), results["say_hello"].error), ("Hello, Ming!", False))
        self.assertTrue(results["add"].error)
        self.assertIn("no sums today", output_text(results["add"].output))
        self.assertIn("Hello, Ming!", res.text)
        self.assertIn("no sums today", res.text)

    def test_ask_tools_asks_for_those_tools_only_and_a_bool_answers(self) -> None:
        a = self.agent(
            turn(calls=[call("call_hello", "say_hello", name="Ming"), call("call_add", "add", a=2, b=3)]),
            turn(text="Results: " + RESULTS),
        )
        asked = []
        res = a.send("Greet and add.", Callbacks(on_permission=lambda req: asked.append(req.tool_name) or True),
                     ask_tools=["add"], timeout=TIMEOUT)
        self.assertEqual(asked, ["add"])
        self.assertIn("Hello, Ming!", res.text)
        self.assertIn("5", res.text)

    def test_a_permission_is_answered_in_the_loop(self) -> None:
        a = self.agent(turn(calls=[call("call_hello", "say_hello", name="Ming")]), turn(text="Then: " + RESULTS))
        with a.send_stream("Say hello to Ming", ask=True, timeout=TIMEOUT) as run:
            for event in run:
                if event.HasField("permission_request"):
                    run.respond(event.permission_request.tool_call_id, deny("not now"))
        self.assertIn("not now", run.result.text)

    def test_retries_reach_on_retry(self) -> None:
        a = self.agent([turn(status=503), turn(text="fine now")])
        retries = []
        res = a.send("hi", Callbacks(on_retry=retries.append), timeout=TIMEOUT)
        self.assertEqual(res.text, "fine now")
        self.assertEqual([(r.attempt, r.kind, r.status) for r in retries], [(1, v1.ERROR_KIND_SERVER, 503)])

    def test_compaction(self) -> None:
        a = self.agent(turn(text="The first answer."))
        a.send("hello", timeout=TIMEOUT)
        events = []
        summary = a.compact(events.append, timeout=TIMEOUT)
        self.assertEqual(summary, "Summary of the talk.")
        kinds = [e.WhichOneof("kind") for e in events]
        self.assertEqual((kinds[0], kinds[-1]), ("compact_started", "compact_finished"))
        self.assertTrue(events[0].compact_started.manual)
        last = a.history()[-1]
        self.assertTrue(last.compact)
        self.assertEqual(last.parts[0].text, "Summary of the talk.")
        # A send over the context budget compacts first: on_compact gets it.
        compacts = []
        res = a.send("and again " * 200, Callbacks(on_compact=compacts.append), config=v1.AgentConfig(max_tokens=300), timeout=TIMEOUT)
        self.assertEqual(res.text, "The first answer.")
        self.assertIn("compact_finished", [e.WhichOneof("kind") for e in compacts])

    def test_stop_ends_the_send_as_aborted(self) -> None:
        a = self.agent(*SLOW)
        counting, stopped = threading.Event(), []

        def stop() -> None:
            counting.wait(TIMEOUT)
            stopped.append(a.stop())

        t = threading.Thread(target=stop)
        t.start()
        try:
            with self.assertRaises(AgentcoreError) as cm:
                a.send("Count to 50.", Callbacks(on_tool_output=lambda e: counting.set()), timeout=TIMEOUT)
        finally:
            counting.set()
            t.join()
        e = cm.exception
        self.assertEqual((e.reason, e.kind), (Reason.ABORTED, Kind.ABORTED), e)
        self.assertTrue(e.run_id)
        self.assertEqual(stopped, [True])
        self.assertEqual(a.runs()[0].state, v1.RUN_STATE_STOPPED)

    def test_closing_the_stream_stops_the_run(self) -> None:
        a = self.agent(*SLOW)
        with a.send_stream("Count to 50.", timeout=TIMEOUT) as run:
            for event in run:
                if event.HasField("tool_output"):
                    break
        self.assertStopped(run)

    def assertStopped(self, run: Any) -> None:
        """The run stops: attached to, it ends as stopped."""
        with self.assertRaises(AgentcoreError) as cm:
            self.c.attach(run.run_id, run.last_seq, timeout=TIMEOUT)  # the rest of the run: its end
        self.assertEqual(cm.exception.kind, Kind.ABORTED)
        self.assertEqual(self.c.get_run(run.run_id).state, v1.RUN_STATE_STOPPED)

    def test_run_stop_and_close_from_another_thread(self) -> None:
        a = self.agent(*SLOW)
        run = a.send_stream("Count to 50.", timeout=TIMEOUT)
        counting = threading.Event()
        t = threading.Thread(target=lambda: counting.wait(TIMEOUT) and run.close())
        t.start()
        with self.assertRaises(AgentcoreError) as cm:
            for event in run:
                if event.HasField("tool_output"):
                    counting.set()
        t.join()
        self.assertEqual((cm.exception.reason, cm.exception.kind), (Reason.ABORTED, Kind.ABORTED))
        self.assertStopped(run)

        a = self.agent(*SLOW)
        with a.send_stream("Count to 50.", timeout=TIMEOUT) as run:
            with self.assertRaises(AgentcoreError) as cm:
                for event in run:
                    if event.HasField("tool_output") and event.tool_output.data == "counted to 1\n":
                        run.stop()
        self.assertEqual(cm.exception.kind, Kind.ABORTED)


class Sync(SendScenarios, unittest.TestCase):
    make = staticmethod(Client)


class Asyncio(SendScenarios, unittest.TestCase):
    make = staticmethod(AsyncAsSync)
