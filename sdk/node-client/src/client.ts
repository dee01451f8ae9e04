import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import {
  type CallOptions,
  type Client as ConnectClient,
  Code,
  type Transport,
  createClient,
} from "@connectrpc/connect";
import type { Http2SessionManager } from "@connectrpc/connect-node";
import {
  type Agent as AgentInfo,
  AgentService,
  type AgentToolSchema,
  type DirectToolResult,
  type ListToolsResponse,
  type ReloadToolsResponse,
  type ToolOutputChunk,
} from "./gen/agentcore/v1/agent_service_pb";
import { type BudgetSchema, ElicitationAction } from "./gen/agentcore/v1/event_pb";
import type { Run } from "./gen/agentcore/v1/run_pb";
import { Agent, type AgentConfigInit, type FollowOptions, type RunFilter, listRuns, mustHave, selections, wrap } from "./agent";
import { AgentcoreError, toError } from "./errors";
import type { MessageInit } from "./parts";
import { type Decision, type Result, RunStream, reply } from "./run";
import { type DialOptions, connect } from "./transport";

/** Elicited names an answer to an elicitation request. */
export type Elicited = "accept" | "decline" | "cancel";

const elicitationActions = new Map<string, ElicitationAction>([
  ["accept", ElicitationAction.ACCEPT],
  ["decline", ElicitationAction.DECLINE],
  ["cancel", ElicitationAction.CANCEL],
]);

/** AgentOptions describe a new agent (agent-core's Agent.create options). */
export interface AgentOptions {
  /** The agent's id; empty: generated. */
  id?: string;
  /** The model configuration; unset: the server's default profile. */
  config?: AgentConfigInit;
  /** The tools it may use; unset: every server tool. */
  tools?: string[];
  /** The skills it may use; unset: none. allSkills: every one. */
  skills?: string[];
  allSkills?: boolean;
  /** The initial history. */
  history?: MessageInit[];
  /** Other agents it may call as tools: each call starts a child run. */
  agentTools?: MessageInitShape<typeof AgentToolSchema>[];
  /** The default budget of the run trees it starts. */
  budget?: MessageInitShape<typeof BudgetSchema>;
}

/** ExecuteOptions shape a direct tool call. */
export interface ExecuteOptions {
  /** Cut text output longer than this many characters from the middle; 0: the server's limit. */
  limit?: number;
  /** Gets the tool's live output. */
  onOutput?: (chunk: ToolOutputChunk) => void;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Client talks to one agent-server over gRPC (HTTP/2): Client.dial(target)
 * connects, or new Client(transport) uses a Connect transport the caller made.
 */
export class Client {
  /** The generated client, for what this one does not wrap. */
  readonly api: ConnectClient<typeof AgentService>;
  readonly #session: Http2SessionManager | undefined;

  constructor(transport: Transport, session?: Http2SessionManager) {
    this.api = createClient(AgentService, transport);
    this.#session = session;
  }

  /**
   * dial connects to target: `host:port`, or `unix:PATH` for a unix socket.
   * Without options.tls the connection is plaintext, as for a sidecar on
   * localhost or a unix socket. The connection is made at the first call.
   */
  static dial(target: string, options: DialOptions = {}): Client {
    const c = connect(target, options);
    return new Client(c.transport, c.session);
  }

  /** close closes the connection dial made; calls still running fail. */
  close(): void {
    this.#session?.abort();
  }

  /** createAgent creates an agent and returns its handle. */
  async createAgent(o: AgentOptions = {}, call?: CallOptions): Promise<Agent> {
    const agent = { config: o.config, ...selections(o), agentTools: o.agentTools ?? [], budget: o.budget };
    const resp = await wrap(this.api.createAgent({ agentId: o.id ?? "", agent, history: o.history ?? [] }, call), call);
    return new Agent(this.api, mustHave(resp.agent).id);
  }

  /** agent returns a handle to an existing agent (nothing is asked of the server). */
  agent(id: string): Agent {
    return new Agent(this.api, id);
  }

