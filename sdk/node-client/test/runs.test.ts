// Runs that outlive their stream: detaching, attaching from a seq,
// answering a permission from another call, a connection cut mid-run.
import * as assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { AgentcoreError, Client, Code, Reason, allow, pb } from "../src/index";
import { CutProxy, addr, newAgent, rejects, skip, slowText } from "./helpers";

/** settled waits for p and returns what it rejected with (failing if it resolved). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => assert.fail("resolved"),
    (e: unknown) => e,
  );
}

describe("runs", { skip, concurrency: true }, () => {
  const c = Client.dial(addr);
  after(() => c.close());

  test("detach, then attach from the last seq seen", async () => {
    const a = await newAgent(c, "slow");
    const ac = new AbortController();
    let before = "";
    const run = a.stream({
      input: "talk",
      detach: true,
      signal: ac.signal,
      callbacks: { onText: (t) => ((before += t), before.length > 8 && ac.abort()) },
    });
    const e = await rejection(run.result());
    assert.ok(e instanceof AgentcoreError && e.kind === "aborted", String(e));
    assert.ok(run.runId !== "" && run.lastSeq > 0n);
    const info = await c.getRun(run.runId);
    assert.equal(info.agentId, a.id);
    assert.equal(info.onDisconnect, pb.OnDisconnect.CONTINUE);

    let rest = "";
    const seqs: bigint[] = [];
    const result = await c.attach(run.runId, {
      afterSeq: run.lastSeq,
      callbacks: { onText: (t) => (rest += t), onEvent: (ev) => seqs.push(ev.seq) },
    });
    assert.equal(before + rest, slowText, "every delta once, none lost");
    assert.equal(seqs[0], run.lastSeq + 1n);
    assert.equal(result.text, slowText);
    assert.equal(result.runId, run.runId);

    // A finished run replays from the start, through the agent too.
    let replay = "";
    const again = await a.attach({ callbacks: { onText: (t) => (replay += t) } });
    assert.equal(replay, slowText);
    assert.equal(again.runId, run.runId);
    await a.delete();
  });

  test("a permission answered after the client left", async () => {
    const a = await newAgent(c, "hello");
    const ac = new AbortController();
    const run = a.stream({ input: "Say hello to Ming.", ask: true, detach: true, signal: ac.signal });
    let callId = "";
    await rejection(
      (async () => {
        for await (const e of run) {
          if (e.kind.case === "permissionRequest") {
            callId = e.kind.value.toolCallId;
            ac.abort();
          }
        }
      })(),
    );
    assert.notEqual(callId, "");
    const waiting = await c.getRun(run.runId);
    assert.equal(waiting.state, pb.RunState.RUNNING);
    assert.deepEqual(
      waiting.pendingPermissions.map((p) => p.toolName),
      ["say_hello"],
    );
    await rejects(c.respondPermission(run.runId, "no-such-call", allow()), Code.NotFound, Reason.PERMISSION_NOT_FOUND);
    await c.respondPermission(run.runId, callId, allow());
    await rejects(c.respondPermission(run.runId, callId, false), Code.FailedPrecondition, Reason.PERMISSION_ANSWERED);
    const result = await c.attach(run.runId, { afterSeq: run.lastSeq });
    assert.equal(result.text, "I said: Hello, Ming!");
    await a.delete();
  });

  test("follow a run's events, stop it on its stream, and stop a run by its id", async () => {
    const a = await newAgent(c, "slow");
    const first = a.stream({ input: "talk", detach: true });
    let following: Promise<{ kinds: string[]; err: unknown }> | undefined;
    const reading = (async () => {
      for await (const e of first) {
        if (following === undefined && e.kind.case === "modelDelta") {
          // Another connection follows the same run from where this one is.
          const follower = c.follow(first.runId, { afterSeq: e.seq });
          following = (async () => {
            const kinds: string[] = [];
            try {
              for await (const f of follower) kinds.push(f.kind.case ?? "");
            } catch (err) {
              return { kinds, err };
            }
            return { kinds, err: undefined };
          })();
          assert.equal(await first.stop(), true, "the stop went on the send's stream");
        }
      }
    })();
    const stopped = await rejection(reading);
    assert.ok(stopped instanceof AgentcoreError && stopped.kind === "aborted", String(stopped));
    assert.ok(following);
    const { err } = await following;
    assert.ok(err instanceof AgentcoreError && err.kind === "aborted", `the follower ends as the run did: ${String(err)}`);
    assert.equal((await c.getRun(first.runId)).state, pb.RunState.STOPPED);

    const second = a.stream({ input: "talk", detach: true });
    const outcome = rejection(second.result());
    while (second.runId === "") await new Promise((r) => setTimeout(r, 10));
    assert.equal(await a.stopRun("not-this-run"), false, "another run id stops nothing");
    assert.equal(await a.stopRun(second.runId), true);
    assert.ok((await outcome) instanceof AgentcoreError);
    await a.delete();
  });

  test("list and get runs", async () => {
    const a = await newAgent(c, "hello");
    const first = await a.send("one");
    const second = await a.send("two");
    const runs = await a.listRuns();
    assert.deepEqual(
      runs.map((r) => r.id),
      [second.runId, first.runId],
      "newest first",
    );
    assert.deepEqual(
      (await c.listRuns({ agentId: a.id, max: 1 })).map((r) => r.id),
      [second.runId],
    );
    assert.equal((await c.listRuns({ agentId: a.id, state: pb.RunState.FAILED })).length, 0);
    const run = await c.getRun(first.runId);
    assert.equal(run.state, pb.RunState.SUCCEEDED);
    assert.equal(run.result?.text, "I said: Hello, Ming!");
    assert.ok(run.lastSeq > 0n);
    await rejects(c.getRun("no-such-run"), Code.NotFound, Reason.RUN_NOT_FOUND);
    await rejects(c.attach("no-such-run"), Code.NotFound, Reason.RUN_NOT_FOUND);
    await a.delete();
  });

  test("a send that reconnects after the connection was cut", async () => {
    const proxy = await CutProxy.start(addr);
    const pc = Client.dial(proxy.target);
    try {
      const a = await newAgent(pc, "slow");
      let got = "";
      const seqs: bigint[] = [];
      const result = await a.send({
        input: "talk",
        reconnect: true,
        callbacks: {
          onEvent: (e) => seqs.push(e.seq),
          onText: (t) => {
            got += t;
            if (got.length > 8 && proxy.cuts === 0) proxy.cut();
          },
        },
      });
      assert.equal(proxy.cuts, 1);
      assert.equal(result.text, slowText);
      assert.equal(got, slowText, "every delta once, none lost");
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => BigInt(i + 1)),
      );
      await a.delete();
    } finally {
      pc.close();
      await proxy.close();
    }
  });

  test("without reconnect a cut connection fails the send", async () => {
    const proxy = await CutProxy.start(addr);
    const pc = Client.dial(proxy.target);
    try {
      const a = await newAgent(pc, "slow");
      let got = "";
      const e = await rejection(a.send({ input: "talk", callbacks: { onText: (t) => ((got += t), proxy.cut()) } }));
      assert.ok(e instanceof AgentcoreError, String(e));
      assert.equal(e.code, Code.Unavailable);
      assert.equal(e.reason, "");
      assert.equal(e.connectionLost, true);
      assert.equal(e.kind, "", "a broken connection is not an abort");
      await a.delete();
    } finally {
      pc.close();
      await proxy.close();
    }
  });
});
