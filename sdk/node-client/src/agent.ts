import type { MessageInitShape } from "@bufbuild/protobuf";
import { type CallOptions, Code, type Client as ConnectClient } from "@connectrpc/connect";
import {
  type Agent as AgentInfo,
  type AgentService,
  BusyPolicy,
  PermissionMode,
  type PreviewContextResponse,
  type StartRunSchema,
} from "./gen/agentcore/v1/agent_service_pb";
import type { AgentConfigSchema } from "./gen/agentcore/v1/config_pb";
import type { BudgetSchema, Event } from "./gen/agentcore/v1/event_pb";
import type { Message } from "./gen/agentcore/v1/message_pb";
import { OnDisconnect, type Run } from "./gen/agentcore/v1/run_pb";
import { AgentcoreError, toError } from "./errors";
import { type Input, type MessageInit, toParts } from "./parts";
import { type Callbacks, type Result, RunStream } from "./run";

/** AgentConfigInit is an agent's config as a plain object ({ system, model, maxSteps, … }). */
export type AgentConfigInit = MessageInitShape<typeof AgentConfigSchema>;

/** What the agent does when it is already running: agent-core's "latest instruction wins" is replace. */
export type Busy = "replace" | "reject" | "queue";

/** SendOptions are a send's input and overrides (agent-core's agent.send(options)). */
export interface SendOptions {
  /** The user's input: text, or parts (text, image(…), file(…)). */
  input?: Input;
  /** Overrides of the agent's config for this send (provider replaces whole). */
  config?: AgentConfigInit;
  /** Replaces the history before the run (and is kept). */
  history?: MessageInit[];
  /** The only tools of this send. */
  tools?: string[];
  /**
   * Which tool calls wait for a permission decision: true for every call, a
   * list for the calls of those tools, false for none. Default: every call
   * when callbacks.onPermission is set, else none. Without onPermission the
   * requests are answered with RunStream.respond or Client.respondPermission.
   */
  ask?: boolean | string[];
  /** When the agent is already running: replace (default: the old run ends CANCELLED), reject (AGENT_BUSY) or queue. */
  busy?: Busy;
  /**
   * The run goes on when this client goes away (on_disconnect CONTINUE):
   * aborting signal then leaves it running; Client.attach follows it again,
   * respondPermission answers it, Agent.stop stops it.
   */
  detach?: boolean;
  /**
   * Survive a broken connection: the run goes on (as with detach) and the
   * send attaches again from the last event it saw, until the run ends or
   * signal is aborted.
   */
  reconnect?: boolean;
  /** Go on from the stored history without input, e.g. after a run was interrupted by a server restart. */
  resume?: boolean;
  /** Limits on what the run and its child runs spend together; unset: the agent's budget, else the tenant's. */
  budget?: MessageInitShape<typeof BudgetSchema>;
  callbacks?: Callbacks;
  /** Aborting it stops the run (its tools are killed) unless detach or reconnect; the send rejects with kind aborted. */
  signal?: AbortSignal;
}

/** FollowOptions say where Agent.follow and Client.follow start and who hears the events. */
export interface FollowOptions {
  /** Stream the events after this seq: a client that saw them up to afterSeq gets the ones it missed. 0: from the first. */
  afterSeq?: bigint | number;
  /** onPermission answers with RespondPermission. */
  callbacks?: Callbacks;
  signal?: AbortSignal;
  /** Attach again from the last event seen when the connection breaks. */
  reconnect?: boolean;
}

/** A change of an agent: the fields UpdateAgent changes. */
export interface AgentChange {
  config?: AgentConfigInit;
  /** The tools it may use (with the mask path "tools"). */
  tools?: string[];
  /** The skills it may use (with the mask path "skills"). */
  skills?: string[];
  allSkills?: boolean;
}

const busyPolicies: Record<Busy, BusyPolicy> = {
  replace: BusyPolicy.REPLACE,
  reject: BusyPolicy.REJECT,
  queue: BusyPolicy.QUEUE,
};

