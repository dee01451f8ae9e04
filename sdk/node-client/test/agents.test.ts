// Agents, history, tools and credentials against the real agent-server.
import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { Client, Code, Reason, assistant, pb, text, textOf, user } from "../src/index";
import { CutProxy, addr, newAgent, rejects, script, skip } from "./helpers";

describe("agents", { skip }, () => {
  const c = Client.dial(addr);
  after(() => c.close());

  test("create, get, list, update and delete", async () => {
    const id = `ts-crud-${process.pid}-${Date.now()}`;
    const a = await c.createAgent({ id, config: { system: script("hello"), maxSteps: 5 }, tools: ["say_hello", "add"] });
    assert.equal(a.id, id);
    const got = await a.get();
    assert.equal(got.config?.system, script("hello"));
    assert.equal(got.config?.maxSteps, 5);
    assert.deepEqual(got.tools?.names, ["say_hello", "add"]);
    assert.equal(got.state, pb.AgentState.IDLE);
    assert.ok((await c.listAgents()).some((x) => x.id === id), "listAgents lacks the agent");

    const merged = await a.update({ config: { maxSteps: 7 } });
    assert.equal(merged.config?.maxSteps, 7);
    assert.equal(merged.config?.system, script("hello"), "a merge without a mask keeps the other fields");
    const masked = await a.update({ tools: ["say_hello"] }, ["tools"]);
    assert.deepEqual(masked.tools?.names, ["say_hello"]);
    assert.equal((await c.agent(id).get()).config?.maxSteps, 7);

    assert.equal(await a.delete(), false, "no run was stopped");
    const e = await rejects(a.get(), Code.NotFound, Reason.AGENT_NOT_FOUND);
    assert.match(e.message, /^agentcore: NotFound: /);
    assert.equal(e.kind, "");
  });

  test("the errors of agents carry their reasons", async () => {
    const a = await newAgent(c, "hello");
    await rejects(c.createAgent({ id: a.id }), Code.AlreadyExists, Reason.AGENT_EXISTS);
    const bad = await rejects(c.createAgent({ config: { compactThreshold: 3 } }), Code.InvalidArgument, Reason.INVALID_ARGUMENT);
    assert.deepEqual(
      bad.fields.map((f) => f.field),
      ["agent.config.compact_threshold"],
    );
    await rejects(c.agent("no-such-agent").send("hi"), Code.NotFound, Reason.AGENT_NOT_FOUND);
    await a.delete();
  });
});

describe("history", { skip }, () => {
  const c = Client.dial(addr);
  after(() => c.close());

  test("get, turns, render, set and preview", async () => {
    const a = await newAgent(c, "hello");
    await a.send("Say hello to Ming.");
    const h = await a.history();
    assert.deepEqual(
      h.map((m) => m.role),
      [pb.Role.USER, pb.Role.ASSISTANT, pb.Role.TOOL, pb.Role.ASSISTANT],
    );
    assert.equal(textOf(h[0] as pb.Message), "Say hello to Ming.");
    assert.equal(textOf(h[3] as pb.Message), "I said: Hello, Ming!");
    const call = h[1]?.parts.find((p) => p.kind.case === "toolCall");
    assert.equal(call?.kind.case === "toolCall" && call.kind.value.name, "say_hello");

    const turns = await a.turns();
    assert.deepEqual(
      turns.map((t) => t.map((m) => m.role)),
      [[pb.Role.USER], [pb.Role.ASSISTANT, pb.Role.TOOL], [pb.Role.ASSISTANT]],
    );
    const rendered = await a.render();
    const lines = rendered.split("\n");
    assert.equal(lines.length, 4, rendered);
    assert.equal(lines[0], "user: Say hello to Ming.");
    assert.match(lines[1] as string, /^assistant: .*say_hello \{"name":"Ming"\}/);

    assert.equal(await a.setHistory([user("Remember: the door code is 42."), assistant("Noted.")]), 2);
    const restored = await a.history();
    assert.deepEqual(restored.map(textOf), ["Remember: the door code is 42.", "Noted."]);
    const preview = await a.preview([text("What is the code?")]);
    assert.equal(preview.system, script("hello"));
    assert.deepEqual(preview.messages.map(textOf), ["Remember: the door code is 42.", "Noted.", "What is the code?"]);
    assert.ok(preview.tokens > 0n, `preview tokens ${preview.tokens}`);
    await rejects(a.setHistory([{ role: pb.Role.UNSPECIFIED }]), Code.InvalidArgument, Reason.INVALID_ARGUMENT);
    await a.delete();
  });
});

