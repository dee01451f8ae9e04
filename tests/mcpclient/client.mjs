// Drives agent-server's MCP listener with the official TypeScript MCP SDK and
// prints what it sees, one JSON object per line, for tests/mcp_test.go.
//
//   node client.mjs calls URL TOKEN
//
// 1. unauthorized: connecting without the token fails;
// 2. list: tools/list;
// 3. progress: tools/call of count with progress notifications;
// 4. content: tools/call of bar_chart (an image);
// 5. error: a call whose input is invalid (isError);
// 6. limit: a call whose output is longer than the server's max_tool_output;
// 7. cancel: tools/call of shell starting a process tree (the plugin, bash
//    and its sleep), cancelled once the tree's pids arrive as progress. The
//    session stays open until the test, having seen the tree gone, writes a
//    line to stdin: the tree dies of notifications/cancelled, not of the
//    connection closing; after: a call on the same session still works.
//
//   node client.mjs tenants URL TOKEN_A TOKEN_B
//
// With a tenants file: no token and a wrong one are refused (401); each
// tenant lists and calls; tenant B may not use tenant A's session (403).
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, url, token, otherToken] = process.argv.slice(2);
const print = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

async function connect(bearer) {
  const headers = bearer ? { Authorization: `Bearer ${bearer}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'agentcore-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// refused prints how connecting with bearer fails: the HTTP status and message.
async function refused(step, bearer) {
  try {
    const { client } = await connect(bearer);
    await client.close();
    print({ step, status: 0, error: '' });
  } catch (e) {
    print({ step, status: e && e.code, error: String(e && e.message) });
  }
}

const text = (res) => res.content.map((p) => p.text || '').join('');

async function calls() {
  await refused('unauthorized', '');
  const { client } = await connect(token);

  const { tools } = await client.listTools();
  print({
    step: 'list',
    tools: tools.map((t) => ({ name: t.name, readOnly: !!(t.annotations && t.annotations.readOnlyHint), schemaType: t.inputSchema.type })),
  });

  const progress = [];
  const counted = await client.callTool({ name: 'count', arguments: { n: 3, delay_ms: 10 } }, undefined, {
    onprogress: (p) => progress.push({ progress: p.progress, message: p.message }),
  });
  print({ step: 'progress', progress, content: counted.content, isError: !!counted.isError });

  const chart = await client.callTool({ name: 'bar_chart', arguments: { values: [1, 2, 3] } });
  print({ step: 'content', types: chart.content.map((p) => p.type), mimeType: chart.content.find((p) => p.type === 'image')?.mimeType, isError: !!chart.isError });

  const bad = await client.callTool({ name: 'count', arguments: { n: 'three' } });
  print({ step: 'error', isError: !!bad.isError, text: text(bad) });

  const long = await client.callTool({ name: 'shell', arguments: { command: "head -c 300 /dev/zero | tr '\\0' a" } });
  print({ step: 'limit', isError: !!long.isError, text: text(long) });

  const abort = new AbortController();
  let output = '';
  let pids = [];
  try {
    await client.callTool({ name: 'shell', arguments: { command: 'sleep 300 & echo "pids $PPID $$ $!"; wait' } }, undefined, {
      signal: abort.signal,
      timeout: 60000,
      onprogress: (p) => {
        output += p.message || '';
        const m = output.match(/pids (\d+) (\d+) (\d+)/);
        if (m && pids.length === 0) {
          pids = [Number(m[1]), Number(m[2]), Number(m[3])];
          print({ step: 'pids', pids });
          abort.abort('enough');
        }
      },
    });
    print({ step: 'cancel', error: '' });
  } catch (e) {
    print({ step: 'cancel', error: String(e && e.message) });
  }
  // The cancellation goes out as a notification of its own; a ping after it
  // makes sure it has been sent. Then the session stays open until the test
  // has seen the tree gone.
  await client.ping();
  print({ step: 'cancelled' });
  const rl = createInterface({ input: process.stdin });
  for await (const _ of rl) break;
  rl.close();
  const again = await client.callTool({ name: 'count', arguments: { n: 1 } });
  print({ step: 'after', text: text(again) });
  await client.close();
}

async function tenants() {
  await refused('no token', '');
  await refused('wrong token', 'not-a-tenant-token-at-all');
  const a = await connect(token);
  const b = await connect(otherToken);
  for (const [step, { client }, n] of [['tenant a', a, 1], ['tenant b', b, 2]]) {
    const { tools } = await client.listTools();
    const res = await client.callTool({ name: 'count', arguments: { n } });
    print({ step, tools: tools.length, hasCount: tools.some((t) => t.name === 'count'), text: text(res), isError: !!res.isError });
  }
  // Tenant B's token with tenant A's session id: the session is A's.
  const resp = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${otherToken}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': a.transport.sessionId,
      'Mcp-Protocol-Version': a.transport.protocolVersion,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
  });
  print({ step: 'hijack', status: resp.status, body: (await resp.text()).trim() });
  await a.client.close();
  await b.client.close();
}

await ({ calls, tenants }[mode] || (() => { throw new Error(`unknown mode ${mode}`); }))();
