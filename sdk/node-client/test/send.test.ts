// Sends against the real agent-server and the scripted model: callbacks,
// permissions, the events as an iterator, retries, compaction, stopping.
import * as assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { AgentcoreError, Client, Code, Reason, allow, deny, pb } from "../src/index";
import { addr, newAgent, rejects, skip } from "./helpers";

describe("send", { skip, concurrency: true }, () => {
  const c = Client.dial(addr);
  after(() => c.close());

  test("callbacks see every step and a permission is allowed", async () => {
    const a = await newAgent(c, "hello");
    const seen: string[] = [];
    const seqs: bigint[] = [];
    const asked: pb.PermissionRequestEvent[] = [];
    let started = "";
    let deltas = "";
    const result = await a.send({
      input: "Say hello to Ming.",
      callbacks: {
        onEvent: (e) => seqs.push(e.seq),
        onStart: (runId) => (started = runId),
        onLLMStart: (e) => seen.push(`llm-start ${e.step}`),
        onText: (t) => (deltas += t),
        onLLMFinish: (e) => seen.push(`llm-finish ${e.finishReason}`),
        onPermission: async (req, ctx) => {
          asked.push(req);
          assert.equal(ctx.runId, started);
          assert.equal(ctx.signal.aborted, false);
          return allow();
        },
        onToolCall: (e) => seen.push(`call ${e.toolName} ${e.arguments}`),
        onToolResult: (e) => seen.push(`result ${e.toolName} ${e.output?.value.value} ${e.error}`),
        onStep: (e) => seen.push(`step ${e.step}`),
      },
    });
    assert.equal(result.text, "I said: Hello, Ming!");
    assert.equal(result.reason, "no-tool");
    assert.equal(result.steps, 2);
    assert.equal(result.runId, started);
    assert.deepEqual(
      asked.map((p) => `${p.toolName} ${p.arguments}`),
      ['say_hello {"name":"Ming"}'],
    );
    assert.equal(deltas, "Greeting Ming.I said: Hello, Ming!");
    assert.deepEqual(seen, [
      "llm-start 1",
      "llm-finish tool_calls",
      'call say_hello {"name":"Ming"}',
      "result say_hello Hello, Ming! false",
      "step 1",
      "llm-start 2",
      "llm-finish stop",
      "step 2",
    ]);
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => BigInt(i + 1)),
      "seqs are 1, 2, 3… in order",
    );
    await a.delete();
  });

  test("a send lowers the live output cap: one capped event says what was left out", async () => {
    const a = await newAgent(c, "chatty");
    let output = "";
    const capped: pb.ToolOutputCappedEvent[] = [];
    const order: string[] = [];
    const result = await a.send({
      input: "Print three lines.",
      config: { maxLiveOutput: 10n },
      callbacks: {
        onToolOutput: (e) => (output += e.data),
        onToolOutputCapped: (e) => {
          capped.push(e);
          order.push("capped");
        },
        onToolResult: () => order.push("result"),
      },
    });
    assert.equal(result.text, "done");
    assert.equal(output, "line 1\nlin");
    assert.equal(capped.length, 1);
    const [e] = capped;
    assert.deepEqual(
      [e?.toolCallId, e?.maxBytes, e?.keptBytes, e?.droppedBytes, e?.stopped],
      ["call_sh", 10n, 10n, 11n, false],
    );
    assert.deepEqual(order, ["capped", "result"]);
    await a.delete();
  });

  test("a denied call tells the model why, and false denies too", async () => {
    for (const [answer, why] of [
      [deny("not today"), "not today"],
      [false, ""],
    ] as const) {
      const a = await newAgent(c, "hello");
      let failed: boolean | undefined;
      const result = await a.send({
        input: "Say hello to Ming.",
        callbacks: { onPermission: () => answer, onToolResult: (e) => (failed = e.error) },
      });
      assert.equal(failed, true, "a denied call is a failed tool result");
      assert.match(result.text, /^I said: .*denied/i);
      assert.ok(result.text.includes(why), result.text);
      await a.delete();
    }
  });

  test("ask names the tools that need a decision", async () => {
    const a = await newAgent(c, "hello");
    let asked = 0;
    const result = await a.send({ input: "hi", ask: ["add"], callbacks: { onPermission: () => (asked++, false) } });
    assert.equal(asked, 0, "say_hello was not listed, so it ran without asking");
    assert.equal(result.text, "I said: Hello, Ming!");
    await a.delete();
  });

  test("the events as an async iterator, answering in the loop", async () => {
    const a = await newAgent(c, "hello");
    const run = a.stream({ input: "Say hello to Ming.", ask: true });
    const kinds: string[] = [];
    for await (const e of run) {
      kinds.push(e.kind.case ?? "");
      if (e.kind.case === "permissionRequest") await run.respond(e.kind.value.toolCallId, allow());
    }
    const result = await run.result();
    assert.equal(result.text, "I said: Hello, Ming!");
    assert.equal(run.runId, result.runId);
    assert.equal(run.lastSeq, BigInt(kinds.length));
    assert.equal(kinds[0], "runStarted");
    assert.equal(kinds.at(-1), "result");
    for (const k of ["permissionRequest", "toolCall", "toolResult", "modelDelta", "step"]) {
      assert.ok(kinds.includes(k), `no ${k} in ${kinds.join(" ")}`);
    }
    assert.throws(() => run[Symbol.asyncIterator](), /read once/);
    await a.delete();
  });

  test("a failed model request is retried", async () => {
    const a = await newAgent(c, "retry", { retryMaxDelay: { nanos: 10_000_000 } });
    const retries: pb.RetryEvent[] = [];
    const result = await a.send({ input: "hi", callbacks: { onRetry: (e) => retries.push(e) } });
    assert.equal(result.text, "fine now");
    assert.equal(retries.length, 1);
    assert.equal(retries[0]?.attempt, 1);
    assert.equal(retries[0]?.status, 503);
    await a.delete();
  });

  test("compaction, by budget and by hand", async () => {
    const auto = await newAgent(c, "compact", { maxTokens: 10n });
    const compaction: string[] = [];
    await auto.send({ input: "hello, over budget", callbacks: { onCompact: (e) => compaction.push(e.kind.case ?? "") } });
    assert.equal(compaction[0], "compactStarted");
    assert.equal(compaction.at(-1), "compactFinished");
    const manual = await newAgent(c, "compact", { maxTokens: 100000n });
    await manual.send("hello");
    const events: string[] = [];
    assert.equal(await manual.compact({ onCompact: (e) => events.push(e.kind.case ?? "") }), "Goal: none.");
    assert.ok(events.includes("compactDelta"), events.join(" "));
    await rejects(manual.compact(), Code.FailedPrecondition, Reason.NOTHING_TO_COMPACT);
    await auto.delete();
    await manual.delete();
  });

  test("a model error rejects with its kind", async () => {
    const a = await newAgent(c, "auth");
    const e = await rejects(a.send("hi"), Code.FailedPrecondition, Reason.AUTH);
    assert.equal(e.kind, "auth");
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    await a.delete();
  });

  test("stop, an abort and a busy agent", async () => {
    const a = await newAgent(c, "slow");
    let first!: () => void;
    const streaming = new Promise<void>((resolve) => (first = resolve));
    const running = a.send({ input: "talk", callbacks: { onText: () => first() } });
    const stoppedP = running.then(
      () => assert.fail("a stopped send resolved"),
      (e: unknown) => e,
    );
    await streaming;
    await rejects(a.send({ input: "again", busy: "reject" }), Code.Aborted, Reason.AGENT_BUSY);
    assert.equal(await a.stop(), true);
    const stopped = await stoppedP;
    assert.ok(stopped instanceof AgentcoreError);
    assert.equal(stopped.kind, "aborted");
    assert.equal(stopped.code, Code.Canceled);
    assert.equal(stopped.metadata["cause"], "stopped");
    assert.equal(await a.stop(), false, "nothing runs any more");

    const ac = new AbortController();
    const aborted = a.send({ input: "talk", signal: ac.signal, callbacks: { onText: () => ac.abort() } });
    const e = await aborted.then(
      () => assert.fail("an aborted send resolved"),
      (err: unknown) => err,
    );
    assert.ok(e instanceof AgentcoreError && e.kind === "aborted", String(e));
    // The client went away without detach: the server stopped the run.
    const [last] = await a.listRuns();
    assert.ok(last);
    let state = (await c.getRun(last.id)).state;
    for (let i = 0; i < 100 && state === pb.RunState.RUNNING; i++) {
      await new Promise((r) => setTimeout(r, 20));
      state = (await c.getRun(last.id)).state;
    }
    assert.equal(state, pb.RunState.STOPPED);
    await a.delete();
  });
});
