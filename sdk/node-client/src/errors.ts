import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "./gen/agentcore/v1/errors_pb";
import { ErrorKind } from "./gen/agentcore/v1/event_pb";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb";

export { Code };

/**
 * The model error kinds, as agent-core names them: the names of the proto's
 * ErrorKind enum, lower-cased.
 */
export type Kind = Lowercase<Exclude<keyof typeof ErrorKind, "UNSPECIFIED" | number>>;

/** Every model error kind, from the proto's ErrorKind enum. */
export const kinds: readonly Kind[] = Object.freeze(
  Object.keys(ErrorKind)
    .filter((k) => Number.isNaN(Number(k)) && k !== "UNSPECIFIED")
    .map((k) => k.toLowerCase() as Kind),
);

/**
 * Reason is a reason an agentcore server sends in google.rpc.ErrorInfo: the
 * name of a value of the proto's ErrorReason enum without its ERROR_REASON_
 * prefix, which is how the wire says it (docs/errors.md lists them with
 * their codes and what a client does; pb.ErrorReason has each one's doc).
 */
export type Reason = Exclude<keyof typeof ErrorReason, "UNSPECIFIED">;

/**
 * Reason holds every reason, each under its own name, made from the
 * generated ErrorReason enum: `err.reason === Reason.AGENT_BUSY`. A reason
 * this list lacks comes from a newer server: act on err.code.
 */
export const Reason: { readonly [R in Reason]: R } = Object.freeze(
  Object.fromEntries(
    Object.keys(ErrorReason)
      .filter((k) => Number.isNaN(Number(k)) && k !== "UNSPECIFIED")
      .map((k) => [k, k]),
  ) as { [R in Reason]: R },
);

/** kindOfReason is the model error kind whose upper-cased name is reason, or "" when it is not one. */
function kindOfReason(reason: string): Kind | "" {
  const k = reason.toLowerCase();
  return (kinds as readonly string[]).includes(k) ? (k as Kind) : "";
}

/** One bad field of a request (google.rpc.BadRequest). */
export interface FieldViolation {
  /** The field's path in the request, e.g. `agent.config.max_steps` or `messages[3]`. */
  field: string;
  description: string;
}

/** What AgentcoreError's constructor takes. */
export interface ErrorInit {
  code: Code;
  message: string;
  reason?: string;
  kind?: Kind | "";
  retryable?: boolean;
  status?: number;
  metadata?: Record<string, string>;
  fields?: FieldViolation[];
  retryDelayMs?: number;
  connectionLost?: boolean;
  cause?: unknown;
}

/**
 * AgentcoreError is every error a call of this client throws (a send's
 * promise rejects with it, an iteration of its events throws it).
 */
export class AgentcoreError extends Error {
  override name = "AgentcoreError";
  /** The gRPC status code (Code.NotFound is 5, as in every gRPC library). */
  readonly code: Code;
  /**
   * The model error kind, as agent-core names it (auth, limit, timeout,
   * server, network, request, unknown, aborted); "" for an error that is not
   * a model error (a bad request, an agent not found…). A cancelled call is
   * aborted.
   */
  readonly kind: Kind | "";
  /**
   * The google.rpc.ErrorInfo reason: one of Reason's values (AGENT_NOT_FOUND,
   * NO_MODEL, AGENT_BUSY…, the kind upper-cased for a model error), compared
   * as `err.reason === Reason.AGENT_BUSY`; "" when the status carries none (a
   * broken connection, a deadline of this client).
   */
  readonly reason: Reason | (string & {});
  /** Whether the same request may succeed later (model errors). */
  readonly retryable: boolean;
  /** The model service's HTTP status, 0 if none. */
  readonly status: number;
  /** The ErrorInfo metadata (kind, retryable, status, code, cause…). */
  readonly metadata: Readonly<Record<string, string>>;
  /** The bad fields of an INVALID_ARGUMENT. */
  readonly fields: readonly FieldViolation[];
  /** How long the model service asked to wait before a retry (google.rpc.RetryInfo), when it did. */
  readonly retryDelayMs: number | undefined;
  /** The server's message, without this class's prefix. */
  readonly rawMessage: string;
  /**
   * The call failed because the connection broke or could not be made, not
   * with a status of the server (code UNAVAILABLE, reason ""). A send with
   * reconnect attaches again after it.
   */
  readonly connectionLost: boolean;

