import { create, type JsonValue, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, type Client as ConnectClient } from "@connectrpc/connect";
import {
  type AgentService,
  type AttachRequestSchema,
  SendRequestSchema,
  type SendRequest,
  type StartRunSchema,
} from "./gen/agentcore/v1/agent_service_pb";
import {
  type BudgetExceededEvent,
  type ChildRunEvent,
  type ElicitationRequestEvent,
  type ElicitationResultEvent,
  EndReason,
  type Event,
  type ModelDeltaEvent,
  type ModelRequestEvent,
  type ModelResponseEvent,
  type PermissionRequestEvent,
  type RetryEvent,
  type RunResultEvent,
  type RunResumedEvent,
  type RunUsage,
  type StepEvent,
  type ToolCallEvent,
  type ToolOutputCappedEvent,
  type ToolOutputEvent,
  type ToolResultEvent,
} from "./gen/agentcore/v1/event_pb";
import type { Usage } from "./gen/agentcore/v1/message_pb";
import { AgentcoreError, aborted, toError, transient } from "./errors";
import { Queue } from "./queue";

/** Decision answers a permission request. */
export interface Decision {
  allow: boolean;
  /** Told to the model when the call is denied. */
  reason?: string;
}

/** allow is the decision that lets the call run. */
export function allow(): Decision {
  return { allow: true };
}

/** deny is the decision that refuses the call; reason is told to the model. */
export function deny(reason = ""): Decision {
  return { allow: false, reason };
}

/** reply is a decision as a PermissionReply's fields (true and false say allow and deny). */
export function reply(d: Decision | boolean): { allow: boolean; reason: string } {
  return typeof d === "boolean" ? { allow: d, reason: "" } : { allow: d.allow, reason: d.reason ?? "" };
}

/** What onPermission gets beside the request. */
export interface PermissionContext {
  runId: string;
  /** Aborted when the run ends or its caller leaves: an answer given after that is not sent. */
  signal: AbortSignal;
}

/**
 * Callbacks receive a run's events in order, as agent-core's callbacks do;
 * each is optional. One that throws ends the send with its exception.
 */
export interface Callbacks {
  /** Every event, first, as it came. */
  onEvent?(e: Event): void;
  /** The run started (agent-core: onStart). */
  onStart?(runId: string): void;
  /** A model request is about to be sent (onLLMStart). */
  onLLMStart?(e: ModelRequestEvent): void;
  /** A streamed piece of the model's answer: text, reasoning or tool-call arguments (onLLMEvent). */
  onLLMEvent?(e: ModelDeltaEvent): void;
  /** A streamed piece of the model's answer text (the text deltas of onLLMEvent). */
  onText?(text: string): void;
  /** The model's complete answer (onLLMFinish). */
  onLLMFinish?(e: ModelResponseEvent): void;
  /**
   * Decides whether a tool call may run (onPermission): true or allow() lets
   * it, false or deny(reason) refuses it. Events keep flowing while it waits
   * (e.g. for a person). Setting it makes the server ask for every call
   * unless SendOptions.askTools narrows it.
   */
  onPermission?(
    req: PermissionRequestEvent,
    ctx: PermissionContext,
  ): Decision | boolean | Promise<Decision | boolean>;
  /** A tool call starts (onToolCall). */
  onToolCall?(e: ToolCallEvent): void;
  /** Live output of a running tool (onToolOutput). */
  onToolOutput?(e: ToolOutputEvent): void;
  /**
   * A tool call's live output went over its cap (the server's -max-live-output,
   * config.maxLiveOutput): the rest was not sent, and the event says how much.
   * It comes once, before the call's result.
   */
  onToolOutputCapped?(e: ToolOutputCappedEvent): void;
  /** A tool call finished (onToolResult). */
  onToolResult?(e: ToolResultEvent): void;
  /** A round of model and tools finished (onStep). */
  onStep?(e: StepEvent): void;
  /** A failed model request is retried (onRetry). */
  onRetry?(e: RetryEvent): void;
  /** Compaction started, streamed a piece of summary, or finished (onCompact): the event holds one of the three. */
  onCompact?(e: Event): void;
  /**
   * The run's server crashed and a server resumed the run (on_interrupt resume): the events after it
   * replace those after its seq-1 that this client may have seen on the broken stream.
   */
  onResumed?(e: RunResumedEvent): void;
  /**
   * An event of a child run (an agent this run called as a tool, or one of
   * its descendants), with the child's run id and depth. A child's
   * permission request is answered with Client.respondPermission(child.runId, …).
   */
  onChild?(e: ChildRunEvent): void;
  /** A limit of the run tree's budget was reached: the run ends (reason "budget"). */
  onBudgetExceeded?(e: BudgetExceededEvent): void;
  /**
   * A tool asks the person behind the run for input (an MCP server's
   * elicitation): a message and a form's schema. Answer with
   * Client.respondElicitation(runId, req.elicitationId, "accept", {...}) from
   * any connection; unanswered within the server's permission timeout it is
   * cancelled. A child run's comes in onChild.
   */
  onElicitation?(req: ElicitationRequestEvent, runId: string): void;
  /** An elicitation request was answered, or cancelled for want of an answer. */
  onElicitationResult?(e: ElicitationResultEvent): void;
}

