'use strict';
// Unit tests of @agentcore/tool: results and tool definitions. The protocol
// itself is tested by tests/conformance, against a real host.

const test = require('node:test');
const assert = require('node:assert');
const { tool, Stop, Result, RawJSON, Content, text, image, fileUrl } = require('..');
const { toResult } = require('../lib/result');
const { check } = require('../lib/tool');
const { run, traceEnv, validTraceparent } = require('../lib/run');

const TRACEPARENT = '00-a1b20000000000000000000000000000-c3d4000000000000-01';

test('values become results', () => {
  const cases = [
    ['hi', { text: 'hi' }],
    [{ a: 1 }, { json: '{"a":1}' }],
    [undefined, { json: 'null' }],
    [new RawJSON('{"b": 2}'), { json: '{"b": 2}' }],
  ];
  for (const [value, want] of cases) {
    const r = toResult(value);
    assert.deepStrictEqual({ ...r, stop: undefined }, { ...want, stop: undefined });
  }
});

test('flags', () => {
  assert.deepStrictEqual(toResult(Stop('done')), { text: 'done', stop: true });
  const r = toResult(new Result('bad', { error: true }));
  assert.strictEqual(r.error, 'the tool reported a failure');
});

test('content parts', () => {
  const r = toResult(Content.of(text('cap'), image('image/png', Buffer.from('x')), fileUrl('image/png', 'https://x.test/a.png')));
  assert.strictEqual(r.content.parts.length, 3);
  assert.deepStrictEqual(r.content.parts[0], { text: 'cap' });
  assert.strictEqual(r.content.parts[1].file.mediaType, 'image/png');
  assert.strictEqual(r.content.parts[2].file.url, 'https://x.test/a.png');
});

test('invalid values become error results', () => {
  const circular = {};
  circular.self = circular;
  for (const [value, want] of [
    [Buffer.from('x'), 'return text'],
    [circular, 'cannot be serialised as JSON'],
    [() => 1, 'cannot be serialised as JSON'],
    [Content.of(), 'no parts'],
    [Content.of(image('png', Buffer.from('x'))), 'not a media type'],
    [Content.of(fileUrl('image/png', 'ftp://x')), 'not an http(s) or data URL'],
    [new RawJSON('{'), 'invalid result'],
  ]) {
    const r = toResult(value);
    assert.ok(r.error && r.text.includes(want), `${String(value)}: ${r.text}`);
  }
});

test('tool definitions are checked', () => {
  const fn = () => 'x';
  assert.strictEqual(check(tool('ok', 'Fine.', fn)), null);
  assert.match(check(tool('bad name', 'x', fn)), /must match/);
  assert.match(check(tool('t', 'x', fn, { schema: { type: 'string' } })), /"type": "object"/);
  assert.throws(() => tool('t', 'x', fn, { colour: 'red' }), /unknown option/);
  assert.throws(() => tool('t', 'x', 'not a function'), /must be a function/);
});

test('valid traceparents', () => {
  for (const [tp, want] of [
    [TRACEPARENT, true],
    ['01-a1b20000000000000000000000000000-c3d4000000000000-01-later', true],
    ['00-a1b20000000000000000000000000000-c3d4000000000000-01-more', false],
    ['ff-a1b20000000000000000000000000000-c3d4000000000000-01', false],
    ['00-00000000000000000000000000000000-c3d4000000000000-01', false],
    ['00-a1b20000000000000000000000000000-0000000000000000-01', false],
    ['00-A1B20000000000000000000000000000-c3d4000000000000-01', false],
    ['', false],
    [undefined, false],
  ]) {
    assert.strictEqual(validTraceparent(tp), want, String(tp));
  }
});

test('the trace context goes into a command\'s environment', () => {
  const base = { PATH: '/bin', TRACEPARENT: 'stale', TRACESTATE: 'stale=1' };
  assert.deepStrictEqual(traceEnv({ traceparent: TRACEPARENT, tracestate: 'v=abc' }, base), {
    PATH: '/bin',
    TRACEPARENT,
    TRACESTATE: 'v=abc',
  });
  assert.deepStrictEqual(traceEnv({ traceparent: TRACEPARENT }, base), { PATH: '/bin', TRACEPARENT });
  assert.strictEqual(traceEnv({}, base), null);
  assert.strictEqual(traceEnv({ traceparent: 'junk', tracestate: 'v=abc' }, base), null);
  assert.strictEqual(traceEnv({ traceparent: TRACEPARENT }).TRACEPARENT, TRACEPARENT);
});

test('run passes the trace on', async () => {
  const show = ['-c', 'printf "%s|%s|%s" "$TRACEPARENT" "$TRACESTATE" "$KEPT"'];
  const fakeCall = (traceContext) => ({
    traceContext,
    out: '',
    send(stream, data) {
      this.out += Buffer.from(data).toString();
    },
  });
  let call = fakeCall({ traceparent: TRACEPARENT, tracestate: 'v=abc' });
  assert.strictEqual(await run(call, 'sh', show, { env: { KEPT: 'yes', TRACESTATE: 'stale=1' } }), 0);
  assert.strictEqual(call.out, `${TRACEPARENT}|v=abc|yes`);
  call = fakeCall({});
  assert.strictEqual(await run(call, 'sh', show, { env: { KEPT: 'yes', TRACEPARENT: 'outer' } }), 0);
  assert.strictEqual(call.out, 'outer||yes');
});
