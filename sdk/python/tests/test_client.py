"""Unit tests of agentcore.client: the error contract against the protos,
decoding error details, the requests a send makes, dispatching events. The
calls themselves are tested against a real agent-server by sdk/python/e2e
(TestPythonClient in tests/python_client_test.go)."""

import dataclasses
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import grpc  # noqa: E402
from google.protobuf import any_pb2  # noqa: E402

from agentcore import v1  # noqa: E402
from agentcore.client import (  # noqa: E402
    AgentcoreError, Callbacks, Decision, Kind, Reason, allow, deny, output_text, reason_name,
)
from agentcore.client import _status_pb2  # noqa: E402
from agentcore.client._common import (  # noqa: E402
    SendOptions, calls, decision_of, elicitation_answer, elicited, result_of, start_request, to_struct,
)
from agentcore.client._errors import from_status, transient  # noqa: E402
from agentcore.client._run import _check_sync  # noqa: E402
from agentcore.client._runstate import RunState  # noqa: E402
from agentcore.v1 import agent_service_pb2, agent_service_pb2_grpc  # noqa: E402


def packed(msg, name):
    a = any_pb2.Any(type_url="type.googleapis.com/google.rpc." + name, value=msg.SerializeToString())
    return a


def trailers(*details, code=0, message=""):
    st = _status_pb2.Status(code=code, message=message, details=list(details))
    return (("content-type", "application/grpc"), ("grpc-status-details-bin", st.SerializeToString()))


class TheErrorContract(unittest.TestCase):
    def test_every_reason_of_the_proto_has_its_constant(self):
        prefix = "ERROR_REASON_"
        want = {n[len(prefix):] for n in v1.ErrorReason.keys() if n != prefix + "UNSPECIFIED"}
        self.assertEqual(set(Reason.ALL), want)
        for name in want:
            self.assertEqual(getattr(Reason, name), name)

    def test_every_kind_of_the_proto_has_its_constant(self):
        prefix = "ERROR_KIND_"
        want = {n[len(prefix):] for n in v1.ErrorKind.keys() if n != prefix + "UNSPECIFIED"}
        self.assertEqual({k.upper() for k in Kind.ALL}, want)
        for name in want:
            self.assertEqual(getattr(Kind, name), name.lower())
            self.assertEqual(getattr(Reason, name), name, "a model error's reason is its kind upper-cased")


class DecodingErrors(unittest.TestCase):
    def test_error_info_bad_request_and_retry_info(self):
        info = _status_pb2.ErrorInfo(reason="LIMIT", domain="agentcore", metadata={"kind": "limit", "retryable": "true", "status": "429"})
        bad = _status_pb2.BadRequest(field_violations=[_status_pb2.BadRequest.FieldViolation(field="agent.config.model", description="empty")])
        retry = _status_pb2.RetryInfo()
        retry.retry_delay.FromMilliseconds(1500)
        e = from_status(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down",
                        trailers(packed(info, "ErrorInfo"), packed(bad, "BadRequest"), packed(retry, "RetryInfo")))
        self.assertIsInstance(e, Exception)
        self.assertEqual((e.code, e.reason, e.kind, e.retryable, e.status, e.retry_delay),
                         (grpc.StatusCode.RESOURCE_EXHAUSTED, Reason.LIMIT, Kind.LIMIT, True, 429, 1.5))
        self.assertEqual([(f.field, f.description) for f in e.fields], [("agent.config.model", "empty")])
        self.assertEqual(e.metadata["kind"], "limit")
        self.assertEqual(str(e), "agentcore: RESOURCE_EXHAUSTED (LIMIT): slow down\n  agent.config.model: empty")

    def test_a_reason_that_is_not_a_kind(self):
        info = _status_pb2.ErrorInfo(reason="AGENT_BUSY", domain="agentcore")
        e = from_status(grpc.StatusCode.ABORTED, "busy", trailers(packed(info, "ErrorInfo")))
        self.assertEqual((e.reason, e.kind, e.retryable, e.status), (Reason.AGENT_BUSY, "", False, 0))
        self.assertFalse(transient(e))

    def test_statuses_without_details(self):
        e = from_status(grpc.StatusCode.UNAVAILABLE, "connection reset", None)
        self.assertEqual((e.reason, e.kind), ("", ""))
        self.assertTrue(transient(e), "a broken connection is worth attaching again")
        e = from_status(grpc.StatusCode.CANCELLED, "cancelled", ())
        self.assertEqual(e.kind, Kind.ABORTED)
        self.assertEqual(str(e), "agentcore: CANCELLED: cancelled")

    def test_unknown_details_and_a_newer_reason_are_kept_or_ignored(self):
        other = any_pb2.Any(type_url="type.googleapis.com/google.rpc.DebugInfo", value=b"\x0a\x01x")
        info = _status_pb2.ErrorInfo(reason="SOME_NEW_REASON")
        e = from_status(grpc.StatusCode.FAILED_PRECONDITION, "m", trailers(other, packed(info, "ErrorInfo")))
        self.assertEqual((e.reason, e.kind), ("SOME_NEW_REASON", ""))
        self.assertNotIn(e.reason, Reason.ALL)

    def test_it_is_raised_and_caught_as_one_type(self):
        with self.assertRaises(AgentcoreError):
            raise from_status(grpc.StatusCode.NOT_FOUND, "no agent", trailers(packed(_status_pb2.ErrorInfo(reason="AGENT_NOT_FOUND"), "ErrorInfo")))


