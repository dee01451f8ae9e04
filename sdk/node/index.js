'use strict';
/**
 * @agentcore/tool: write agentcore tool plugins in Node.js.
 *
 * A plugin is an executable script that offers one or more tools and serves
 * them; the host (agent-server, toolhost) starts it, runs one call at a time
 * in it, and kills its whole process group to stop a call. See
 * docs/plugin-protocol.md for the protocol and index.d.ts for the types.
 */

const { tool } = require('./lib/tool');
const result = require('./lib/result');
const server = require('./lib/server');
const { run, killTree } = require('./lib/run');

module.exports = {
  tool,
  serve: server.serve,
  Call: server.Call,
  run,
  killTree,
  ToolError: result.ToolError,
  Result: result.Result,
  Stop: result.Stop,
  RawJSON: result.RawJSON,
  Part: result.Part,
  Content: result.Content,
  text: result.text,
  image: result.image,
  file: result.file,
  fileUrl: result.fileUrl,
  MAGIC_COOKIE_KEY: server.MAGIC_COOKIE_KEY,
  MAGIC_COOKIE_VALUE: server.MAGIC_COOKIE_VALUE,
  CORE_PROTOCOL_VERSION: server.CORE_PROTOCOL_VERSION,
  APP_PROTOCOL_VERSION: server.APP_PROTOCOL_VERSION,
};
