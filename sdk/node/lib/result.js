'use strict';
// Results: how what a tool returns becomes the protocol's ToolResult.

/** A failure the model should read as it is: an error result whose text is the message. */
class ToolError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ToolError';
  }
}

/** A result with flags, for when a plain value is not enough. */
class Result {
  constructor(output, { stop = false, error = false } = {}) {
    this.output = output;
    this.stop = stop;
    this.error = error;
  }
}

/** Returns a result that ends the agent's loop, with output for the model. */
function Stop(output) {
  return new Result(output, { stop: true });
}

/** JSON text sent as it is (it must be valid JSON). */
class RawJSON {
  constructor(json) {
    this.json = String(json);
  }
}

/** One block of multimodal output: build parts with text, image, file and fileUrl. */
class Part {
  constructor(fields) {
    Object.assign(this, fields);
  }
}

/** An ordered list of parts, returned as one result. */
class Content extends Array {}

const text = (s) => new Part({ type: 'text', text: String(s) });
const image = (mediaType, data) => new Part({ type: 'file', mediaType, data: Buffer.from(data) });
const file = (mediaType, data, filename = '') => new Part({ type: 'file', mediaType, data: Buffer.from(data), filename });
const fileUrl = (mediaType, url, filename = '') => new Part({ type: 'file', mediaType, url, filename });

function errorResult(msg) {
  msg = toWellFormed(String(msg || '')) || 'the tool failed';
  return { text: msg, error: msg };
}

// String.prototype.toWellFormed is Node 20+.
function toWellFormed(s) {
  return typeof s.toWellFormed === 'function' ? s.toWellFormed() : Buffer.from(s, 'utf8').toString('utf8');
}

/** Converts what a handler returned; never throws: values that cannot be sent become error results. */
function toResult(value) {
  let stop = false;
  let failed = false;
  if (value instanceof Result) {
    ({ output: value, stop, error: failed } = value);
  }
  let res;
  try {
    res = convert(value);
  } catch (e) {
    return errorResult(`invalid result: ${e.message}`);
  }
  res.stop = stop;
  if (failed) res.error = 'the tool reported a failure';
  return res;
}

function convert(v) {
  if (v instanceof Result) throw new Error('a Result cannot hold another Result');
  if (v instanceof RawJSON) {
    JSON.parse(v.json);
    return { json: v.json };
  }
  if (typeof v === 'string') return { text: toWellFormed(v) };
  if (v instanceof Part) return content([v]);
  if (Array.isArray(v) && (v instanceof Content || (v.length > 0 && v.every((p) => p instanceof Part)))) return content(v);
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) {
    throw new Error('the tool returned bytes: return text, or a file part (file(), image()) for binary data');
  }
  if (v === undefined) v = null;
  let json;
  try {
    json = JSON.stringify(v);
  } catch (e) {
    throw new Error(`the value the tool returned cannot be serialised as JSON: ${e.message}`);
  }
  if (json === undefined) throw new Error(`the value the tool returned (${typeof v}) cannot be serialised as JSON`);
  return { json };
}

function content(parts) {
  if (parts.length === 0) throw new Error('content has no parts');
  return {
    content: {
      parts: parts.map((p, i) => {
        try {
          return part(p);
        } catch (e) {
          throw new Error(`content part ${i}: ${e.message}`);
        }
      }),
    },
  };
}

function part(p) {
  if (!(p instanceof Part)) throw new Error('not a Part');
  if (p.type === 'text') {
    if (p.data || p.url) throw new Error('a text part holds text only, not data or a URL');
    return { text: toWellFormed(p.text || '') };
  }
  if (p.type !== 'file' && p.type !== 'image') {
    throw new Error(`type ${JSON.stringify(p.type)} is not allowed: a part is text or file`);
  }
  const hasData = p.data && p.data.length > 0;
  if (hasData && p.url) throw new Error('file part has both data and a URL; give one');
  if (!hasData && !p.url) throw new Error('file part has neither data nor a URL');
  const f = { mediaType: p.mediaType || '', filename: p.filename || '' };
  if (p.url) {
    let scheme;
    try {
      scheme = new URL(p.url).protocol;
    } catch {
      scheme = '';
    }
    if (!['https:', 'http:', 'data:'].includes(scheme)) {
      throw new Error(`file part URL ${JSON.stringify(p.url)} is not an http(s) or data URL`);
    }
    f.url = p.url;
  } else {
    f.data = Buffer.from(p.data);
  }
  if (!f.mediaType.includes('/')) {
    throw new Error(`file part media type ${JSON.stringify(f.mediaType)} is not a media type such as image/png`);
  }
  return { file: f };
}

module.exports = { ToolError, Result, Stop, RawJSON, Part, Content, text, image, file, fileUrl, errorResult, toResult };