class StartingARun(unittest.TestCase):
    def start(self, asks=False, **kw):
        return start_request("a1", SendOptions(**kw), asks).start

    def test_permission_modes(self):
        cases = [
            ({}, False, v1.PERMISSION_MODE_ALLOW_ALL, []),
            ({}, True, v1.PERMISSION_MODE_ASK_ALL, []),
            ({"ask_tools": ["shell"]}, True, v1.PERMISSION_MODE_ASK_LISTED, ["shell"]),
            ({"ask_tools": ["shell"]}, False, v1.PERMISSION_MODE_ASK_LISTED, ["shell"]),
            ({"ask": True}, False, v1.PERMISSION_MODE_ASK_ALL, []),
            ({"ask": False}, True, v1.PERMISSION_MODE_ALLOW_ALL, []),
        ]
        for kw, asks, mode, tools in cases:
            with self.subTest(kw=kw, asks=asks):
                s = self.start(asks, **kw)
                self.assertEqual((s.permission_mode, list(s.ask_tools)), (mode, tools))

    def test_input_and_overrides(self):
        s = self.start(text="hi")
        self.assertEqual((s.agent_id, [p.text for p in s.input]), ("a1", ["hi"]))
        self.assertFalse(s.HasField("config") or s.HasField("history") or s.HasField("tools"))
        self.assertEqual(s.on_disconnect, v1.ON_DISCONNECT_UNSPECIFIED)
        s = self.start(parts=[v1.Part(text="a"), v1.Part(text="b")], text="ignored", history=[], tools=[],
                       config=v1.AgentConfig(model="m"), detach=True, busy="queue", resume=False)
        self.assertEqual([p.text for p in s.input], ["a", "b"])
        self.assertTrue(s.HasField("history") and s.HasField("tools"), "an empty history or tool list is still given")
        self.assertEqual((s.config.model, s.on_disconnect, s.busy_policy), ("m", v1.ON_DISCONNECT_CONTINUE, v1.BUSY_POLICY_QUEUE))
        self.assertEqual(self.start(reconnect=True).on_disconnect, v1.ON_DISCONNECT_CONTINUE)
        self.assertEqual(self.start(budget=v1.Budget(model_requests=4)).budget.model_requests, 4)
        self.assertEqual(self.start(busy=v1.BUSY_POLICY_REJECT).busy_policy, v1.BUSY_POLICY_REJECT)
        with self.assertRaises(ValueError):
            self.start(busy="sometimes")


