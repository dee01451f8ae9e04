'use strict';
// Serving tools as a plugin: the go-plugin handshake and ToolPluginService.

const os = require('os');
const path = require('path');
const crypto = require('crypto');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ToolError, errorResult, toResult } = require('./result');
const { check } = require('./tool');

/** The go-plugin handshake shared with the host (proto/agentcore/plugin/v1/handshake.go). */
const MAGIC_COOKIE_KEY = 'AGENTCORE_TOOL_PLUGIN';
const MAGIC_COOKIE_VALUE = 'tool-plugin-v1';
const CORE_PROTOCOL_VERSION = 1;
const APP_PROTOCOL_VERSION = 1;

const OUTPUT = 'OUTPUT_STREAM_OUTPUT';
const STDOUT = 'OUTPUT_STREAM_STDOUT';
const STDERR = 'OUTPUT_STREAM_STDERR';

function loadService() {
  const def = protoLoader.loadSync('agentcore/plugin/v1/plugin.proto', {
    includeDirs: [path.join(__dirname, '..', 'proto')],
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(def).agentcore.plugin.v1.ToolPluginService.service;
}

/** The running call, handed to a tool function as its second argument. */
class Call {
  constructor(req, write) {
    /** The tool's name. */
    this.tool = req.tool || '';
    /** The model's tool-call id, for logs; may be empty. */
    this.callId = req.callId || '';
    /**
     * The same for every execution of this call, also when agent-server runs
     * it again after a crash cut it off ("RUN/CALL"). A tool with side
     * effects keeps the keys it acted on and answers a key it has seen with
     * its first result, so that its effect happens once. Empty outside a run.
     */
    this.idempotencyKey = req.idempotencyKey || '';
    /**
     * 1 for the call's first execution, 2 or more when agent-server runs it
     * again after a crash (an earlier one may or may not have had its
     * effect); 0 outside a run.
     */
    this.attempt = Number(req.attempt || 0);
    /**
     * The W3C trace context ("traceparent", "tracestate") of the host's span
     * of this call (execute_tool), empty when the host is not tracing. With
     * OpenTelemetry, start the tool's spans in
     * propagation.extract(context.active(), call.traceContext); commands
     * started with run() get it as TRACEPARENT and TRACESTATE.
     */
    this.traceContext = { ...(req.traceContext || {}) };
    this._abort = new AbortController();
    /** Aborted when the host stops the call (the host also kills the process group). */
    this.signal = this._abort.signal;
    this._write = write;
    this._done = false;
  }

  /** Whether the host stopped the call. */
  get cancelled() {
    return this.signal.aborted;
  }

  /** Sends a piece of live output (stream "output"); after the call has returned it does nothing. */
  emit(text) {
    this.send(OUTPUT, Buffer.from(String(text), 'utf8'));
  }

  /** Sends a chunk of the given stream (OUTPUT_STREAM_STDOUT, ...). */
  send(stream, data) {
    if (this._done || !data || data.length === 0) return;
    this._write({ output: { stream, data: Buffer.from(data) } });
  }

  _finish(result) {
    this._done = true;
    this._write({ result });
  }
}

class Plugin {
  constructor(tools) {
    this.tools = new Map(tools.map((t) => [t.name, t]));
    this.names = [...this.tools.keys()].sort();
    this.specs = tools.map(spec);
    this.current = null; // the running call: what the process writes goes to it
    this.queue = Promise.resolve(); // one call at a time
  }

  describe(rpc, callback) {
    callback(null, { tools: this.specs });
  }

  execute(rpc) {
    const calls = [];
    rpc.on('cancelled', () => calls.forEach((c) => c._abort.abort()));
    this.enqueue(rpc.request, (msg) => rpc.write(msg), calls).then(() => rpc.end());
  }

  session(rpc) {
    const calls = [];
    rpc.on('cancelled', () => calls.forEach((c) => c._abort.abort()));
    let last = Promise.resolve();
    rpc.on('data', (msg) => {
      if (!msg.execute) {
        rpc.destroy({ code: grpc.status.INVALID_ARGUMENT, details: 'session message without a call' });
        return;
      }
      last = this.enqueue(msg.execute, (out) => rpc.write({ execute: out }), calls);
    });
    rpc.on('end', () => last.then(() => rpc.end()));
  }

  enqueue(req, write, calls) {
    const run = () => this.serveCall(req, write, calls);
    this.queue = this.queue.then(run, run);
    return this.queue;
  }

  async serveCall(req, write, calls) {
    const call = new Call(req, write);
    calls.length = 0;
    calls.push(call);
    this.current = call;
    let res;
    try {
      res = await this.run(call, req);
    } catch (e) {
      res = errorResult(`tool ${JSON.stringify(req.tool)} failed: ${e && e.message}`);
    }
    this.current = null;
    call._finish(res);
  }

  async run(call, req) {
    const t = this.tools.get(req.tool);
    if (!t) return errorResult(`unknown tool ${JSON.stringify(req.tool)}; this plugin offers: ${this.names.join(', ')}`);
    let input;
    try {
      input = req.inputJson ? JSON.parse(req.inputJson) : {};
    } catch (e) {
      return errorResult(`invalid input for tool ${JSON.stringify(t.name)}: ${e.message}`);
    }
    let value;
    try {
      value = await t.fn(input, call);
    } catch (e) {
      if (e instanceof ToolError) return errorResult(e.message);
      const kind = e && e.name ? e.name : typeof e;
      return errorResult(`tool ${JSON.stringify(t.name)} threw ${kind}: ${e && e.message !== undefined ? e.message : String(e)}\n\n${toolStack(e)}`);
    }
    return toResult(value);
  }
}

// toolStack keeps the frames of an error's stack that belong to the tool.
function toolStack(e) {
  const stack = e && typeof e.stack === 'string' ? e.stack.split('\n').slice(1) : [];
  const kept = [];
  for (const line of stack) {
    if (line.includes(__dirname)) break;
    kept.push(line);
  }
  return kept.join('\n').trimEnd();
}

function duration(ms) {
  const nanos = Math.round(ms * 1e6);
  return { seconds: String(Math.floor(nanos / 1e9)), nanos: nanos % 1e9 };
}

function spec(t) {
  const s = {
    name: t.name,
    description: t.description,
    inputSchemaJson: JSON.stringify(t.inputSchema),
    hints: { readOnly: t.readOnly, idempotent: t.idempotent },
  };
  if (t.timeoutMs > 0) s.timeout = duration(t.timeoutMs);
  if (t.limits) {
    const l = t.limits;
    s.limits = {
      memoryBytes: String(l.memoryBytes || 0),
      maxProcesses: l.maxProcesses || 0,
      maxOpenFiles: l.maxOpenFiles || 0,
    };
    if (l.cpuTimeMs > 0) s.limits.cpuTime = duration(l.cpuTimeMs);
  }
  return s;
}

const raw = (x) => x;
function rawMethod(fullPath) {
  return {
    path: fullPath,
    requestStream: false,
    responseStream: false,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  };
}

// captureStdio routes process.stdout and process.stderr writes (console.log,
// console.error...) to the running call, tagged stdout and stderr; between
// calls they go to the host's stderr, its logs. It returns the original
// stdout writer, for the handshake line. Child processes must be run with
// run() (or have their output piped): their own descriptors are the host's.
function captureStdio(plugin) {
  const hostOut = process.stdout.write.bind(process.stdout);
  const hostErr = process.stderr.write.bind(process.stderr);
  const hook = (stream) =>
    function write(chunk, encoding, cb) {
      if (typeof encoding === 'function') {
        cb = encoding;
        encoding = undefined;
      }
      const data = typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : Buffer.from(chunk);
      const call = plugin.current;
      if (call && !call._done) call.send(stream, data);
      else hostErr(data);
      if (typeof cb === 'function') process.nextTick(cb);
      return true;
    };
  process.stdout.write = hook(STDOUT);
  process.stderr.write = hook(STDERR);
  return { hostOut, hostErr };
}

// leadsGroup reports whether this process leads its process group, as the host starts it.
function leadsGroup() {
  try {
    process.kill(-process.pid, 0);
    return true;
  } catch {
    return false;
  }
}

function socketPath() {
  const dir = process.env.PLUGIN_UNIX_SOCKET_DIR || os.tmpdir();
  return path.join(dir, `plugin${crypto.randomBytes(6).toString('hex')}`);
}

/**
 * Serves tools as a plugin; the process then runs until the host kills it.
 * Call it from the script's main code.
 *
 * What a tool function returns (or its promise resolves to) becomes the
 * result handed to the model: a string is text; a Content (an array of
 * parts), an array of parts or a part is content; a Result (or Stop(...))
 * adds flags; a RawJSON is sent as it is; anything else is serialised to
 * JSON (undefined is null). A thrown ToolError is an error result with its
 * message; any other exception, an invalid part and a value that cannot be
 * serialised are error results too, and the plugin keeps serving.
 *
 * serve exits with status 1 when the tools are invalid or when the script is
 * started by hand rather than by a host.
 */
function serve(...tools) {
  const errs = [];
  const seen = new Set();
  for (const t of tools) {
    const msg = check(t);
    if (msg) errs.push(msg);
    else if (seen.has(t.name)) errs.push(`tool ${JSON.stringify(t.name)} is defined twice`);
    if (t && t.name) seen.add(t.name);
  }
  if (tools.length === 0) errs.push('no tools to serve');
  if (errs.length > 0) {
    process.stderr.write(`tool plugin: ${errs.join('\n')}\n`);
    process.exit(1);
  }
  if (process.env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    process.stderr.write(
      `This is an agentcore tool plugin offering ${tools.map((t) => t.name).join(', ')}.\n` +
        'A host starts it; to try it, put it in a directory and run: toolhost list DIR\n',
    );
    process.exit(1);
  }
  // SIGTERM (a kill by hand) takes the whole process group down, commands
  // the tools started included; only when the plugin leads its own group,
  // as the host starts it, so that a shared group's parent is spared.
  if (leadsGroup()) {
    process.on('SIGTERM', () => process.kill(-process.pid, 'SIGKILL'));
  }
  const plugin = new Plugin(tools);
  const { hostOut, hostErr } = captureStdio(plugin);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': -1,
    'grpc.max_send_message_length': -1,
  });
  server.addService(loadService(), {
    Describe: (rpc, cb) => plugin.describe(rpc, cb),
    Execute: (rpc) => plugin.execute(rpc),
    Session: (rpc) => plugin.session(rpc),
  });
  // grpc.health.v1.Health, as go-plugin expects: SERVING for every service
  // name ("plugin" is go-plugin's). HealthCheckResponse{status: SERVING} is 08 01.
  server.addService({ Check: rawMethod('/grpc.health.v1.Health/Check') }, {
    Check: (rpc, cb) => cb(null, Buffer.from([0x08, 0x01])),
  });
  // plugin.GRPCController: the host asks the plugin to exit.
  server.addService({ Shutdown: rawMethod('/plugin.GRPCController/Shutdown') }, {
    Shutdown: (rpc, cb) => {
      cb(null, Buffer.alloc(0));
      setTimeout(() => process.exit(0), 10);
    },
  });
  const sock = socketPath();
  server.bindAsync(`unix:${sock}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) {
      hostErr(`tool plugin: cannot listen on unix:${sock}: ${err.message}\n`);
      process.exit(1);
    }
    hostOut(`${CORE_PROTOCOL_VERSION}|${APP_PROTOCOL_VERSION}|unix|${sock}|grpc|\n`);
  });
  return server;
}

module.exports = {
  serve,
  Call,
  MAGIC_COOKIE_KEY,
  MAGIC_COOKIE_VALUE,
  CORE_PROTOCOL_VERSION,
  APP_PROTOCOL_VERSION,
  OUTPUT,
  STDOUT,
  STDERR,
};
