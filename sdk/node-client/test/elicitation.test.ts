// An MCP server's elicitation answered from the TypeScript client:
// tests/node_client_test.go starts a server whose tools are the MCP test
// server's and names it in AGENTCORE_TEST_MCP_ADDR.
import * as assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { Client, Code, Reason, pb } from "../src/index";
import { rejects, script } from "./helpers";

const mcpAddr = process.env["AGENTCORE_TEST_MCP_ADDR"] ?? "";
const skip = mcpAddr === "" ? "AGENTCORE_TEST_MCP_ADDR is not set: go test ./tests -run TestTypeScriptClient runs these" : false;

describe("elicitation", { skip }, () => {
  const c = Client.dial(mcpAddr, { token: process.env["AGENTCORE_TEST_MCP_TOKEN"] ?? "" });
  after(() => c.close());

  test("onElicitation, answered with respondElicitation, the schema's defaults filled in", async () => {
    const a = await c.createAgent({ config: { system: script("elicit") } });
    const answers: Promise<JsonObject>[] = [];
    const results: pb.ElicitationAction[] = [];
    const res = await a.send({
      input: "ask",
      callbacks: {
        onElicitation: (req, runId) => {
          assert.equal(req.message, "Who are you?");
          answers.push(c.respondElicitation(runId, req.elicitationId, "accept", { name: "Lin" }));
        },
        onElicitationResult: (e) => results.push(e.action),
      },
    });
    assert.equal(answers.length, 1);
    assert.deepEqual(await answers[0], { name: "Lin", greeting: "hello" });
    assert.deepEqual(results, [pb.ElicitationAction.ACCEPT]);
    assert.equal(res.text, "hello, Lin");
    await rejects(c.respondElicitation(res.runId, "c1~elicit-nope", "cancel"), Code.NotFound, Reason.ELICITATION_NOT_FOUND);
    await assert.rejects(c.respondElicitation(res.runId, "c1~elicit-nope", "maybe" as "cancel"), TypeError);
  });
});
