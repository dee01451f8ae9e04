'use strict';
// Tools: what a plugin offers.

const VALID_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const OPTIONS = new Set(['schema', 'timeoutMs', 'readOnly', 'idempotent', 'limits']);

/**
 * Defines a tool, like the Go SDK's tool.New:
 *
 *   tool('greet', 'Greets someone by name.', async (input, call) => `Hello, ${input.name}!`, {
 *     schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
 *     readOnly: true,
 *   })
 *
 * fn(input, call) gets the input (the parsed JSON object, already checked
 * against the schema by the host) and the running Call; it returns the
 * result, or a promise of it. Options: schema (a JSON Schema object; default
 * any object), timeoutMs, readOnly, idempotent, limits ({memoryBytes,
 * maxProcesses, cpuTimeMs, maxOpenFiles}).
 */
function tool(name, description, fn, options = {}) {
  if (typeof fn !== 'function') throw new TypeError(`tool ${JSON.stringify(name)}: fn must be a function`);
  for (const k of Object.keys(options)) {
    if (!OPTIONS.has(k)) throw new TypeError(`tool ${JSON.stringify(name)}: unknown option ${JSON.stringify(k)}`);
  }
  let schema = options.schema === undefined ? { type: 'object' } : options.schema;
  if (typeof schema === 'string') schema = JSON.parse(schema);
  return {
    name,
    description: description || '',
    inputSchema: schema,
    fn,
    timeoutMs: options.timeoutMs || 0,
    readOnly: !!options.readOnly,
    idempotent: !!options.idempotent,
    limits: options.limits || null,
  };
}

/** Returns why t cannot be served, or null. */
function check(t) {
  if (!t || typeof t.fn !== 'function') return `${String(t)} is not a tool: make it with tool()`;
  if (!VALID_NAME.test(t.name || '')) return `tool name ${JSON.stringify(t.name)} must match ${VALID_NAME.source}`;
  const s = t.inputSchema;
  if (!s || typeof s !== 'object' || Array.isArray(s) || s.type !== 'object') {
    return `tool ${JSON.stringify(t.name)}: input schema must be a JSON object with "type": "object" at its root`;
  }
  if (t.timeoutMs < 0) return `tool ${JSON.stringify(t.name)}: timeoutMs must not be negative`;
  return null;
}

module.exports = { tool, check, VALID_NAME };