describe("tools", { skip }, () => {
  const c = Client.dial(addr);
  after(() => c.close());

  test("list and execute, with live output", async () => {
    const { tools } = await c.listTools();
    const hello = tools.find((t) => t.name === "say_hello");
    assert.ok(hello, "say_hello is not listed");
    assert.equal(hello.inputSchema?.["type"], "object");
    const chunks: string[] = [];
    const r = await c.executeTool("count", { n: 3, delay_ms: 1 }, { onOutput: (o) => chunks.push(o.data) });
    assert.equal(r.error, false);
    assert.deepEqual(r.output?.value, { case: "text", value: "counted to 3" });
    assert.equal(chunks.join(""), "counted to 1\ncounted to 2\ncounted to 3\n");
    const failed = await c.executeTool("count", { n: 0 });
    assert.equal(failed.error, true, "a tool's failure is a result, not an exception");
    await rejects(c.executeTool("no_such_tool"), Code.NotFound, Reason.TOOL_NOT_FOUND);
  });
});

describe("credentials and sockets", { skip }, () => {
  const authAddr = process.env["AGENTCORE_TEST_AUTH_ADDR"] ?? "";
  const env = (name: string) => process.env[`AGENTCORE_TEST_${name}`] ?? "";
  const pem = (name: string) => readFileSync(env(name));

  test("mutual TLS, a bearer token and a client certificate", { skip: authAddr === "" && "AGENTCORE_TEST_AUTH_ADDR is not set" }, async () => {
    const token = env("TOKEN");
    const anon = { ca: pem("CA"), cert: pem("ANON_CERT"), key: pem("ANON_KEY") };
    const dial = (o: Parameters<typeof Client.dial>[1]) => Client.dial(authAddr, o);
    const closed: Client[] = [];
    const use = (c: Client) => (closed.push(c), c);
    try {
      const noToken = await rejects(use(dial({ tls: anon })).listTools(), Code.Unauthenticated, Reason.UNAUTHENTICATED);
      const w = await rejects(use(dial({ tls: anon, token: "not-the-token" })).listTools(), Code.Unauthenticated, Reason.UNAUTHENTICATED);
      assert.ok(!w.message.includes("not-the-token"), `the token is echoed back: ${w.message}`);
      const ts = use(dial({ tls: anon, token }));
      assert.ok((await ts.listTools()).tools.length > 0);
      const admin = await rejects(ts.reloadTools(), Code.PermissionDenied, Reason.ADMIN_REQUIRED);
      const root = use(dial({ tls: anon, token: env("ADMIN_TOKEN") }));
      const reloaded = await root.reloadTools();
      assert.equal(reloaded.tools, (await root.listTools()).tools.length, "an admin's reload finds the tools again");
      for (const err of [noToken, admin]) assert.ok(!err.message.includes(token), `the token is echoed back: ${err.message}`);
      // This server has no default model.
      const a = await ts.createAgent({ config: { system: "s" } });
      await rejects(a.send("hi"), Code.FailedPrecondition, Reason.NO_MODEL);

      // dave is a tenant by its certificate, and does not see ts's agents.
      const dave = use(dial({ tls: { ca: pem("CA"), cert: pem("DAVE_CERT"), key: pem("DAVE_KEY") } }));
      await rejects(dave.agent(a.id).get(), Code.NotFound, Reason.AGENT_NOT_FOUND);
      assert.equal((await dave.listAgents()).length, 0);
      await a.delete();

      // Without a client certificate, or trusting another CA, no connection is made.
      for (const tls of [{ ca: pem("CA") }, true as const]) {
        const e = await rejects(use(dial({ tls, token })).listTools(), Code.Unavailable, "");
        assert.equal(e.connectionLost, true);
      }
    } finally {
      for (const c of closed) c.close();
    }
  });

  test("a unix socket", async () => {
    const sock = path.join(os.tmpdir(), `agentcore-ts-${process.pid}.sock`);
    const proxy = await CutProxy.start(addr, sock);
    const c = Client.dial(`unix:${sock}`);
    try {
      const r = await c.executeTool("say_hello", { name: "Ada" });
      assert.deepEqual(r.output?.value, { case: "text", value: "Hello, Ada!" });
    } finally {
      c.close();
      await proxy.close();
    }
  });

  test("a server that cannot be reached", async () => {
    const c = Client.dial("127.0.0.1:9");
    const e = await rejects(c.listTools(), Code.Unavailable, "");
    assert.equal(e.connectionLost, true);
    c.close();
  });
});
