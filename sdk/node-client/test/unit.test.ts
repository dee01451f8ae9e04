// The parts of the client that need no server.
import * as assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { AgentcoreError, Code, Reason, image, kinds, parseTarget, pb, reasonName, text, user } from "../src/index";
import { toError, transient } from "../src/errors";
import { Queue } from "../src/queue";

describe("parseTarget", () => {
  const cases: [string, boolean, { baseUrl: string; socket?: string }][] = [
    ["127.0.0.1:50051", false, { baseUrl: "http://127.0.0.1:50051" }],
    ["agents.example:443", true, { baseUrl: "https://agents.example:443" }],
    ["[::1]:50051", false, { baseUrl: "http://[::1]:50051" }],
    ["unix:/run/agentcore/agent.sock", false, { baseUrl: "http://localhost", socket: "/run/agentcore/agent.sock" }],
    ["unix:///tmp/a.sock", false, { baseUrl: "http://localhost", socket: "/tmp/a.sock" }],
    ["unix:rel.sock", false, { baseUrl: "http://localhost", socket: "rel.sock" }],
    ["https://gw.example/prefix/", true, { baseUrl: "https://gw.example/prefix" }],
  ];
  for (const [target, secure, want] of cases) {
    test(target, () => assert.deepEqual(parseTarget(target, secure), want));
  }
  for (const bad of ["", "unix:", "a b:1", "host/path"]) {
    test(`rejects ${JSON.stringify(bad)}`, () => assert.throws(() => parseTarget(bad, false), /agentcore: target/));
  }
});

describe("toError", () => {
  test("a model error's details", () => {
    const ce = new ConnectError("rate limited", Code.ResourceExhausted, undefined, [
      {
        desc: pb.ErrorInfoSchema,
        value: { reason: "LIMIT", domain: "agentcore", metadata: { retryable: "true", status: "429", kind: "limit" } },
      },
      { desc: pb.RetryInfoSchema, value: { retryDelay: { seconds: 2n, nanos: 500_000_000 } } },
    ]);
    const e = toError(ce);
    assert.ok(e instanceof AgentcoreError);
    assert.equal(e.code, Code.ResourceExhausted);
    assert.equal(e.kind, "limit");
    assert.equal(e.reason, "LIMIT");
    assert.equal(e.retryable, true);
    assert.equal(e.status, 429);
    assert.equal(e.retryDelayMs, 2500);
    assert.equal(e.rawMessage, "rate limited");
    assert.equal(e.message, "agentcore: ResourceExhausted (limit): rate limited");
    assert.equal(e.cause, ce);
    assert.equal(toError(e), e, "an AgentcoreError stays as it is");
  });

  test("a bad request's fields", () => {
    const e = toError(
      new ConnectError("invalid request", Code.InvalidArgument, undefined, [
        { desc: pb.ErrorInfoSchema, value: { reason: "INVALID_ARGUMENT", domain: "agentcore" } },
        { desc: pb.BadRequestSchema, value: { fieldViolations: [{ field: "start.input", description: "required" }] } },
      ]),
    );
    assert.equal(e.kind, "");
    assert.equal(e.reason, "INVALID_ARGUMENT");
    assert.deepEqual(e.fields, [{ field: "start.input", description: "required" }]);
  });

  test("no details, a broken connection, and not a status at all", () => {
    const cancelled = toError(new ConnectError("gone", Code.Canceled, { "grpc-status": "1" }));
    assert.equal(cancelled.kind, "aborted", "a cancelled call is aborted");
    assert.equal(cancelled.reason, "");
    assert.equal(cancelled.connectionLost, false);
    const reset = toError(new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled));
    assert.equal(reset.code, Code.Unavailable, "a stream reset under the client is a broken connection");
    assert.equal(reset.connectionLost, true);
    assert.equal(reset.kind, "");
    const econnreset = toError(new ConnectError("read ECONNRESET", Code.Aborted));
    assert.equal(econnreset.code, Code.Unavailable);
    assert.equal(econnreset.connectionLost, true);
    const busy = toError(new ConnectError("busy", Code.Aborted, { "grpc-status": "10" }));
    assert.equal(busy.code, Code.Aborted, "the server's ABORTED stays");
    assert.equal(busy.connectionLost, false);
    const deadline = toError(new ConnectError("deadline", Code.DeadlineExceeded));
    assert.equal(deadline.connectionLost, false);
    const ac = new AbortController();
    ac.abort(new Error("bye"));
    const mine = toError(new ConnectError("aborted", Code.Canceled), ac.signal);
    assert.equal(mine.kind, "aborted");
    assert.equal(mine.rawMessage, "bye");
    const plain = toError(new Error("plain"));
    assert.equal(plain.code, Code.Unknown);
    assert.equal(plain.kind, "");
  });
});

