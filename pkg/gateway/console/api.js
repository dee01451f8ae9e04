// The console's only way to the server: the public HTTP API (see
// /openapi.json). The bearer token is asked for once, when a call answers
// 401, and kept in this tab's session storage; it is never shown.

const TOKEN_KEY = 'agentcore.token';
// USER_KEY holds the user the console acts for (x-agentcore-user), if any.
const USER_KEY = 'agentcore.user';

/** An error answer of the API: its google.rpc.Status, read. */
export class APIError extends Error {
  constructor(httpStatus, st) {
    super(st.message || `HTTP ${httpStatus}`);
    this.httpStatus = httpStatus;
    this.code = st.code ?? 0;
    this.reason = '';
    this.metadata = {};
    this.violations = [];
    for (const d of st.details || []) {
      if (d['@type']?.endsWith('google.rpc.ErrorInfo')) {
        this.reason = d.reason;
        this.metadata = d.metadata || {};
      } else if (d['@type']?.endsWith('google.rpc.BadRequest')) {
        this.violations = d.fieldViolations || [];
      }
    }
  }
}

let askToken = null;

/** setTokenPrompt sets the function asked for a token when a call answers 401. */
export function setTokenPrompt(fn) {
  askToken = fn;
}

export function hasToken() {
  return sessionStorage.getItem(TOKEN_KEY) !== null;
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** getUser is the user the console's calls act for ('' for the tenant). */
export function getUser() {
  return sessionStorage.getItem(USER_KEY) || '';
}

/** setUser sets the user the console's calls act for ('' for the tenant). */
export function setUser(user) {
  if (user) sessionStorage.setItem(USER_KEY, user);
  else sessionStorage.removeItem(USER_KEY);
}

async function errorOf(resp) {
  let st = {message: `${resp.status} ${resp.statusText}`};
  try {
    st = await resp.json();
  } catch {
    // not a google.rpc.Status: keep the HTTP status line
  }
  return new APIError(resp.status, st);
}

// call sends one request; on 401 it asks for the token and tries again.
async function call(method, path, body, signal) {
  for (;;) {
    const headers = {};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = `Bearer ${token}`;
    if (getUser()) headers['X-Agentcore-User'] = getUser();
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const resp = await fetch(path, {
      method, headers, signal, cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (resp.ok) return resp;
    const err = await errorOf(resp);
    if (resp.status === 401 && askToken) {
      const next = await askToken(token ? 'The token was not accepted.' : '');
      if (next) {
        sessionStorage.setItem(TOKEN_KEY, next);
        continue;
      }
    }
    throw err;
  }
}

async function json(method, path, body) {
  return (await call(method, path, body)).json();
}

export const get = (path) => json('GET', path);
export const post = (path, body = {}) => json('POST', path, body);
export const put = (path, body) => json('PUT', path, body);
export const patch = (path, body) => json('PATCH', path, body);
export const del = (path) => json('DELETE', path);

/** An event of a stream: its id (a run event's seq), name and JSON data. */
export class StreamEvent {
  constructor(id, name, data) {
    this.id = id;
    this.name = name;
    this.data = data;
  }
}

/**
 * stream calls a streaming route and hands each server-sent event to onEvent
 * as it arrives; it resolves when the stream ends. Aborting signal ends the
 * call (for a send without on_disconnect CONTINUE, that stops the run).
 */
export async function stream(method, path, body, onEvent, signal) {
  const resp = await call(method, path, body, signal);
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let id = '';
  let name = '';
  let data = [];
  for (;;) {
    const {value, done} = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      let line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length) onEvent(new StreamEvent(id, name || 'message', JSON.parse(data.join('\n'))));
        name = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue; // a comment: keepalive
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let v = colon < 0 ? '' : line.slice(colon + 1);
      if (v.startsWith(' ')) v = v.slice(1);
      if (field === 'data') data.push(v);
      else if (field === 'id') id = v;
      else if (field === 'event') name = v;
    }
  }
}

/** path builds an API path, escaping each variable part. */
export function path(strings, ...parts) {
  return strings.reduce((out, s, i) => out + s + (i < parts.length ? encodeURIComponent(parts[i]) : ''), '');
}
