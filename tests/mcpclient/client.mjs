// Drives agent-server's MCP listener with the official TypeScript MCP SDK and
// prints what it sees, one JSON object per line, for tests/mcp_test.go:
//
//   node client.mjs URL TOKEN
//
// 1. unauthorized: connecting without the token fails;
// 2. list: tools/list;
// 3. progress: tools/call of count with progress notifications;
// 4. content: tools/call of bar_chart (an image);
// 5. error: a call whose input is invalid (isError);
// 6. cancel: tools/call of shell starting a process tree, cancelled once the
//    tree's pids arrive as progress.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token] = process.argv.slice(2);
const print = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

async function connect(withToken) {
  const headers = withToken ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'agentcore-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

try {
  const c = await connect(false);
  await c.close();
  print({ step: 'unauthorized', error: '' });
} catch (e) {
  print({ step: 'unauthorized', error: String(e && e.message) });
}

const client = await connect(true);

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
print({ step: 'error', isError: !!bad.isError, text: bad.content.map((p) => p.text).join('') });

const abort = new AbortController();
let output = '';
let pids = [];
try {
  await client.callTool({ name: 'shell', arguments: { command: 'sleep 300 & echo "pids $$ $!"; wait' } }, undefined, {
    signal: abort.signal,
    timeout: 60000,
    onprogress: (p) => {
      output += p.message || '';
      const m = output.match(/pids (\d+) (\d+)/);
      if (m && pids.length === 0) {
        pids = [Number(m[1]), Number(m[2])];
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
// makes sure it has been sent before the connection closes.
await client.ping();
await client.close();
