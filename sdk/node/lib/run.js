'use strict';
// Running commands inside a call, their output streamed live.

const fs = require('fs');
const os = require('os');
const { spawn } = require('child_process');
const { ToolError } = require('./result');
const { STDOUT, STDERR } = require('./server');

// How long run waits, once the command has exited, for descendants that
// still hold its stdout or stderr open.
const WAIT_DELAY_MS = 500;

/**
 * Runs a command to completion inside a call and resolves to its exit code
 * (negative: killed by that signal), like the Go SDK's tool.Run.
 *
 * Its stdout and stderr stream live as the call's output, tagged stdout and
 * stderr, and all of it has been sent when the promise resolves, so it
 * arrives before the call's result. Standard input is /dev/null. options go
 * to child_process.spawn (cwd, env, shell...).
 *
 * The command stays in the plugin's process group, so the host's kill (a
 * timeout, a stopped call) takes it and its children along. When the call
 * is stopped, run kills the command and all its descendants at once and
 * rejects with a ToolError.
 *
 * When the host traces the call (call.traceContext holds a valid
 * traceparent), the command gets it as TRACEPARENT and TRACESTATE in its
 * environment (options.env, else the plugin's), the OpenTelemetry
 * convention for processes, so a traced command joins the trace.
 */
function run(call, command, args = [], options = {}) {
  return new Promise((resolve, reject) => {
    const env = traceEnv(call && call.traceContext, options.env);
    const spawnOptions = { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: false };
    if (env) spawnOptions.env = env;
    const child = spawn(command, args, spawnOptions);
    const forward = (stream, fallback) => (data) => {
      if (call && typeof call.send === 'function') call.send(stream, data);
      else fallback.write(data);
    };
    child.stdout.on('data', forward(STDOUT, process.stdout));
    child.stderr.on('data', forward(STDERR, process.stderr));
    let killed = false;
    const onAbort = () => {
      killed = true;
      killTree(child.pid);
    };
    const signal = call && call.signal;
    if (signal) {
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    }
    let timer = null;
    const finish = (code, sig) => {
      clearTimeout(timer);
      if (signal) signal.removeEventListener('abort', onAbort);
      if (killed) reject(new ToolError(`command ${command} killed: the call was stopped`));
      else resolve(code !== null ? code : -(os.constants.signals[sig] || 1));
    };
    child.on('error', (e) => {
      if (signal) signal.removeEventListener('abort', onAbort);
      reject(e);
    });
    child.on('exit', (code, sig) => {
      // 'close' follows once the pipes are read to their end; a descendant
      // holding them open gets WAIT_DELAY_MS.
      timer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, sig);
      }, WAIT_DELAY_MS);
      child.once('close', () => finish(code, sig));
    });
  });
}

// A W3C traceparent: version, trace id, parent id, flags; a later version
// may add fields after a dash.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** Reports whether tp is a W3C traceparent a tracer would accept. */
function validTraceparent(tp) {
  const m = TRACEPARENT.exec(typeof tp === 'string' ? tp : '');
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5])) return false;
  return !/^0+$/.test(m[2]) && !/^0+$/.test(m[3]);
}

/**
 * The environment of a command started in a traced call: env (absent: the
 * plugin's) with TRACEPARENT and TRACESTATE set from traceContext; null
 * when the call carries no valid traceparent (the environment stays as it is).
 */
function traceEnv(traceContext, env) {
  const tc = traceContext || {};
  if (!validTraceparent(tc.traceparent)) return null;
  const out = { ...(env || process.env) };
  delete out.TRACEPARENT;
  delete out.TRACESTATE;
  out.TRACEPARENT = tc.traceparent;
  if (tc.tracestate) out.TRACESTATE = tc.tracestate;
  return out;
}

/**
 * Kills root and all its descendants: it stops the tree first, level by
 * level, so that nothing forks away while it is being killed, then kills
 * every stopped process.
 */
function killTree(root) {
  const stopped = new Set();
  for (let i = 0; i < 16; i++) {
    let fresh = 0;
    for (const pid of tree(root)) {
      if (!stopped.has(pid)) {
        signal(pid, 'SIGSTOP');
        stopped.add(pid);
        fresh++;
      }
    }
    if (fresh === 0) break;
  }
  for (const pid of stopped) signal(pid, 'SIGKILL');
  signal(root, 'SIGKILL');
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

// tree returns root and its descendants, read from /proc.
function tree(root) {
  const children = new Map();
  let entries = [];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [root];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${e}/stat`, 'latin1');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/);
    const ppid = Number(f[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(e));
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i]) || []));
  return out;
}

module.exports = { run, killTree, traceEnv, validTraceparent };
