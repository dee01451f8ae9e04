#!/usr/bin/env node
// A tool plugin in Node.js showing every feature of the SDK (sdk/node).
//
// Put it in a tool directory (it must be executable) and try it:
//
//   (cd sdk/node && npm ci)
//   toolhost list examples/tools/node
//   toolhost call examples/tools/node greet '{"name": "Ada"}'
//
// The same tools exist in Go (../go) and Python (../python); the conformance
// suite (tests/conformance) runs one contract against all three.
'use strict';

// In your own tool directory: npm install /path/to/agentcore/bin/agentcore-tool-0.1.0.tgz (make
// sdk-pack builds it), then require('@agentcore/tool').
const { tool, serve, run, Stop, ToolError, Content, text, image } = require('../../../sdk/node');

// A 1x1 red PNG.
const RED_DOT = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000000301010018dd8db00000000049454e44ae426082',
  'hex',
);

const object = (properties, required = Object.keys(properties)) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const greet = tool(
  'greet',
  'Greets someone by name.',
  async (input, call) => {
    call.emit('thinking of a greeting');
    return `Hello, ${input.name}${input.excited ? '!' : '.'}`;
  },
  {
    schema: object(
      {
        name: { type: 'string', description: 'who to greet' },
        excited: { type: 'boolean', description: 'end with an exclamation mark' },
      },
      ['name'],
    ),
    readOnly: true,
    idempotent: true,
    limits: { memoryBytes: 256 * 1024 * 1024, maxProcesses: 64, cpuTimeMs: 10000, maxOpenFiles: 256 },
  },
);

const count = tool(
  'count',
  'Counts to n: each number as live output, on stdout and on stderr.',
  (input, call) => {
    for (let i = 1; i <= input.n; i++) {
      call.emit(`emit ${i}\n`);
      console.log(`stdout ${i}`);
      console.error(`stderr ${i}`);
    }
    return { counted: input.n };
  },
  { schema: object({ n: { type: 'integer', description: 'how far to count' } }) },
);

const shell = tool(
  'shell',
  'Runs a sh command; its output streams live.',
  async (input, call) => ({ exitCode: await run(call, 'sh', ['-c', input.command]) }),
  { schema: object({ command: { type: 'string', description: 'a sh command line' } }) },
);

const finish = tool('finish', "Ends the agent's loop with a summary.", (input) => Stop(input.summary), {
  schema: object({ summary: { type: 'string' } }),
});

const picture = tool(
  'picture',
  'Returns a caption and a picture.',
  () => Content.of(text('a red dot'), image('image/png', RED_DOT)),
  { readOnly: true },
);

const fail = tool(
  'fail',
  'Fails with the given message.',
  (input) => {
    throw new ToolError(input.message);
  },
  { schema: object({ message: { type: 'string' } }) },
);

const explode = tool('explode', 'Raises an exception.', () => {
  throw new Error('kaboom');
});

const crash = tool(
  'crash',
  'Exits the plugin process at once.',
  (input) => process.exit(input.code),
  { schema: object({ code: { type: 'integer' } }) },
);

const spawnTree = tool('spawn', 'Starts a process tree that sleeps, reports its pids and waits.', async (input, call) => {
  // sh starts a grandchild in the background and reports both pids.
  await run(call, 'sh', ['-c', 'sleep 300 & echo "pids $$ $!"; wait']);
  return 'the tree ended';
});

const hog = tool(
  'hog',
  "Allocates memory without end, 8 MiB at a time, saying how far it got; the host's memory limit kills it.",
  async (input, call) => {
    const held = [];
    while (!call.cancelled) {
      held.push(Buffer.alloc(8 << 20, 1)); // filled, so it counts
      call.emit(`${8 * held.length} MiB\n`);
      await new Promise(setImmediate); // let the output go
    }
    return 'stopped';
  },
);

const swarm = tool(
  'swarm',
  'Starts n sleeping processes and waits for them; past 32 processes the host kills the call.',
  async (input, call) => {
    const script = 'i=0; while [ $i -lt "$1" ]; do sleep 30 & i=$((i+1)); done; wait';
    return { exitCode: await run(call, 'sh', ['-c', script, 'sh', String(input.n)]) };
  },
  { schema: object({ n: { type: 'integer', description: 'how many sleeping processes to start' } }), limits: { maxProcesses: 32 } },
);

const spin = tool(
  'spin',
  'Spins on the CPU; past 250ms of CPU time the host kills it.',
  () => {
    for (;;); // the event loop is blocked: only the host's kill ends it
  },
  { limits: { cpuTimeMs: 250 } },
);

const traced = tool(
  'traced',
  'Returns the call\'s trace context and runs a command that prints the TRACEPARENT and TRACESTATE it got.',
  async (input, call) => {
    // call.traceContext is the host's span of the call: with OpenTelemetry,
    // start spans in propagation.extract(context.active(), call.traceContext).
    await run(call, 'sh', ['-c', 'echo "$TRACEPARENT|$TRACESTATE"']);
    return { traceparent: call.traceContext.traceparent || '', tracestate: call.traceContext.tracestate || '' };
  },
  { readOnly: true },
);

const keyed = tool(
  'keyed',
  'Returns the call\'s id, idempotency key and attempt.',
  (input, call) => ({ call_id: call.callId, idempotency_key: call.idempotencyKey, attempt: call.attempt }),
  { readOnly: true },
);

const slow = tool(
  'slow',
  'Sleeps; the host kills it after 1s.',
  (input) => new Promise((resolve) => setTimeout(() => resolve('woke up'), input.seconds * 1000)),
  { schema: object({ seconds: { type: 'number' } }), timeoutMs: 1000 },
);

serve(greet, count, shell, finish, picture, fail, explode, crash, spawnTree, hog, swarm, spin, traced, keyed, slow);
