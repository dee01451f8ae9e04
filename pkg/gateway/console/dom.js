// Building the page: every text the server sends (model output, tool
// output, errors) becomes a text node, never markup.

/**
 * h creates an element: h('div.card#main', {onclick: f, title: 'x'}, child…).
 * Children are nodes or strings (text); null and false are skipped.
 */
export function h(spec, attrs = {}, ...children) {
  const m = /^([a-z0-9]+)?((?:[.#][\w-]+)*)$/.exec(spec);
  const el = document.createElement(m[1] || 'div');
  for (const [, kind, name] of (m[2] || '').matchAll(/([.#])([\w-]+)/g)) {
    if (kind === '.') el.classList.add(name);
    else el.id = name;
  }
  if (attrs instanceof Node || typeof attrs === 'string' || Array.isArray(attrs)) {
    children.unshift(attrs);
    attrs = {};
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, ...children);
  return el;
}

/** append adds children (nodes, strings, arrays of them) to el. */
export function append(el, ...children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** clear empties el and returns it. */
export function clear(el) {
  el.replaceChildren();
  return el;
}

/** enumName turns AGENT_STATE_RUNNING into "running" (prefix the enum's). */
export function enumName(v, prefix) {
  return String(v || '').replace(prefix, '').toLowerCase().replaceAll('_', ' ');
}

/** usageText is a Usage in a few words. */
export function usageText(u) {
  if (!u) return '';
  const n = (x) => Number(x || 0);
  const parts = [`in ${n(u.inputTokens)}`, `out ${n(u.outputTokens)}`];
  if (n(u.cacheReadTokens)) parts.push(`cache read ${n(u.cacheReadTokens)}`);
  if (n(u.cacheWriteTokens)) parts.push(`cache write ${n(u.cacheWriteTokens)}`);
  if (n(u.reasoningTokens)) parts.push(`reasoning ${n(u.reasoningTokens)}`);
  return parts.join(' · ') + ' tokens';
}

/** pretty is JSON text indented, or the text as it is when it is not JSON. */
export function pretty(text) {
  try {
    return JSON.stringify(typeof text === 'string' ? JSON.parse(text) : text, null, 2);
  } catch {
    return String(text);
  }
}

/** errorView shows an API error: reason, message and the bad fields. */
export function errorView(err) {
  const reason = err.reason || err.name || 'ERROR';
  return h('div.error', {role: 'alert'},
    h('strong', reason), ' ', err.message || String(err),
    err.violations?.length ? h('ul', err.violations.map((v) => h('li', h('code', v.field), ': ', v.description))) : null);
}

/** seconds reads a protobuf Duration in JSON ("0.310786194s") as seconds; NaN when it is not one. */
export function seconds(d) {
  const m = /^(-?\d+(?:\.\d+)?)s$/.exec(String(d ?? ''));
  return m ? Number(m[1]) : NaN;
}

/**
 * durationText is a duration, in seconds or as a protobuf Duration in
 * JSON, as people write it: 310 ms, 4.2 s, 42 s, 1 min 5 s, 2 h 3 min.
 */
export function durationText(d) {
  const s = typeof d === 'number' ? d : seconds(d);
  if (!Number.isFinite(s)) return '';
  const ms = Math.round(Math.max(s, 0) * 1000);
  if (ms < 1000) return `${ms} ms`;
  const tenths = Math.round(ms / 100);
  if (tenths < 100) return `${tenths % 10 ? (tenths / 10).toFixed(1) : tenths / 10} s`;
  const secs = Math.round(ms / 1000);
  if (secs < 60) return `${secs} s`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min${secs % 60 ? ` ${secs % 60} s` : ''}`;
  const mins = Math.round(secs / 60);
  return `${Math.floor(mins / 60)} h${mins % 60 ? ` ${mins % 60} min` : ''}`;
}

/** between is the time from one timestamp to another (or to now), in seconds. */
export function between(from, to) {
  return ((to ? new Date(to) : new Date()) - new Date(from)) / 1000;
}

/** time is a timestamp as the local time of day. */
export function time(ts) {
  return ts ? new Date(ts).toLocaleTimeString() : '';
}
