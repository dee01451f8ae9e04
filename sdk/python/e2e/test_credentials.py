"""Credentials and sockets: mutual TLS with a bearer token or a client
certificate, a unix socket, a server that cannot be reached; with the sync
client and with the asyncio client.

The TLS server is a second agent-server of TestPythonClient's, with tenants
(ts by its token, root an admin by its token, dave by its client
certificate) and no default model; AGENTCORE_TEST_AUTH_* say where it is and
name the PEM files of its CA and of the client certificates."""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from typing import Any, Callable

import grpc

from agentcore import v1
from agentcore.client import AgentcoreError, Client, Reason, output_text

from harness import TARGET, TIMEOUT, TOKEN, AsyncAsSync, Proxy
from scenario import Scenario

AUTH_ADDR = os.environ.get("AGENTCORE_TEST_AUTH_ADDR", "")


def auth(name: str) -> str:
    return os.environ.get("AGENTCORE_TEST_AUTH_" + name, "")


def pem(name: str) -> bytes:
    with open(auth(name), "rb") as f:
        return f.read()


class CredentialScenarios(Scenario):
    def dial(self, target: str, **kwargs: Any) -> Any:
        c = self.make(target, **kwargs)
        self.addCleanup(c.close)
        return c

    def fails(self, fn: Callable[[], object], code: grpc.StatusCode, reason: str) -> AgentcoreError:
        with self.assertRaises(AgentcoreError) as cm:
            fn()
        self.assertEqual((cm.exception.code, cm.exception.reason), (code, reason), repr(cm.exception))
        return cm.exception

    def test_mutual_tls_a_bearer_token_and_a_client_certificate(self) -> None:
        if not AUTH_ADDR:
            self.skipTest("AGENTCORE_TEST_AUTH_ADDR is not set")
        token = auth("TOKEN")
        anon = grpc.ssl_channel_credentials(pem("CA"), pem("ANON_KEY"), pem("ANON_CERT"))
        no_token = self.fails(self.dial(AUTH_ADDR, tls=anon).list_tools, grpc.StatusCode.UNAUTHENTICATED, Reason.UNAUTHENTICATED)
        wrong = self.fails(self.dial(AUTH_ADDR, tls=anon, token="not-the-token").list_tools,
                           grpc.StatusCode.UNAUTHENTICATED, Reason.UNAUTHENTICATED)
        self.assertNotIn("not-the-token", str(wrong))

        ts = self.dial(AUTH_ADDR, tls=anon, token=token)
        self.assertIn("say_hello", [t.name for t in ts.list_tools(timeout=TIMEOUT).tools])
        admin = self.fails(ts.reload_tools, grpc.StatusCode.PERMISSION_DENIED, Reason.ADMIN_REQUIRED)
        root = self.dial(AUTH_ADDR, tls=anon, token=auth("ADMIN_TOKEN"))
        self.assertEqual(root.reload_tools(timeout=TIMEOUT).tools, len(root.list_tools().tools))
        for e in (no_token, admin):
            self.assertNotIn(token, str(e))

        # This server has no default model.
        a = ts.create_agent(config=v1.AgentConfig(system="s"))
        self.addCleanup(self._forget, a)
        self.fails(lambda: a.send("hi", timeout=TIMEOUT), grpc.StatusCode.FAILED_PRECONDITION, Reason.NO_MODEL)

        # dave is a tenant by its certificate, and does not see ts's agents.
        dave = self.dial(AUTH_ADDR, tls=grpc.ssl_channel_credentials(pem("CA"), pem("DAVE_KEY"), pem("DAVE_CERT")))
        self.fails(dave.agent(a.id).get, grpc.StatusCode.NOT_FOUND, Reason.AGENT_NOT_FOUND)
        self.assertEqual(dave.list_agents(), [])

        # Without a client certificate, or trusting the system's roots, no
        # connection is made: UNAVAILABLE with no reason, as a network failure.
        for tls in (grpc.ssl_channel_credentials(pem("CA")), True):
            self.fails(self.dial(AUTH_ADDR, tls=tls, token=token).list_tools, grpc.StatusCode.UNAVAILABLE, "")

    def test_a_unix_socket(self) -> None:
        folder = tempfile.mkdtemp(prefix="agentcore-py-")
        self.addCleanup(shutil.rmtree, folder)
        proxy = Proxy(TARGET, os.path.join(folder, "agent.sock"))
        self.addCleanup(proxy.close)
        self.assertTrue(proxy.address.startswith("unix:/"))
        c = self.dial(proxy.address, token=TOKEN or None)
        r = c.execute_tool("say_hello", {"name": "Ada"}, timeout=TIMEOUT)
        self.assertEqual(output_text(r.output), "Hello, Ada!")

    def test_a_server_that_cannot_be_reached(self) -> None:
        self.fails(self.dial("127.0.0.1:9").list_tools, grpc.StatusCode.UNAVAILABLE, "")


class Sync(CredentialScenarios, unittest.TestCase):
    make = staticmethod(Client)


class Asyncio(CredentialScenarios, unittest.TestCase):
    make = staticmethod(AsyncAsSync)
