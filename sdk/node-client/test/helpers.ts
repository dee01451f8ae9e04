// What the end-to-end tests share. They need a running agent-server with the
// fake model's scripts, which tests/node_client_test.go starts and names in
// the environment (go test ./tests -run TestTypeScriptClient); without it
// they skip.
import * as assert from "node:assert/strict";
import * as net from "node:net";
import { Agent, AgentcoreError, Client, type Code, type Reason } from "../src/index";

/** The agent-server the tests talk to. */
export const addr = process.env["AGENTCORE_TEST_ADDR"] ?? "";

/** Why the end-to-end tests skip, or false when they run. */
export const skip =
  addr === "" ? "AGENTCORE_TEST_ADDR is not set: go test ./tests -run TestTypeScriptClient runs these" : false;

/** The scripts' system prompts by name (tests/node_client_test.go: tsScripts). */
export const scripts: Record<string, string> = JSON.parse(process.env["AGENTCORE_TEST_SCRIPTS"] ?? "{}");

/** script is the system prompt of a script. */
export function script(name: string): string {
  const s = scripts[name];
  if (s === undefined) throw new Error(`no script ${name} in AGENTCORE_TEST_SCRIPTS`);
  return s;
}

/** newAgent creates an agent answered by the script name; it is deleted by cleanup. */
export async function newAgent(c: Client, name: string, config: Record<string, unknown> = {}): Promise<Agent> {
  return c.createAgent({ config: { system: script(name), ...config } });
}

/** rejects asserts that p fails with an AgentcoreError of this code and reason, and returns it. */
export async function rejects(p: Promise<unknown>, code: Code, reason: Reason | ""): Promise<AgentcoreError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AgentcoreError, `${String(e)} is not an AgentcoreError`);
    assert.equal(e.code, code, `code of ${e.message}`);
    assert.equal(e.reason, reason, `reason of ${e.message}`);
    return e;
  }
  assert.fail(`no error, want ${reason}`);
}

/** words is the text the slow script streams. */
export const slowText = Array.from({ length: 40 }, (_, i) => `w${String.fromCharCode(97 + (i % 26))} `).join("");

/**
 * CutProxy is a TCP (or unix socket) proxy to the server whose connections
 * can be cut, as a network that drops them.
 */
export class CutProxy {
  readonly #server: net.Server;
  readonly #conns = new Set<net.Socket>();
  cuts = 0;

  private constructor(server: net.Server) {
    this.#server = server;
  }

  /** start listens on 127.0.0.1 (or the unix socket path) and forwards to target host:port. */
  static async start(target: string, path?: string): Promise<CutProxy> {
    const i = target.lastIndexOf(":");
    const host = target.slice(0, i);
    const port = Number(target.slice(i + 1));
    const server = net.createServer();
    const p = new CutProxy(server);
    server.on("connection", (down) => {
      const up = net.connect(port, host);
      for (const s of [down, up]) {
        p.#conns.add(s);
        s.on("close", () => p.#conns.delete(s));
        s.on("error", () => {});
      }
      down.pipe(up).on("error", () => {});
      up.pipe(down).on("error", () => {});
      down.on("close", () => up.destroy());
      up.on("close", () => down.destroy());
    });
    await new Promise<void>((resolve) => (path ? server.listen(path, resolve) : server.listen(0, "127.0.0.1", resolve)));
    return p;
  }

  /** target is what Client.dial takes to reach the proxy. */
  get target(): string {
    const a = this.#server.address();
    if (typeof a === "string") return `unix:${a}`;
    return `127.0.0.1:${(a as net.AddressInfo).port}`;
  }

  /** cut drops every open connection. */
  cut(): void {
    this.cuts++;
    for (const s of this.#conns) s.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
