// Type declarations of @agentcore/tool: write agentcore tool plugins in Node.js.
// The protocol: docs/plugin-protocol.md.

/// <reference types="node" />

/** JSON Schema of a tool's input: an object schema. */
export interface JSONSchema {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean | Record<string, unknown>;
  description?: string;
  [keyword: string]: unknown;
}

/**
 * Resources a tool asks the host for, for one call's whole process tree.
 * The host caps them by its own maximums; 0 or absent means the host's default.
 */
export interface Limits {
  /** Memory of the process tree, in bytes. */
  memoryBytes?: number;
  /** Number of processes (and threads) in the tree. */
  maxProcesses?: number;
  /** CPU time of the call (user plus system), in milliseconds. */
  cpuTimeMs?: number;
  /** Open file descriptors per process. */
  maxOpenFiles?: number;
}

/** Options of a tool. */
export interface ToolOptions {
  /** JSON Schema of the input; default: any object. */
  schema?: JSONSchema | string;
  /** The host kills a call that runs longer; absent or 0: no limit. */
  timeoutMs?: number;
  /** Hint: the tool does not change its environment. */
  readOnly?: boolean;
  /** Hint: repeating a call with the same input has no further effect. */
  idempotent?: boolean;
  /** Resources the tool asks for. */
  limits?: Limits;
}

/** The output streams of a call. */
export type OutputStream = 'OUTPUT_STREAM_OUTPUT' | 'OUTPUT_STREAM_STDOUT' | 'OUTPUT_STREAM_STDERR';

/** The running call, handed to a tool function as its second argument. */
export declare class Call {
  /** The tool's name. */
  readonly tool: string;
  /** The model's tool-call id, for logs; may be empty. */
  readonly callId: string;
  /**
   * The same for every execution of this call, also when agent-server runs it
   * again after a crash cut it off ("RUN/CALL"): a tool with side effects
   * answers a key it has seen with its first result. Empty outside a run.
   */
  readonly idempotencyKey: string;
  /** 1 for the call's first execution, 2 or more when run again after a crash; 0 outside a run. */
  readonly attempt: number;
  /**
   * The W3C trace context ("traceparent", "tracestate") of the host's span of
   * this call, empty when the host is not tracing; commands started with run()
   * get it as TRACEPARENT and TRACESTATE.
   */
  readonly traceContext: Record<string, string>;
  /** Aborted when the host stops the call (the host also kills the process group). */
  readonly signal: AbortSignal;
  /** Whether the host stopped the call. */
  readonly cancelled: boolean;
  /** Sends a piece of live output (stream "output"); after the call has returned it does nothing. */
  emit(text: string): void;
  /** Sends a chunk of the given stream. */
  send(stream: OutputStream, data: Uint8Array): void;
}

/** One block of multimodal output: build parts with text, image, file and fileUrl. */
export declare class Part {
  readonly type: 'text' | 'file';
  readonly text?: string;
  readonly mediaType?: string;
  readonly data?: Buffer;
  readonly url?: string;
  readonly filename?: string;
}

/** An ordered list of parts, returned as one result. */
export declare class Content extends Array<Part> {}

/** A result with flags, for when a plain value is not enough. */
export declare class Result {
  constructor(output: unknown, flags?: { stop?: boolean; error?: boolean });
  output: unknown;
  /** End the agent's loop after this round (reason tool-stop). */
  stop: boolean;
  /** Mark the result as a failure that output describes. */
  error: boolean;
}

/** JSON text sent as it is (it must be valid JSON). */
export declare class RawJSON {
  constructor(json: string);
  readonly json: string;
}

/** A failure the model should read as it is: an error result whose text is the message. */
export declare class ToolError extends Error {}

/** What a tool function may return. */
export type ToolValue = string | Part | Part[] | Content | Result | RawJSON | unknown;

/** The body of a tool. */
export type ToolFn<In> = (input: In, call: Call) => ToolValue | Promise<ToolValue>;

/** A tool, made by tool(). */
export interface Tool<In = Record<string, unknown>> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JSONSchema;
  readonly fn: ToolFn<In>;
  readonly timeoutMs: number;
  readonly readOnly: boolean;
  readonly idempotent: boolean;
  readonly limits: Limits | null;
}

/** Defines a tool: name (^[a-zA-Z0-9_-]{1,64}$), description for the model, the function, options. */
export declare function tool<In = Record<string, unknown>>(
  name: string,
  description: string,
  fn: ToolFn<In>,
  options?: ToolOptions,
): Tool<In>;

/** Serves tools as a plugin; the process runs until the host kills it. */
export declare function serve(...tools: Tool<any>[]): unknown;

/** Returns a result that ends the agent's loop, with output for the model. */
export declare function Stop(output: unknown): Result;

/** A text part. */
export declare function text(s: string): Part;
/** An image part holding data (e.g. a PNG). */
export declare function image(mediaType: string, data: Uint8Array): Part;
/** A file part holding data. */
export declare function file(mediaType: string, data: Uint8Array, filename?: string): Part;
/** A file part pointing at an https, http or data URL. */
export declare function fileUrl(mediaType: string, url: string, filename?: string): Part;

/**
 * Runs a command inside a call, its stdout and stderr streamed live as the
 * call's output; resolves to its exit code (negative: killed by that signal).
 * Stopping the call kills the command's whole tree and rejects with a ToolError.
 * In a traced call the command gets TRACEPARENT and TRACESTATE.
 */
export declare function run(
  call: Call | null,
  command: string,
  args?: readonly string[],
  options?: import('child_process').SpawnOptions,
): Promise<number>;

/** Kills a process and all its descendants. */
export declare function killTree(pid: number): void;

export declare const MAGIC_COOKIE_KEY: 'AGENTCORE_TOOL_PLUGIN';
export declare const MAGIC_COOKIE_VALUE: 'tool-plugin-v1';
export declare const CORE_PROTOCOL_VERSION: 1;
export declare const APP_PROTOCOL_VERSION: 1;