/** startOf is the StartRun of a send. */
function startOf(agentId: string, o: SendOptions): MessageInitShape<typeof StartRunSchema> {
  const ask = o.ask ?? o.callbacks?.onPermission !== undefined;
  return {
    agentId,
    input: toParts(o.input),
    config: o.config,
    history: o.history ? { messages: o.history } : undefined,
    tools: o.tools ? { names: o.tools } : undefined,
    permissionMode: Array.isArray(ask)
      ? PermissionMode.ASK_LISTED
      : ask
        ? PermissionMode.ASK_ALL
        : PermissionMode.ALLOW_ALL,
    askTools: Array.isArray(ask) ? ask : [],
    busyPolicy: o.busy ? busyPolicies[o.busy] : BusyPolicy.UNSPECIFIED,
    onDisconnect: o.detach || o.reconnect ? OnDisconnect.CONTINUE : OnDisconnect.UNSPECIFIED,
    resume: o.resume ?? false,
    budget: o.budget,
  };
}

/** Agent is a handle to one agent on the server (Client.createAgent, Client.agent). */
export class Agent {
  readonly #api: ConnectClient<typeof AgentService>;
  /** The agent's id. */
  readonly id: string;

  constructor(api: ConnectClient<typeof AgentService>, id: string) {
    this.#api = api;
    this.id = id;
  }

  /**
   * send runs a task and resolves with its result (agent-core's agent.send):
   * `send("task")` or `send({ input, callbacks, … })`. Every failure rejects
   * with an AgentcoreError: a model error (its kind), a bad request, the
   * caller's abort (kind aborted).
   */
  send(o: Input | SendOptions): Promise<Result> {
    return this.stream(o).result();
  }

