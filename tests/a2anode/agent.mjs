// A remote A2A agent built with the official A2A JavaScript SDK, which
// agent-server calls as a tool (a NAME.a2a.json definition), for
// tests/a2a_test.go.
//
//   node agent.mjs TOKEN [PORT]
//
// It serves its card at /.well-known/agent-card.json and JSON-RPC at /,
// both only with "Authorization: Bearer TOKEN". Its skill: "count N"
// streams "step 1" … "step N" as working status messages, then answers
// with the artifact "counted N"; "wait" says "waiting" and works until it
// is cancelled. It prints one JSON line per happening on stdout:
// {"event":"listening","port":N}, {"event":"cancelled","task":ID}.
import express from 'express';
import { randomUUID } from 'node:crypto';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const [token, port = '0'] = process.argv.slice(2);
const print = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const card = {
  name: 'counter',
  description: 'Counts out loud.',
  protocolVersion: '0.3.0',
  version: '1.0.0',
  url: '', // set once listening
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'count', name: 'count', description: 'count N: counts from 1 to N', tags: ['count'] }],
};

const cancelled = new Set();
const contexts = new Map(); // task id → context id

const status = (ctx, state, text, final = false) => ({
  kind: 'status-update', taskId: ctx.taskId, contextId: ctx.contextId, final,
  status: {
    state, timestamp: new Date().toISOString(),
    message: text ? { kind: 'message', role: 'agent', messageId: randomUUID(), parts: [{ kind: 'text', text }], taskId: ctx.taskId, contextId: ctx.contextId } : undefined,
  },
});

const executor = {
  async execute(ctx, bus) {
    contexts.set(ctx.taskId, ctx.contextId);
    const text = ctx.userMessage.parts.filter((p) => p.kind === 'text').map((p) => p.text).join('');
    if (!ctx.task) {
      bus.publish({ kind: 'task', id: ctx.taskId, contextId: ctx.contextId, status: { state: 'submitted', timestamp: new Date().toISOString() }, history: [ctx.userMessage] });
    }
    const m = text.match(/count (\d+)/);
    if (m) {
      const n = Number(m[1]);
      for (let i = 1; i <= n; i++) {
        bus.publish(status(ctx, 'working', `step ${i}`));
        await sleep(50);
      }
      bus.publish({ kind: 'artifact-update', taskId: ctx.taskId, contextId: ctx.contextId, lastChunk: true,
        artifact: { artifactId: 'answer', name: 'answer', parts: [{ kind: 'text', text: `counted ${n}` }] } });
      bus.publish(status(ctx, 'completed', '', true));
      bus.finished();
      return;
    }
    if (text.includes('wait')) {
      bus.publish(status(ctx, 'working', 'waiting'));
      while (!cancelled.has(ctx.taskId)) await sleep(20);
      return; // cancelTask published the end
    }
    bus.publish(status(ctx, 'failed', `no skill for ${JSON.stringify(text)}`, true));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    cancelled.add(taskId);
    print({ event: 'cancelled', task: taskId });
    bus.publish({ kind: 'status-update', taskId, contextId: contexts.get(taskId) || '', final: true, status: { state: 'canceled', timestamp: new Date().toISOString() } });
    bus.finished();
  },
};

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
const app = express();
app.use((req, res, next) => {
  if (req.headers.authorization !== `Bearer ${token}`) {
    res.status(401).send('unauthorized');
    return;
  }
  next();
});
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(Number(port), '127.0.0.1', () => {
  const { port: bound } = server.address();
  card.url = `http://127.0.0.1:${bound}/`;
  print({ event: 'listening', port: bound });
});
process.stdin.on('end', () => process.exit(0)); // the test closes stdin to end it
process.stdin.resume();
