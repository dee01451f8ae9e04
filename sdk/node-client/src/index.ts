/**
 * @agentcore/client: a TypeScript client of agentcore's AgentService, with
 * agent-core's shape: create an agent, send a task with callbacks or iterate
 * its events, answer permission requests, stop, read and restore its
 * history, follow runs, and one error class.
 *
 *     const client = Client.dial("127.0.0.1:50051");
 *     const agent = await client.createAgent({ config: { system: "Use the tools to do the task." } });
 *     const result = await agent.send({
 *       input: "Say hello to Ming",
 *       callbacks: { onText: (t) => process.stdout.write(t), onPermission: () => allow() },
 *     });
 *     console.log(result.reason, result.text); // no-tool, tool-stop or step-limit
 *
 * @packageDocumentation
 */
import { Client } from "./client";
import type { DialOptions } from "./transport";

export { create, fromJson, toJson } from "@bufbuild/protobuf";
export type { CallOptions } from "@connectrpc/connect";
export { Agent, type AgentChange, type AgentConfigInit, type Busy, type FollowOptions, type RunFilter, type SendOptions } from "./agent";
export { type AgentOptions, Client, type Elicited, type ExecuteOptions } from "./client";
export { AgentcoreError, Code, type ErrorInit, type FieldViolation, type Kind, Reason, kinds } from "./errors";
export {
  type Input,
  type MessageInit,
  type PartInit,
  type Source,
  assistant,
  audio,
  file,
  image,
  system,
  text,
  textOf,
  user,
  video,
} from "./parts";
export * as pb from "./pb";
export {
  type Callbacks,
  type Decision,
  type EndReasonName,
  type PermissionContext,
  type Result,
  RunStream,
  allow,
  deny,
  reasonName,
} from "./run";
export { type DialOptions, parseTarget } from "./transport";

/** dial is Client.dial: connect to `host:port` or `unix:PATH`. */
export function dial(target: string, options: DialOptions = {}): Client {
  return Client.dial(target, options);
}