class Events(unittest.TestCase):
    def test_callbacks_by_event(self):
        got = []
        cb = Callbacks(**{f.name: (lambda n: lambda a: got.append(n))(f.name) for f in dataclasses.fields(Callbacks)})
        events = [
            v1.Event(seq=1, run_id="r", run_started=v1.RunStartedEvent(agent_id="a")),
            v1.Event(seq=2, model_delta=v1.ModelDeltaEvent(text="hi")),
            v1.Event(seq=3, model_delta=v1.ModelDeltaEvent(reasoning="hmm")),
            v1.Event(seq=4, compact_delta=v1.CompactDeltaEvent(text="s")),
            v1.Event(seq=5, permission_request=v1.PermissionRequestEvent(tool_call_id="c")),
            v1.Event(seq=6, retry=v1.RetryEvent(attempt=1)),
            v1.Event(seq=7, tool_output=v1.ToolOutputEvent(tool_call_id="c", data="x")),
            v1.Event(seq=8, tool_output_capped=v1.ToolOutputCappedEvent(tool_call_id="c", dropped_bytes=9)),
            v1.Event(seq=9, attempt=1, run_resumed=v1.RunResumedEvent(attempt=1)),
            v1.Event(seq=10, child=v1.ChildRunEvent(run_id="c", depth=2, event=v1.Event(seq=1, run_id="c"))),
            v1.Event(seq=11, budget_exceeded=v1.BudgetExceededEvent(limit=v1.BUDGET_LIMIT_TOOL_CALLS, max=3, used=3)),
            v1.Event(seq=12, run_id="r", elicitation_request=v1.ElicitationRequestEvent(elicitation_id="c~elicit-1")),
            v1.Event(seq=13, elicitation_result=v1.ElicitationResultEvent(elicitation_id="c~elicit-1")),
        ]
        for e in events:
            for fn, arg in calls(e, cb):
                fn(arg)
        self.assertEqual(got, [
            "on_event", "on_start",
            "on_event", "on_text", "on_model_delta",
            "on_event", "on_model_delta",
            "on_event", "on_compact",
            "on_event",  # on_permission runs beside the stream, not here
            "on_event", "on_retry",
            "on_event", "on_tool_output",
            "on_event", "on_tool_output_capped",
            "on_event", "on_resumed",
            "on_event", "on_child",
            "on_event", "on_budget_exceeded",
            "on_event", "on_elicitation",
            "on_event", "on_elicitation_result",
        ])

    def test_elicitation_answers(self):
        req = elicitation_answer("r", "c~elicit-1", "accept", {"name": "Ada", "age": 36})
        self.assertEqual((req.run_id, req.elicitation_id, req.action), ("r", "c~elicit-1", v1.ELICITATION_ACTION_ACCEPT))
        self.assertEqual(dict(req.content), {"name": "Ada", "age": 36})
        for action, want in [("decline", v1.ELICITATION_ACTION_DECLINE), ("CANCEL", v1.ELICITATION_ACTION_CANCEL),
                             (v1.ELICITATION_ACTION_DECLINE, v1.ELICITATION_ACTION_DECLINE)]:
            req = elicitation_answer("r", "e", action)
            self.assertEqual(req.action, want)
            self.assertFalse(req.HasField("content"))
        for bad in ["unspecified", "maybe", ""]:
            with self.assertRaises(ValueError):
                elicitation_answer("r", "e", bad)
        resp = v1.RespondElicitationResponse()
        self.assertEqual(elicited(resp), {})
        resp.content.update({"name": "Ada", "greeting": "hello"})
        self.assertEqual(elicited(resp), {"name": "Ada", "greeting": "hello"})

    def test_reconnecting_gives_attach_the_attempt(self):
        st = RunState(None, None, v1.AttachRequest(run_id="r", after_seq=0), True, None)
        self.assertFalse(st._attach_request().HasField("attempt") and st.attempt)
        st._seen(v1.Event(seq=12, run_id="r", attempt=2, run_resumed=v1.RunResumedEvent(attempt=2)))
        req = st._attach_request()
        self.assertEqual((req.run_id, req.after_seq, req.attempt, req.HasField("attempt")), ("r", 12, 2, True))
        self.assertTrue(transient(from_status(grpc.StatusCode.UNAVAILABLE, "restarting", None)))

    def test_the_result(self):
        e = v1.Event(seq=9, run_id="r1", result=v1.RunResultEvent(text="done", steps=2, reason=v1.END_REASON_TOOL_STOP))
        e.result.output.struct_value.update({"n": 1, "tags": ["a"]})
        r = result_of(e)
        self.assertEqual((r.run_id, r.text, r.steps, r.reason_name, r.output), ("r1", "done", 2, "tool-stop", {"n": 1, "tags": ["a"]}))
        self.assertIsNone(result_of(v1.Event(seq=1)))
        self.assertIsNone(result_of(v1.Event(result=v1.RunResultEvent())).output)
        self.assertEqual(reason_name(v1.END_REASON_STEP_LIMIT), "step-limit")
        e = v1.Event(result=v1.RunResultEvent(reason=v1.END_REASON_BUDGET, run_usage=v1.RunUsage(model_requests=2),
                                              tree_usage=v1.RunUsage(model_requests=5, child_runs=2, cost=0.25)))
        r = result_of(e)
        self.assertEqual((r.reason_name, r.run_usage.model_requests, r.tree_usage.child_runs, r.tree_usage.cost), ("budget", 2, 2, 0.25))
        self.assertEqual(reason_name(v1.END_REASON_UNSPECIFIED), "")

    def test_decisions(self):
        self.assertEqual(decision_of(True), Decision(True))
        self.assertEqual(decision_of(False), Decision(False, "denied"))
        self.assertEqual(decision_of(deny("no")), Decision(False, "no"))
        self.assertEqual(decision_of(allow()), Decision(True, ""))
        with self.assertRaises(TypeError):
            decision_of("yes")

    def test_the_sync_client_refuses_coroutine_callbacks(self):
        async def cb(_):
            pass

        with self.assertRaises(TypeError):
            _check_sync(cb(None))
        self.assertEqual(_check_sync(3), 3)


