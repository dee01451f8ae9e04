// The README's five-minute task from TypeScript, on @agentcore/client
// (sdk/node-client): create an agent, send "Say hello to Ming", stream its
// text and tool calls, answer its permission request, print the result.
//
//   (cd ../../sdk/node-client && npm ci)   # the client, built
//   npm ci && npm run build
//   node dist/hello.js [address] [task]
//
// On a terminal each tool call waits for y/n; otherwise say_hello is allowed
// and any other tool denied. Environment: AGENTCORE_ADDR (default
// 127.0.0.1:50051, or unix:/path/agent.sock), AGENTCORE_AUTH_TOKEN (when the
// server wants a bearer token), AGENTCORE_SYSTEM (the agent's system prompt).
import * as readline from "node:readline/promises";
import { AgentcoreError, Client, Reason, allow, deny, type pb } from "@agentcore/client";

/** decide answers a permission request: the person at the terminal, or a rule. */
async function decide(req: pb.PermissionRequestEvent, signal: AbortSignal) {
  if (!process.stdin.isTTY) {
    const d = req.toolName === "say_hello" ? allow() : deny("only say_hello may run here");
    console.log(`\n  permission asked: ${req.toolName} ${req.arguments} -> ${d.allow ? "allow" : "deny"}`);
    return d;
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await rl.question(`\n  run ${req.toolName} ${req.arguments}? [y/N] `, { signal });
    return /^y/i.test(answer) ? allow() : deny("the user said no");
  } finally {
    rl.close();
  }
}

async function main(): Promise<void> {
  const address = process.argv[2] ?? process.env["AGENTCORE_ADDR"] ?? "127.0.0.1:50051";
  const task = process.argv[3] ?? "Say hello to Ming.";
  const client = Client.dial(address, { token: process.env["AGENTCORE_AUTH_TOKEN"] });
  const agent = await client.createAgent({
    config: { system: process.env["AGENTCORE_SYSTEM"] ?? "Use the tools to do the task." },
  });
  console.log(`agent ${agent.id}`);
  try {
    const result = await agent.send({
      input: task,
      callbacks: {
        onText: (text) => process.stdout.write(text),
        onPermission: (req, { signal }) => decide(req, signal),
        onToolCall: (e) => console.log(`\n  -> ${e.toolName} ${e.arguments}`),
        onToolOutput: (e) => process.stdout.write(`     ${e.data}`),
        onToolResult: (e) => console.log(`  <- ${e.toolName} = ${e.output?.value.value}${e.error ? " (error)" : ""}`),
      },
    });
    console.log(`\nresult: reason=${result.reason} steps=${result.steps} text=${JSON.stringify(result.text)}`);
  } finally {
    // The server keeps agents (in its store) until they are deleted.
    await agent.delete();
    client.close();
  }
}

main().catch((e: unknown) => {
  if (e instanceof AgentcoreError) {
    // One error class: the gRPC code, the reason (Reason's constants) and, for a model error, its kind.
    console.error(`error: ${e.message} (reason ${e.reason || "none"})`);
    if (e.reason === Reason.NO_MODEL) console.error("start agent-server with AGENTCORE_MODEL_BASE_URL and AGENTCORE_MODEL");
  } else {
    console.error(e);
  }
  process.exit(1);
});