test("a server going away is worth waiting out; its answers are not", () => {
  const info = (reason: string) => [{ desc: pb.ErrorInfoSchema, value: { reason, domain: "agentcore" } }];
  const answered = () => new Headers({ "grpc-status": "14" }); // the server's own answer, not a lost connection
  assert.equal(transient(toError(new ConnectError("restarting", Code.Unavailable))), true);
  assert.equal(transient(toError(new ConnectError("shutting down", Code.Unavailable, answered(), info("SHUTTING_DOWN")))), true);
  assert.equal(transient(toError(new ConnectError("interrupted", Code.Unavailable, answered(), info("RUN_INTERRUPTED")))), false);
});

test("the kinds are the proto's ErrorKind names", () => {
  assert.deepEqual(kinds, ["aborted", "auth", "limit", "timeout", "server", "network", "request", "unknown"]);
});

test("reasonName says the end reasons as agent-core does", () => {
  assert.equal(reasonName(pb.EndReason.NO_TOOL), "no-tool");
  assert.equal(reasonName(pb.EndReason.TOOL_STOP), "tool-stop");
  assert.equal(reasonName(pb.EndReason.STEP_LIMIT), "step-limit");
  assert.equal(reasonName(pb.EndReason.BUDGET), "budget");
});

test("child runs' events and budgets decode", () => {
  const inner = create(pb.EventSchema, { seq: 3n, runId: "run_child", kind: { case: "toolCall", value: { toolName: "add" } } });
  const wire = toBinary(pb.EventSchema, create(pb.EventSchema, {
    seq: 9n,
    runId: "run_root",
    kind: { case: "child", value: { runId: "run_child", agentId: "helper", parentRunId: "run_root", depth: 1, event: inner } },
  }));
  const e = fromBinary(pb.EventSchema, wire);
  assert.equal(e.kind.case, "child");
  if (e.kind.case === "child") {
    assert.equal(e.kind.value.depth, 1);
    assert.equal(e.kind.value.event?.kind.case === "toolCall" && e.kind.value.event.kind.value.toolName, "add");
  }
  const b = fromBinary(pb.EventSchema, toBinary(pb.EventSchema, create(pb.EventSchema, {
    kind: { case: "budgetExceeded", value: { limit: pb.BudgetLimit.COST, max: 2.5, used: 2.75 } },
  })));
  assert.equal(b.kind.case === "budgetExceeded" && b.kind.value.limit, pb.BudgetLimit.COST);
  const r = fromBinary(pb.RunResultEventSchema, toBinary(pb.RunResultEventSchema, create(pb.RunResultEventSchema, {
    treeUsage: { modelRequests: 5n, childRuns: 2n, cost: 0.5 },
  })));
  assert.equal(r.treeUsage?.childRuns, 2n);
});

test("parts and messages", () => {
  assert.deepEqual(text("hi").kind, { case: "text", value: "hi" });
  const img = image("image/png", new Uint8Array([1, 2]));
  assert.equal(img.kind.case, "image");
  assert.equal(img.kind.case === "image" && img.kind.value.source.case, "data");
  const byUrl = image("image/png", "https://example.com/a.png");
  assert.equal(byUrl.kind.case === "image" && byUrl.kind.value.source.case, "url");
  const m = user("hello");
  assert.equal(m.role, pb.Role.USER);
  assert.deepEqual(m, create(pb.MessageSchema, { role: pb.Role.USER, parts: [text("hello")] }));
});

test("Queue hands out what was pushed, in order, until closed", async () => {
  const q = new Queue<number>();
  q.push(1);
  const it = q[Symbol.asyncIterator]();
  assert.deepEqual(await it.next(), { value: 1, done: false });
  const waiting = it.next();
  q.push(2);
  assert.deepEqual(await waiting, { value: 2, done: false });
  q.close();
  assert.equal(q.push(3), false);
  assert.deepEqual(await it.next(), { value: undefined, done: true });
});

test("Reason is the proto's ErrorReason list, as docs/errors.md has it", async () => {
  const names = pb.file_agentcore_v1_errors.enums[0]?.values.map((v) => v.name.replace(/^ERROR_REASON_/, ""));
  assert.ok(names && names.length > 40, "the ErrorReason enum has its values");
  assert.deepEqual(Object.keys(Reason), names.slice(1), "every value but UNSPECIFIED, in the proto's order");
  for (const [k, v] of Object.entries(Reason)) assert.equal(v, k);
  assert.equal(Reason.AGENT_BUSY, "AGENT_BUSY");
  assert.ok(Object.isFrozen(Reason));
  // The page's tables list the same reasons (the Go client's constants come from there too).
  const doc = await readFile(path.join(__dirname, "..", "..", "..", "..", "docs", "errors.md"), "utf8");
  const documented = new Set([...doc.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]));
  for (const r of Object.keys(Reason)) assert.ok(documented.has(r), `docs/errors.md has no row for ${r}`);
});
