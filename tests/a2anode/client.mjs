// Drives agent-server's A2A listener (-a2a-listen) with the official A2A
// JavaScript SDK and prints what it sees, one JSON object per line, for
// tests/a2a_test.go.
//
//   node client.mjs BASE_URL AGENT_ID TOKEN OTHER_TOKEN
//
// BASE_URL is the listener's http://host:port. The steps:
//  1. unauthorized: the card without a token is refused (401);
//     othertenant: another tenant's token does not find the agent (404);
//  2. card: the agent's card (skills, capabilities, security);
//  3. send: message/send whose run calls say_hello, answered with the task;
//  4. stream: message/stream whose run calls count, its output streamed;
//  5. permission: a run that asks before each tool call: the stream ends
//     input-required, a message on the task allows the call, it completes;
//  6. pids, cancelled: a run whose shell call starts a process tree, the
//     tree's pids from the streamed output, then tasks/cancel; the test
//     checks the tree is gone;
//  7. dropped, resubscribed: a stream dropped after its first output, then
//     tasks/resubscribe from the last seq seen, to the end; get: tasks/get;
//  8. files: a run whose tool returns an image: its "files" artifact.
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { randomUUID } from 'node:crypto';

const [base, agentID, token, otherToken] = process.argv.slice(2);
const print = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const cardURL = `${base}/a2a/${agentID}/.well-known/agent-card.json`;

const withToken = (bearer) => (input, init = {}) => {
  const headers = new Headers(init.headers || {});
  headers.set('Authorization', `Bearer ${bearer}`);
  return fetch(input, { ...init, headers });
};

async function connect(bearer) {
  const fetchImpl = withToken(bearer);
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }));
  return factory.createFromUrl(cardURL, '');
}

const message = (text, extra = {}) => ({
  kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }], ...extra,
});

// summary is one event in brief: its kind, state, text and seq.
function summary(ev) {
  const s = { kind: ev.kind };
  if (ev.kind === 'task') s.state = ev.status.state;
  if (ev.kind === 'status-update') {
    s.state = ev.status.state;
    s.final = ev.final;
    const parts = (ev.status.message && ev.status.message.parts) || [];
    s.text = parts.filter((p) => p.kind === 'text').map((p) => p.text).join('');
    const data = parts.find((p) => p.kind === 'data');
    if (data) s.data = data.data;
  }
  if (ev.kind === 'artifact-update') {
    s.artifact = ev.artifact.name;
    s.text = ev.artifact.parts.filter((p) => p.kind === 'text').map((p) => p.text).join('');
  }
  if (ev.metadata && ev.metadata['agentcore/seq'] !== undefined) s.seq = ev.metadata['agentcore/seq'];
  s.task = ev.kind === 'task' ? ev.id : ev.taskId;
  return s;
}

const resultText = (task) => (task.artifacts || [])
  .filter((a) => a.name === 'result')
  .flatMap((a) => a.parts.filter((p) => p.kind === 'text').map((p) => p.text)).join('');

async function main() {
  const anon = await fetch(cardURL);
  print({ step: 'unauthorized', status: anon.status, wwwAuthenticate: anon.headers.get('www-authenticate') });
  const other = await withToken(otherToken)(cardURL);
  print({ step: 'othertenant', status: other.status });

  const client = await connect(token);
  const card = await client.getAgentCard();
  print({
    step: 'card', name: card.name, url: card.url, skills: card.skills.map((s) => s.id).sort(),
    streaming: card.capabilities.streaming, security: Object.keys(card.securitySchemes || {}), protocolVersion: card.protocolVersion,
  });

  const sent = await client.sendMessage({ message: message('send: greet Ming') });
  print({ step: 'send', kind: sent.kind, state: sent.status.state, contextId: sent.contextId, result: resultText(sent), task: sent.id });

  const streamed = [];
  for await (const ev of client.sendMessageStream({ message: message('stream: count to 3') })) streamed.push(summary(ev));
  print({ step: 'stream', events: streamed });

  const asked = [];
  const ask = { 'agentcore/permissionMode': 'ask_all' };
  for await (const ev of client.sendMessageStream({ message: message('permission: greet Lan', { metadata: ask }) })) asked.push(summary(ev));
  const taskID = asked[0].task;
  const answered = [];
  const allow = { kind: 'message', role: 'user', messageId: randomUUID(), taskId: taskID, contextId: agentID, parts: [{ kind: 'data', data: { allow: true } }] };
  for await (const ev of client.sendMessageStream({ message: allow })) answered.push(summary(ev));
  print({ step: 'permission', asked, answered });

  // cancel: the shell's process tree shows in its output; cancel then.
  const ac = new AbortController();
  let pids = null;
  let cancelled = null;
  try {
    for await (const ev of client.sendMessageStream({ message: message('cancel: sleep') }, { signal: ac.signal })) {
      const s = summary(ev);
      const m = s.text && s.text.match(/pids (\d+) (\d+) (\d+)/);
      if (m && !pids) {
        pids = [Number(m[1]), Number(m[2]), Number(m[3])];
        print({ step: 'pids', pids });
        const t = await client.cancelTask({ id: s.task });
        cancelled = { state: t.status.state };
      }
      if (s.final) {
        cancelled.streamState = s.state;
        break;
      }
    }
  } finally {
    ac.abort();
  }
  let again = '';
  try {
    await client.cancelTask({ id: asked[0].task });
  } catch (e) {
    again = e.constructor.name + ': ' + e.message;
  }
  print({ step: 'cancelled', ...cancelled, again });

  // resubscribe: drop the stream after the first output, resubscribe from its seq.
  const drop = new AbortController();
  const before = [];
  try {
    for await (const ev of client.sendMessageStream({ message: message('resubscribe: count to 5') }, { signal: drop.signal })) {
      const s = summary(ev);
      before.push(s);
      if (s.text && s.text.startsWith('counted to')) {
        drop.abort();
        break;
      }
    }
  } catch (e) {
    if (e.name !== 'AbortError') throw e;
  }
  print({ step: 'dropped', events: before });
  const last = before[before.length - 1];
  const after = [];
  for await (const ev of client.resubscribeTask({ id: last.task, metadata: { 'agentcore/afterSeq': last.seq } })) after.push(summary(ev));
  print({ step: 'resubscribed', events: after });
  const snapshot = [];
  for await (const ev of client.resubscribeTask({ id: last.task })) snapshot.push(summary(ev));
  print({ step: 'snapshot', events: snapshot });

  const got = await client.getTask({ id: sent.id });
  print({ step: 'get', state: got.status.state, result: resultText(got), artifacts: (got.artifacts || []).map((a) => a.name) });

  const chart = await client.sendMessage({ message: message('files: chart') });
  const files = (chart.artifacts || []).filter((a) => a.name === 'files').flatMap((a) => a.parts);
  print({ step: 'files', artifacts: chart.artifacts.map((a) => a.name), files: files.map((p) => ({ kind: p.kind, mimeType: p.file.mimeType, bytes: (p.file.bytes || '').length > 100 })) });
}

main().catch((e) => {
  print({ step: 'error', error: String(e && e.stack) });
  process.exit(1);
});