class Values(unittest.TestCase):
    def test_tool_input(self):
        @dataclasses.dataclass
        class In:
            name: str
            n: int = 2

        self.assertEqual(dict(to_struct({"name": "Ada"})), {"name": "Ada"})
        self.assertEqual(dict(to_struct('{"name": "Ada"}')), {"name": "Ada"})
        self.assertEqual(dict(to_struct(In("Ada"))), {"name": "Ada", "n": 2})
        self.assertIsNone(to_struct(None))
        for bad in ("[1]", 3, [1]):
            with self.assertRaises(TypeError):
                to_struct(bad)

    def test_output_text(self):
        self.assertEqual(output_text(v1.ToolOutput(text="t")), "t")
        self.assertEqual(output_text(v1.ToolOutput(json='{"a":1}')), '{"a":1}')
        content = v1.ToolOutput(content=v1.ContentParts(parts=[v1.Part(text="a"), v1.Part(file=v1.FilePart(url="u")), v1.Part(text="b")]))
        self.assertEqual(output_text(content), "ab")
        self.assertEqual(output_text(v1.ToolOutput()), "")


class TheStub(unittest.TestCase):
    def test_every_method_of_the_service_with_its_kind(self):
        made = {}

        class Channel:
            def __getattr__(self, kind):
                def make(path, request_serializer, response_deserializer):
                    made[path] = (kind, request_serializer, response_deserializer)
                    return path
                return make

        stub = agent_service_pb2_grpc.AgentServiceStub(Channel())
        svc = agent_service_pb2.DESCRIPTOR.services_by_name["AgentService"]
        self.assertEqual(len(made), len(svc.methods))
        for m in svc.methods:
            path = f"/agentcore.v1.AgentService/{m.name}"
            kind = {(False, False): "unary_unary", (False, True): "unary_stream", (True, True): "stream_stream"}[
                (m.client_streaming, m.server_streaming)]
            self.assertEqual(getattr(stub, m.name), path)
            self.assertEqual(made[path][0], kind, m.name)
            request = getattr(v1, m.input_type.name)()  # the messages of every file of the package
            self.assertEqual(made[path][1](request), b"")
            self.assertEqual(made[path][2](b"").DESCRIPTOR, m.output_type, m.name)


if __name__ == "__main__":
    unittest.main()