/** agent-core's names of the end reasons. */
export type EndReasonName = "no-tool" | "tool-stop" | "step-limit" | "budget";

/** Result is a finished send (agent-core's resolved send). */
export interface Result {
  runId: string;
  /** The last model round's text. */
  text: string;
  /** How many model rounds ran. */
  steps: number;
  /** Summed over the send. */
  usage: Usage | undefined;
  /** Why the send ended: no-tool, tool-stop or step-limit, as agent-core says it, or budget. */
  reason: EndReasonName;
  /** The same as the proto's enum. */
  endReason: EndReason;
  /** The structured output, when an output format was set. */
  output: JsonValue | undefined;
  /** What the run spent: tokens, model requests, tool calls, wall time, cost. */
  runUsage: RunUsage | undefined;
  /** What the run spent with its child runs. */
  treeUsage: RunUsage | undefined;
}

/** reasonName is agent-core's name of an end reason. */
export function reasonName(r: EndReason): EndReasonName {
  return (EndReason[r] ?? "").toLowerCase().replace(/_/g, "-") as EndReasonName;
}

function toResult(runId: string, r: RunResultEvent): Result {
  return {
    runId,
    text: r.text,
    steps: r.steps,
    usage: r.usage,
    reason: reasonName(r.reason),
    endReason: r.reason,
    output: r.output ? toJson(ValueSchema, r.output) : undefined,
    runUsage: r.runUsage,
    treeUsage: r.treeUsage,
  };
}

/** What a RunStream reads first: a new run (a Send stream) or a run to follow (Attach). */
export type Source =
  | { send: MessageInitShape<typeof StartRunSchema> }
  | { attach: MessageInitShape<typeof AttachRequestSchema> };

/** How a RunStream runs. */
export interface RunStreamOptions {
  callbacks?: Callbacks;
  /** Ends the stream: the run goes on only when it was started detached or to reconnect. */
  signal?: AbortSignal;
  /** Attach again from the last event seen when the connection breaks. */
  reconnect?: boolean;
}

const firstWait = 100;
const maxWait = 2000;

/**
 * RunStream is one run's events, read once, in order: iterate it
 * (`for await (const event of stream)`) or call result(). The callbacks get
 * every event either way.
 */
export class RunStream implements AsyncIterable<Event> {
  readonly #api: ConnectClient<typeof AgentService>;
  readonly #callbacks: Callbacks;
  readonly #reconnect: boolean;
  readonly #signal: AbortSignal | undefined;
  /** Aborted when the stream ends or its caller's signal is: ends the calls and pending onPermission callbacks. */
  readonly #abort = new AbortController();
  readonly #events: AsyncGenerator<Event, void, undefined>;
  readonly #done: Promise<Result>;
  #settle!: { resolve(r: Result): void; reject(e: unknown): void; settled: boolean };
  #claimed = false;
  /** The open Send stream's requests, while there is one: permission answers and stop go there. */
  #requests: Queue<SendRequest> | undefined;
  #runId = "";
  #agentId = "";
  #seq = 0n;
  #attempt = 0; // the attempt of the last event read: Attach is given it back