  constructor(init: ErrorInit) {
    const kind = init.kind ?? "";
    super(`agentcore: ${Code[init.code] ?? init.code}${kind !== "" ? ` (${kind})` : ""}: ${init.message}`, {
      cause: init.cause,
    });
    this.code = init.code;
    this.kind = kind;
    this.reason = init.reason ?? "";
    this.retryable = init.retryable ?? false;
    this.status = init.status ?? 0;
    this.metadata = Object.freeze({ ...init.metadata });
    this.fields = Object.freeze([...(init.fields ?? [])]);
    this.retryDelayMs = init.retryDelayMs;
    this.rawMessage = init.message;
    this.connectionLost = init.connectionLost ?? false;
  }
}

/**
 * The codes Connect gives a call that failed on its way: UNAVAILABLE (a
 * refused connection, a host not found), CANCELLED (a stream its closing
 * connection reset), ABORTED (ECONNRESET), INTERNAL (a TLS handshake that
 * failed, a stream that ended without a status).
 */
const brokenCodes: readonly Code[] = [Code.Unavailable, Code.Canceled, Code.Aborted, Code.Internal];

/**
 * toError turns anything a call threw into an AgentcoreError (one stays as
 * it is). signal is the call's: when it was aborted, the error is the abort.
 */
export function toError(e: unknown, signal?: AbortSignal): AgentcoreError {
  if (e instanceof AgentcoreError) return e;
  if (signal?.aborted) return aborted(signal);
  const ce = ConnectError.from(e);
  // A status of the server comes in the trailers (or trailers-only headers),
  // which Connect keeps as the error's metadata; without one the call failed
  // on its way, which gRPC's other clients call UNAVAILABLE, as this one does.
  const connectionLost = !ce.metadata.has("grpc-status") && brokenCodes.includes(ce.code);
  let reason = "";
  let metadata: Record<string, string> = {};
  for (const info of ce.findDetails(ErrorInfoSchema)) {
    reason = info.reason;
    metadata = { ...info.metadata };
  }
  const fields: FieldViolation[] = [];
  for (const br of ce.findDetails(BadRequestSchema)) {
    for (const f of br.fieldViolations) fields.push({ field: f.field, description: f.description });
  }
  let retryDelayMs: number | undefined;
  for (const ri of ce.findDetails(RetryInfoSchema)) {
    if (ri.retryDelay) retryDelayMs = Number(ri.retryDelay.seconds) * 1000 + Math.round(ri.retryDelay.nanos / 1e6);
  }
  const code = connectionLost ? Code.Unavailable : ce.code;
  let kind = kindOfReason(reason);
  if (kind === "" && code === Code.Canceled) kind = "aborted";
  return new AgentcoreError({
    code,
    message: ce.rawMessage,
    reason,
    kind,
    retryable: metadata["retryable"] === "true",
    status: Number(metadata["status"] ?? 0) || 0,
    metadata,
    fields,
    retryDelayMs,
    connectionLost,
    cause: e,
  });
}

/** aborted is the error of a call its caller cancelled. */
export function aborted(signal: AbortSignal | undefined): AgentcoreError {
  const why = signal?.reason;
  return new AgentcoreError({
    code: Code.Canceled,
    kind: "aborted",
    reason: "ABORTED",
    message: why instanceof Error ? why.message : why !== undefined ? String(why) : "the call was cancelled",
    cause: why,
  });
}

/**
 * transient reports whether e is a broken connection or a server going away
 * rather than an answer of the server (whose errors carry an ErrorInfo
 * reason): a lost connection, UNAVAILABLE without a reason (as a proxy in
 * between says it), or SHUTTING_DOWN (it comes back, or another replica
 * resumes the run).
 */
export function transient(e: AgentcoreError): boolean {
  return e.connectionLost || (e.code === Code.Unavailable && (e.reason === "" || e.reason === "SHUTTING_DOWN"));
}