  /**
   * stream runs a task and returns its events to iterate
   * (`for await (const e of agent.stream("task"))`), then `result()`.
   */
  stream(o: Input | SendOptions): RunStream {
    const opts: SendOptions = typeof o === "string" || Array.isArray(o) ? { input: o } : o;
    return new RunStream(this.#api, { send: startOf(this.id, opts) }, opts);
  }

  /** attach follows the agent's latest run (see Client.attach) and resolves with its result. */
  attach(o: FollowOptions = {}): Promise<Result> {
    return this.follow(o).result();
  }

  /** follow is attach's events to iterate. */
  follow(o: FollowOptions = {}): RunStream {
    return new RunStream(this.#api, { attach: { agentId: this.id, afterSeq: BigInt(o.afterSeq ?? 0) } }, o);
  }

  /** stop stops the agent's running send and reports whether one was running; it returns once the run has fully stopped. */
  async stop(call?: CallOptions): Promise<boolean> {
    return (await wrap(this.#api.stop({ agentId: this.id }, call), call)).stopped;
  }

  /** stopRun stops the run runId if it is still the agent's running one, wherever it runs. */
  async stopRun(runId: string, call?: CallOptions): Promise<boolean> {
    return (await wrap(this.#api.stop({ agentId: this.id, runId }, call), call)).stopped;
  }

  /**
   * compact summarises the history now (stopping a running send first) and
   * returns the summary, which the server appended to the history.
   */
  async compact(o: { onCompact?: (e: Event) => void; signal?: AbortSignal } = {}): Promise<string> {
    try {
      let summary: string | undefined;
      for await (const resp of this.#api.compact({ agentId: this.id }, { signal: o.signal })) {
        const e = resp.event;
        if (!e) continue;
        o.onCompact?.(e);
        if (e.kind.case === "compactFinished") summary = e.kind.value.summary;
      }
      if (summary === undefined) throw new AgentcoreError({ code: Code.Unknown, message: "the compaction ended without a summary" });
      return summary;
    } catch (e) {
      throw toError(e, o.signal);
    }
  }

  /** get returns the agent: its config without secrets, state, usage, history length. */
  async get(call?: CallOptions): Promise<AgentInfo> {
    return mustHave((await wrap(this.#api.getAgent({ agentId: this.id }, call), call)).agent);
  }

  /**
   * update changes the agent: with mask, the paths it names (e.g.
   * "config.model", "tools"); without, every field set in change.config is
   * merged (provider replaced whole).
   */
  async update(change: AgentChange, mask: string[] = [], call?: CallOptions): Promise<AgentInfo> {
    const agent = { id: this.id, config: change.config, ...selections(change) };
    const req = { agent, updateMask: mask.length > 0 ? { paths: mask } : undefined };
    return mustHave((await wrap(this.#api.updateAgent(req, call), call)).agent);
  }

  /** delete stops any run, kills its tools and forgets the agent; it reports whether a run was stopped. */
  async delete(call?: CallOptions): Promise<boolean> {
    return (await wrap(this.#api.deleteAgent({ agentId: this.id }, call), call)).stoppedRun;
  }

  /** history returns the agent's whole history (read in pages when it does not fit in one response). */
  async history(call?: CallOptions): Promise<Message[]> {
    return (await this.#readHistory(false, false, call)).messages;
  }

  /**
   * turns returns the history grouped into turns (a model response with its
   * tool calls and their results stay together), as agent-core's History.turns.
   */
  async turns(call?: CallOptions): Promise<Message[][]> {
    const h = await this.#readHistory(true, false, call);
    return h.turns.map((t) => t.filter((i) => i < h.messages.length).map((i) => h.messages[i] as Message));
  }

  /** render returns the history as text, as agent-core's History.render. */
  async render(call?: CallOptions): Promise<string> {
    return (await this.#readHistory(false, true, call)).rendered;
  }

  /** setHistory replaces the history (e.g. restoring it from a database) and returns its length; it fails while a send runs. */
  async setHistory(messages: MessageInit[], call?: CallOptions): Promise<number> {
    return (await wrap(this.#api.setHistory({ agentId: this.id, messages }, call), call)).historyLength;
  }

  /** preview returns what the next model request would hold (with input, if given) and its size in tokens. */
  async preview(input?: Input, call?: CallOptions): Promise<PreviewContextResponse> {
    return wrap(this.#api.previewContext({ agentId: this.id, input: toParts(input) }, call), call);
  }

  /** listRuns lists the agent's runs, newest first. */
  async listRuns(call?: CallOptions): Promise<Run[]> {
    return listRuns(this.#api, { agentId: this.id }, call);
  }

  async #readHistory(
    includeTurns: boolean,
    includeRendered: boolean,
    call?: CallOptions,
  ): Promise<{ messages: Message[]; turns: number[][]; rendered: string }> {
    const messages: Message[] = [];
    const rendered: string[] = [];
    let turns: number[][] = [];
    let pageToken = "";
    do {
      const first = pageToken === "";
      const resp = await wrap(
        this.#api.getHistory({ agentId: this.id, includeTurns: includeTurns && first, includeRendered, pageToken }, call),
        call,
      );
      messages.push(...resp.messages);
      if (first) turns = resp.turns.map((t) => t.messageIndexes);
      if (includeRendered) rendered.push(resp.rendered);
      pageToken = resp.nextPageToken;
    } while (pageToken !== "");
    return { messages, turns, rendered: rendered.join("\n") };
  }
}

/** RunFilter selects runs for Client.listRuns. */
export interface RunFilter {
  /** One agent's runs; empty: every agent's (of the caller's tenant). */
  agentId?: string;
  /** Only the runs in this state; UNSPECIFIED: any. */
  state?: Run["state"];
  /** Stop the list at that many runs, the newest; 0: all of them. */
  max?: number;
}

/** runsPage is how many runs listRuns asks for at a time. */
const runsPage = 1000;

/** listRuns lists runs, newest first, following pages. */
export async function listRuns(api: ConnectClient<typeof AgentService>, f: RunFilter, call?: CallOptions): Promise<Run[]> {
  const out: Run[] = [];
  const max = f.max ?? 0;
  let pageToken = "";
  for (;;) {
    const pageSize = max > 0 ? Math.min(runsPage, max - out.length) : runsPage;
    const resp = await wrap(api.listRuns({ agentId: f.agentId ?? "", state: f.state, pageSize, pageToken }, call), call);
    out.push(...resp.runs);
    if (max > 0 && out.length >= max) return out.slice(0, max);
    if (resp.nextPageToken === "") return out;
    pageToken = resp.nextPageToken;
  }
}

/** selections are an Agent's tool and skill selections from lists of names (unset: left out). */
export function selections(o: { tools?: string[]; skills?: string[]; allSkills?: boolean }) {
  return {
    tools: o.tools ? { names: o.tools } : undefined,
    skills: o.skills || o.allSkills ? { names: o.skills ?? [], all: o.allSkills ?? false } : undefined,
  };
}

/** wrap awaits a call and turns its failure into an AgentcoreError. */
export async function wrap<T>(p: Promise<T>, call?: CallOptions): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw toError(e, call?.signal);
  }
}

/** mustHave returns a response's message, which the server always sets. */
export function mustHave<T>(v: T | undefined): T {
  if (v === undefined) throw new AgentcoreError({ code: Code.Unknown, message: "the server's answer lacks its message" });
  return v;
}