  /** Made by Agent.stream, Client.follow and Agent.follow. */
  constructor(api: ConnectClient<typeof AgentService>, source: Source, o: RunStreamOptions = {}) {
    this.#api = api;
    this.#callbacks = o.callbacks ?? {};
    this.#reconnect = o.reconnect ?? false;
    this.#signal = o.signal;
    this.#done = new Promise<Result>((resolve, reject) => {
      this.#settle = { resolve, reject, settled: false };
    });
    this.#done.catch(() => {}); // read by result(), or thrown by the iteration
    if ("attach" in source) {
      this.#runId = source.attach.runId ?? "";
      this.#agentId = source.attach.agentId ?? "";
      this.#seq = BigInt(source.attach.afterSeq ?? 0);
    } else {
      this.#agentId = source.send.agentId ?? "";
    }
    this.#events = this.#run(source);
  }

  /** The run's id, once its first event came ("" before). */
  get runId(): string {
    return this.#runId;
  }

  /** The seq of the last event read: Client.attach(runId, { afterSeq }) goes on from there. */
  get lastSeq(): bigint {
    return this.#seq;
  }

  [Symbol.asyncIterator](): AsyncIterator<Event> {
    if (this.#claimed) throw new Error("agentcore: a run's events can be read once");
    this.#claimed = true;
    return this.#events;
  }

  /**
   * result reads the events that are left (to the callbacks) and returns the
   * run's result; after an iteration it returns the result that iteration
   * reached, or throws the error it ended with.
   */
  async result(): Promise<Result> {
    if (!this.#claimed) {
      this.#claimed = true;
      for await (const _ of this.#events) {
        // the callbacks saw it
      }
    }
    return this.#done;
  }

  /**
   * respond answers a permission request of this run: on its Send stream
   * while that is open, else with RespondPermission (which fails when the
   * request was answered already or is unknown).
   */
  async respond(toolCallId: string, d: Decision | boolean): Promise<void> {
    const answer = { toolCallId, ...reply(d) };
    if (this.#requests?.push(create(SendRequestSchema, { kind: { case: "permission", value: answer } }))) return;
    if (this.#runId === "") throw new Error("agentcore: the run has not started: nothing to answer");
    try {
      await this.#api.respondPermission({ runId: this.#runId, ...answer });
    } catch (e) {
      throw toError(e, this.#signal);
    }
  }

  /**
   * stop stops the run: on its Send stream while that is open (which then
   * ends CANCELLED), else with Stop, which stops it only while it is still
   * the agent's run. It reports whether a stop was asked or a run stopped.
   */
  async stop(): Promise<boolean> {
    if (this.#requests?.push(create(SendRequestSchema, { kind: { case: "stop", value: {} } }))) return true;
    if (this.#runId === "") return false;
    try {
      if (this.#agentId === "") this.#agentId = (await this.#api.getRun({ runId: this.#runId })).run?.agentId ?? "";
      return (await this.#api.stop({ agentId: this.#agentId, runId: this.#runId })).stopped;
    } catch (e) {
      throw toError(e, this.#signal);
    }
  }

  async *#run(source: Source): AsyncGenerator<Event, void, undefined> {
    const signal = this.#signal;
    const onAbort = () => this.#abort.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    let result: Result | undefined;
    try {
      if (signal?.aborted) throw aborted(signal);
      let events = "send" in source ? this.#sendEvents(source.send) : this.#attachEvents(source.attach);
      for (let wait = firstWait; ; wait = Math.min(2 * wait, maxWait)) {
        try {
          for await (const e of events) {
            result = this.#dispatch(e) ?? result;
            yield e;
          }
          if (result === undefined) {
            throw new AgentcoreError({ code: Code.Unknown, message: "the run's stream ended without a result" });
          }
          this.#settle.resolve(result);
          this.#settle.settled = true;
          return;
        } catch (e) {
          const err = toError(e, signal);
          if (!this.#reconnect || this.#runId === "" || !transient(err)) throw err;
        }
        await sleep(wait, this.#abort.signal);
        if (signal?.aborted) throw aborted(signal);
        events = this.#attachEvents({ runId: this.#runId, afterSeq: this.#seq, attempt: this.#attempt });
      }
    } catch (e) {
      this.#settle.reject(e);
      this.#settle.settled = true;
      throw e;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.#abort.abort(new Error("the run's stream ended"));
      if (!this.#settle.settled) {
        this.#settle.reject(
          new AgentcoreError({ code: Code.Canceled, kind: "aborted", reason: "ABORTED", message: "the run's events were not read to its end" }),
        );
      }
    }
  }

  async *#sendEvents(start: MessageInitShape<typeof StartRunSchema>): AsyncGenerator<Event, void, undefined> {
    const q = new Queue<SendRequest>();
    q.push(create(SendRequestSchema, { kind: { case: "start", value: start } }));
    this.#requests = q;
    try {
      for await (const resp of this.#api.send(q, { signal: this.#abort.signal })) {
        if (resp.event) yield resp.event;
      }
    } finally {
      q.close();
      if (this.#requests === q) this.#requests = undefined;
    }
  }

  async *#attachEvents(req: MessageInitShape<typeof AttachRequestSchema>): AsyncGenerator<Event, void, undefined> {
    for await (const resp of this.#api.attach(req, { signal: this.#abort.signal })) {
      if (resp.event) yield resp.event;
    }
  }

  /** dispatch records where the run is, calls the callbacks of e and returns the result when e is it. */
  #dispatch(e: Event): Result | undefined {
    this.#seq = e.seq;
    this.#attempt = e.attempt;
    if (e.runId !== "") this.#runId = e.runId;
    const cb = this.#callbacks;
    cb.onEvent?.(e);
    const k = e.kind;
    switch (k.case) {
      case "runStarted":
        if (k.value.agentId !== "") this.#agentId = k.value.agentId;
        cb.onStart?.(e.runId);
        break;
      case "modelRequest":
        cb.onLLMStart?.(k.value);
        break;
      case "modelDelta":
        cb.onLLMEvent?.(k.value);
        if (k.value.delta.case === "text") cb.onText?.(k.value.delta.value);
        break;
      case "modelResponse":
        cb.onLLMFinish?.(k.value);
        break;
      case "permissionRequest":
        this.#ask(k.value);
        break;
      case "toolCall":
        cb.onToolCall?.(k.value);
        break;
      case "toolOutput":
        cb.onToolOutput?.(k.value);
        break;
      case "toolOutputCapped":
        cb.onToolOutputCapped?.(k.value);
        break;
      case "toolResult":
        cb.onToolResult?.(k.value);
        break;
      case "step":
        cb.onStep?.(k.value);
        break;
      case "retry":
        cb.onRetry?.(k.value);
        break;
      case "compactStarted":
      case "compactDelta":
      case "compactFinished":
        cb.onCompact?.(e);
        break;
      case "runResumed":
        cb.onResumed?.(k.value);
        break;
      case "child":
        cb.onChild?.(k.value);
        break;
      case "budgetExceeded":
        cb.onBudgetExceeded?.(k.value);
        break;
      case "elicitationRequest":
        cb.onElicitation?.(k.value, e.runId);
        break;
      case "elicitationResult":
        cb.onElicitationResult?.(k.value);
        break;
      case "result":
        return toResult(e.runId, k.value);
    }
    return undefined;
  }

  /**
   * ask runs onPermission for a request without holding up the events, and
   * sends its answer unless the run ended first (the request then stays open
   * for RespondPermission until the server's -permission-timeout). An answer
   * that cannot be sent while the connection is down is sent again.
   */
  #ask(req: PermissionRequestEvent): void {
    const decide = this.#callbacks.onPermission;
    if (decide === undefined) return;
    const signal = this.#abort.signal;
    const runId = this.#runId;
    void (async () => {
      let d: Decision | boolean;
      try {
        d = await decide(req, { runId, signal });
      } catch (e) {
        d = deny(`the client's permission callback failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      for (let wait = firstWait; !signal.aborted; wait = Math.min(2 * wait, maxWait)) {
        try {
          await this.respond(req.toolCallId, d);
          return;
        } catch (e) {
          // Refused: answered already (before a reconnection) or gone. Fine.
          if (!(e instanceof AgentcoreError) || !transient(e)) return;
        }
        await sleep(wait, signal);
      }
    })();
  }
}

/** sleep waits ms, or less when signal is aborted. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