  /** listAgents lists every agent (of the caller's tenant), following pages. */
  async listAgents(call?: CallOptions): Promise<AgentInfo[]> {
    const out: AgentInfo[] = [];
    let pageToken = "";
    do {
      const resp = await wrap(this.api.listAgents({ pageSize: 1000, pageToken }, call), call);
      out.push(...resp.agents);
      pageToken = resp.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  /** listTools lists the server's tools and skills. */
  listTools(call?: CallOptions): Promise<ListToolsResponse> {
    return wrap(this.api.listTools({}, call), call);
  }

  /** reloadTools asks the server to rescan its tools and skills (an admin's call when the server has tenants). */
  reloadTools(call?: CallOptions): Promise<ReloadToolsResponse> {
    return wrap(this.api.reloadTools({}, call), call);
  }

  /**
   * executeTool runs one tool directly (agent-core's Agent.tool.execute) with
   * input, a JSON object, and resolves with its result; a tool that failed
   * resolves too, with result.error set.
   */
  async executeTool(name: string, input: JsonObject = {}, o: ExecuteOptions = {}): Promise<DirectToolResult> {
    try {
      const stream = this.api.executeTool(
        { name, input, limit: BigInt(o.limit ?? 0) },
        { signal: o.signal, timeoutMs: o.timeoutMs },
      );
      for await (const resp of stream) {
        const k = resp.kind;
        if (k.case === "output") o.onOutput?.(k.value);
        if (k.case === "result") return k.value;
      }
    } catch (e) {
      throw toError(e, o.signal);
    }
    throw new AgentcoreError({ code: Code.Unknown, message: "the tool's stream ended without a result" });
  }

  /**
   * attach follows a run from the event after afterSeq: the stored events,
   * then the live ones, each once and in order, to the callbacks, until the
   * run ends; it resolves with the result or rejects with the run's error.
   * It works for a run that is live or finished, on this server or another
   * replica. onPermission is answered with RespondPermission.
   */
  attach(runId: string, o: FollowOptions = {}): Promise<Result> {
    return this.follow(runId, o).result();
  }

  /** follow is attach's events to iterate. */
  follow(runId: string, o: FollowOptions = {}): RunStream {
    return new RunStream(this.api, { attach: { runId, afterSeq: BigInt(o.afterSeq ?? 0) } }, o);
  }

  /**
   * respondPermission answers a run's permission request from any
   * connection, also after the run's Send stream is gone.
   */
  async respondPermission(runId: string, toolCallId: string, d: Decision | boolean, call?: CallOptions): Promise<void> {
    await wrap(this.api.respondPermission({ runId, toolCallId, ...reply(d) }, call), call);
  }

  /**
   * respondElicitation answers a run's elicitation request (Callbacks.onElicitation)
   * from any connection: "accept" with the form's values, "decline" or
   * "cancel". It resolves to the values the tool got (the schema's defaults
   * filled into the fields content leaves out).
   */
  async respondElicitation(
    runId: string,
    elicitationId: string,
    action: Elicited | ElicitationAction,
    content?: JsonObject,
    call?: CallOptions,
  ): Promise<JsonObject> {
    const a = typeof action === "string" ? elicitationActions.get(action) : action;
    if (a === undefined) throw new TypeError(`agentcore: an elicitation's answer is "accept", "decline" or "cancel", not ${JSON.stringify(action)}`);
    const resp = await wrap(this.api.respondElicitation({ runId, elicitationId, action: a, content }, call), call);
    return resp.content ?? {};
  }

  /** getRun returns one run: its state, result or error, pending permission requests. */
  async getRun(runId: string, call?: CallOptions): Promise<Run> {
    return mustHave((await wrap(this.api.getRun({ runId }, call), call)).run);
  }

  /** listRuns lists runs, newest first, following pages: every agent's, or as the filter selects. */
  listRuns(f: RunFilter = {}, call?: CallOptions): Promise<Run[]> {
    return listRuns(this.api, f, call);
  }
}
