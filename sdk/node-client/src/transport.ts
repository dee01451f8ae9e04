import * as net from "node:net";
import type * as http2 from "node:http2";
import type * as tls from "node:tls";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";

/** How Client.dial connects. */
export interface DialOptions {
  /** Sent as `authorization: Bearer <token>` with every call (over TLS, a unix socket or plaintext alike). */
  token?: string;
  /**
   * Connect with TLS: `true` for the system's roots, or the options of Node's
   * `tls.connect` (`ca`, and `cert` with `key` for mutual TLS; `servername`).
   * Without it the connection is plaintext, as for a sidecar on localhost or a unix socket.
   */
  tls?: true | tls.ConnectionOptions;
  /** More metadata sent with every call. */
  headers?: Record<string, string>;
  /** Interceptors of every call (Connect's), after the token's. */
  interceptors?: Interceptor[];
  /**
   * Ping the server after this long without a frame, and close the connection
   * when it does not answer within pingTimeoutMs: a dead peer is found while a
   * long run streams nothing. Default 30 s; 0 turns pings off.
   */
  pingIntervalMs?: number;
  /** How long a ping may go unanswered. Default 15 s. */
  pingTimeoutMs?: number;
}

/** A target parsed: the URL Connect calls and, for a unix socket, its path. */
export interface Target {
  baseUrl: string;
  socket?: string;
}

/**
 * parseTarget reads a gRPC target as the Go client takes it: `host:port`,
 * `unix:PATH` or `unix:///PATH` (a unix socket), or an `http://` or
 * `https://` URL.
 */
export function parseTarget(target: string, secure: boolean): Target {
  const scheme = secure ? "https" : "http";
  if (target.startsWith("unix:")) {
    let path = target.slice("unix:".length);
    if (path.startsWith("//")) path = path.slice(2); // unix:///abs/path
    if (path === "") throw new Error(`agentcore: target ${JSON.stringify(target)} names no socket`);
    return { baseUrl: `${scheme}://localhost`, socket: path };
  }
  if (/^https?:\/\//.test(target)) return { baseUrl: target.replace(/\/+$/, "") };
  if (target === "" || /[/\s]/.test(target)) {
    throw new Error(`agentcore: target ${JSON.stringify(target)} is not host:port, unix:PATH or a URL`);
  }
  return { baseUrl: `${scheme}://${target}` };
}

/** A transport with the session manager that owns its connection. */
export interface Connection {
  transport: Transport;
  session: Http2SessionManager;
}

/** connect makes the HTTP/2 gRPC transport of a target. */
export function connect(target: string, o: DialOptions): Connection {
  const t = parseTarget(target, o.tls !== undefined);
  const node: http2.SecureClientSessionOptions = o.tls === true || o.tls === undefined ? {} : { ...o.tls };
  if (t.socket !== undefined) {
    const path = t.socket;
    node.createConnection = () => net.connect(path);
  }
  const session = new Http2SessionManager(
    t.baseUrl,
    {
      pingIntervalMs: o.pingIntervalMs === 0 ? undefined : (o.pingIntervalMs ?? 30_000),
      pingTimeoutMs: o.pingTimeoutMs ?? 15_000,
    },
    node,
  );
  const interceptors: Interceptor[] = [];
  const headers = { ...o.headers };
  if (o.token !== undefined && o.token !== "") headers["authorization"] = `Bearer ${o.token}`;
  if (Object.keys(headers).length > 0) {
    interceptors.push((next) => (req) => {
      for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
      return next(req);
    });
  }
  interceptors.push(...(o.interceptors ?? []));
  const transport = createGrpcTransport({ baseUrl: t.baseUrl, sessionManager: session, interceptors });
  return { transport, session };
}
