// The agentcore web console: agents, their runs and history, tools.
// Plain ES modules over the public HTTP API; the routes are the hash:
//
//	#/agents            agents, and a form to create one
//	#/agents/{id}       an agent: send a task and watch the run, its runs, history
//	#/runs              runs, newest first
//	#/runs/{id}         a run: its events (stored, then live), approvals, stop
//	#/tools             tools and skills
//	#/tools/{name}      a tool: its schema, and a form to try it
//	#/connections       OAuth connections to MCP servers (connections.js)

import * as api from './api.js';
import {h, append, clear, enumName, usageText, pretty, errorView, durationText, between} from './dom.js';
import {RunView, partView, runUsageText} from './run.js';
import {connectionsPage} from './connections.js';

const view = document.getElementById('view');

// Each page gets a signal aborted when the page is left, ending its streams.
let leave = new AbortController();

const routes = [
  [/^#\/agents\/([^/]+)$/, agentPage],
  [/^#\/runs\/([^/]+)$/, runPage],
  [/^#\/runs$/, runsPage],
  [/^#\/tools\/([^/]+)$/, toolPage],
  [/^#\/tools$/, toolsPage],
  [/^#\/connections$/, (signal) => connectionsPage(view, signal)],
  [/^(#\/agents)?$/, agentsPage],
];

// The view says which page it shows and whether that page has its data:
// data-route is the page's hash, data-state is loading, then ready (its
// data drawn) or error. Tests and scripts wait on these, not on time.
async function render() {
  leave.abort();
  leave = new AbortController();
  const signal = leave.signal;
  const hash = location.hash === '#/' ? '' : location.hash;
  view.dataset.route = hash || '#/agents';
  view.dataset.state = 'loading';
  for (const [re, page] of routes) {
    const m = re.exec(hash);
    if (m) {
      clear(view);
      document.querySelectorAll('header nav a').forEach((a) => {
        a.classList.toggle('active', hash.startsWith(a.getAttribute('href')) || (!hash && a.getAttribute('href') === '#/agents'));
      });
      try {
        await page(signal, ...m.slice(1).map(decodeURIComponent));
        loaded(signal);
      } catch (err) {
        if (err.name !== 'AbortError') {
          append(view, errorView(err));
          if (!signal.aborted) view.dataset.state = 'error';
        }
      }
      return;
    }
  }
  append(clear(view), h('p', 'No such page. ', h('a', {href: '#/agents'}, 'Agents')));
  view.dataset.state = 'error';
}

// loaded marks the page of signal as drawn with its data, unless it was left.
function loaded(signal) {
  if (!signal.aborted && view.dataset.state === 'loading') view.dataset.state = 'ready';
}

// ---- token -------------------------------------------------------------

function setupToken() {
  const dialog = document.getElementById('token-dialog');
  const form = document.getElementById('token-form');
  const input = document.getElementById('token-input');
  const error = document.getElementById('token-error');
  const forget = document.getElementById('forget-token');
  let pending = null;
  api.setTokenPrompt((problem) => {
    if (pending) return pending;
    error.hidden = !problem;
    error.textContent = problem;
    input.value = '';
    pending = new Promise((resolve) => {
      const done = (token) => {
        pending = null;
        form.removeEventListener('submit', onSubmit);
        document.getElementById('token-cancel').removeEventListener('click', onCancel);
        dialog.close();
        forget.hidden = !token && !api.hasToken();
        resolve(token);
      };
      const onSubmit = (e) => {
        e.preventDefault();
        done(input.value.trim() || null);
      };
      const onCancel = () => done(null);
      form.addEventListener('submit', onSubmit);
      document.getElementById('token-cancel').addEventListener('click', onCancel);
      dialog.showModal();
      input.focus();
    });
    return pending;
  });
  forget.hidden = !api.hasToken();
  forget.addEventListener('click', () => {
    api.forgetToken();
    forget.hidden = true;
    render();
  });
}

// ---- agents ------------------------------------------------------------

async function agentsPage(signal) {
  const list = h('tbody');
  const create = createAgentForm();
  append(view, h('h1', 'Agents'),
    h('table.agents', h('thead', h('tr', ['id', 'state', 'run', 'history', 'usage', 'API key'].map((c) => h('th', c)))), list),
    h('h2', 'New agent'), create);
  const {agents = []} = await api.get('/v1/agents?pageSize=1000');
  if (signal.aborted) return;
  if (!agents.length) append(list, h('tr', h('td', {colSpan: 6}, 'No agent yet: create one below.')));
  for (const a of agents) {
    append(list, h('tr', {dataset: {agent: a.id}},
      h('td', h('a', {href: `#/agents/${encodeURIComponent(a.id)}`}, a.id)),
      h('td', h(`span.badge.${enumName(a.state, 'AGENT_STATE_')}`, enumName(a.state, 'AGENT_STATE_'))),
      h('td', h('code', a.runId || '')),
      h('td', String(a.historyLength)),
      h('td', usageText(a.usage)),
      h('td', a.hasApiKey ? 'set (not shown)' : '')));
  }
}

function createAgentForm() {
  const id = h('input#agent-id', {name: 'id', placeholder: 'generated when empty', pattern: '[A-Za-z0-9._\\-]{1,128}'});
  const system = h('textarea#agent-system', {name: 'system', rows: 3, placeholder: 'Use the tools to do the task.'});
  const profile = h('input#agent-profile', {name: 'profile', placeholder: 'the server default'});
  const model = h('input#agent-model', {name: 'model', placeholder: "the profile's"});
  const tools = h('input#agent-tools', {name: 'tools', placeholder: 'every tool; or names, comma-separated'});
  const out = h('div');
  const form = h('form.create-agent', {
    onsubmit: async (e) => {
      e.preventDefault();
      clear(out);
      const config = {};
      if (system.value.trim()) config.system = system.value;
      if (profile.value.trim()) config.profile = profile.value.trim();
      if (model.value.trim()) config.model = model.value.trim();
      const agent = {config};
      const names = tools.value.split(',').map((s) => s.trim()).filter(Boolean);
      if (names.length) agent.tools = {names};
      try {
        const res = await api.post('/v1/agents', {agentId: id.value.trim(), agent});
        location.hash = `#/agents/${encodeURIComponent(res.agent.id)}`;
      } catch (err) {
        append(out, errorView(err));
      }
    },
  },
  h('label', 'Id ', id), h('label', 'System prompt ', system), h('label', 'Profile ', profile),
  h('label', 'Model ', model), h('label', 'Tools ', tools), h('button#create-agent', {type: 'submit'}, 'Create'), out);
  return form;
}

async function agentPage(signal, id) {
  const info = h('div.agent-info');
  const runs = h('div.runs');
  const runList = h('tbody');
  const history = h('div.history');
  const msg = h('div');
  const p = api.path;
  const refresh = async () => {
    const {agent} = await api.get(p`/v1/agents/${id}`);
    clear(info);
    const c = agent.config || {};
    append(info,
      h('span', 'state ', h(`span.badge.${enumName(agent.state, 'AGENT_STATE_')}#agent-state`, enumName(agent.state, 'AGENT_STATE_'))),
      modelView(agent),
      h('span', `history ${agent.historyLength} message${agent.historyLength === 1 ? '' : 's'}`),
      h('span', usageText(agent.usage)),
      agent.hasApiKey ? h('span', 'API key set (never shown)') : null,
      agent.tools ? h('span', `tools: ${agent.tools.all ? 'all' : (agent.tools.names || []).join(', ') || 'none'}`) : null,
      agent.agentTools?.length ? h('span#agent-tools-info', 'calls agents: ', ...agent.agentTools.flatMap((t, i) => [i ? ', ' : '',
        h('a', {href: `#/agents/${encodeURIComponent(t.agentId)}`}, t.name || t.agentId)])) : null,
      agent.budget ? h('span#agent-budget', `budget: ${budgetText(agent.budget)}`) : null,
      c.system ? h('details', h('summary', 'system prompt'), h('pre', c.system)) : null);
    return agent;
  };
  const showRuns = async () => {
    const {runs: list = []} = await api.get(p`/v1/agents/${id}/runs` + '?pageSize=20');
    fillRuns(clear(runList), list);
  };
  const showHistory = async () => {
    const {messages = [], turns = []} = await api.get(p`/v1/agents/${id}/history` + '?includeTurns=true');
    clear(history);
    if (!messages.length) append(history, h('p.muted', 'No history yet.'));
    turns.forEach((t, i) => {
      append(history, h('div.turn', h('div.turn-head', `turn ${i + 1}`),
        (t.messageIndexes || []).map((mi) => {
          const m = messages[mi];
          return h(`div.message.${enumName(m.role, 'ROLE_')}`, h('div.role', enumName(m.role, 'ROLE_') + (m.compact ? ' (summary)' : '')),
            (m.parts || []).map(partView));
        })));
    });
  };

  const input = h('textarea#send-input', {rows: 3, placeholder: 'The task', required: true});
  const mode = h('select#send-permission',
    h('option', {value: 'PERMISSION_MODE_ALLOW_ALL'}, 'run every tool call'),
    h('option', {value: 'PERMISSION_MODE_ASK_ALL'}, 'ask before every tool call'),
    h('option', {value: 'PERMISSION_MODE_ASK_LISTED'}, 'ask for the tools listed'));
  const askTools = h('input#send-ask-tools', {placeholder: 'tool names, comma-separated'});
  const sendButton = h('button#send-button', {type: 'submit'}, 'Send');
  const stopButton = h('button#stop-button', {type: 'button', onclick: () => api.post(p`/v1/agents/${id}:stop`).catch(showError)}, 'Stop');
  const showError = (err) => append(clear(msg), errorView(err));
  const send = h('form.send', {
    onsubmit: async (e) => {
      e.preventDefault();
      clear(msg);
      const run = new RunView({answer: answerPermission, elicit: answerElicitation});
      runs.prepend(run.el);
      // The run goes on when this page is left or the connection breaks:
      // its page (#/runs/{id}) follows it again.
      const body = {input: [{text: input.value}], permissionMode: mode.value, onDisconnect: 'ON_DISCONNECT_CONTINUE'};
      const listed = askTools.value.split(',').map((s) => s.trim()).filter(Boolean);
      if (listed.length) body.askTools = listed;
      sendButton.disabled = true;
      try {
        await refresh().catch(() => {});
        await api.stream('POST', p`/v1/agents/${id}:send`, body, (ev) => {
          run.event(ev);
          if (ev.data?.runStarted) {
            refresh().catch(() => {});
            showRuns().catch(() => {});
          }
        }, signal);
        if (!run.ended && run.runId) await follow(run, run.runId, signal); // the stream broke: attach again
      } catch (err) {
        if (err.name === 'AbortError') return;
        if (run.runId && !(err instanceof api.APIError)) {
          await follow(run, run.runId, signal); // a network error mid-run
        } else {
          run.fail(statusOf(err));
        }
      } finally {
        sendButton.disabled = false;
      }
      if (!signal.aborted) {
        await refresh().catch(showError);
        await showRuns().catch(showError);
        await showHistory().catch(showError);
      }
    },
  }, h('label', 'Task ', input), h('div.row', h('label', 'Permission ', mode), h('label', 'Ask for ', askTools)), h('div.row', sendButton, ' ', stopButton));

  append(view,
    h('h1', h('a', {href: '#/agents'}, 'Agents'), ' / ', id),
    info,
    h('div.row',
      h('button#compact-button', {type: 'button', onclick: async () => {
        clear(msg);
        const run = new RunView();
        runs.prepend(run.el);
        try {
          await api.stream('POST', p`/v1/agents/${id}:compact`, {}, (ev) => run.event(ev), signal);
          await showHistory();
        } catch (err) {
          if (err.name !== 'AbortError') showError(err);
        }
      }}, 'Compact'),
      ' ',
      h('button.danger', {type: 'button', onclick: async () => {
        if (!confirm(`Delete agent ${id}? Its history is forgotten.`)) return;
        try {
          await api.del(p`/v1/agents/${id}`);
          location.hash = '#/agents';
        } catch (err) {
          showError(err);
        }
      }}, 'Delete')),
    msg,
    h('h2', 'Send a task'), send,
    runs,
    h('h2', 'Runs ', h('button', {type: 'button', onclick: () => showRuns().catch(showError)}, 'Refresh')),
    runsTable(runList),
    h('h2', 'History ', h('button', {type: 'button', onclick: () => showHistory().catch(showError)}, 'Refresh')), history);
  await refresh();
  await showRuns();
  await showHistory();
}

/**
 * modelView says which model an agent uses now, as GetAgent's
 * effectiveModel tells it (profile, model, protocol, base URL host; an agent
 * that names no model follows the server's default profile). Without it
 * (an agent that reaches no model) it says so, from the config.
 */
function modelView(agent) {
  const m = agent.effectiveModel;
  if (m) {
    const profile = m.profile ? [m.followsDefault ? " · the server's default profile " : ' · profile ', h('code#model-profile', m.profile)] : null;
    const protocol = m.protocol ? [' (', protocolName(m.protocol), ')'] : null;
    return h('span.model', 'model ', h('code#model-name', m.model), ' at ', h('code', m.baseUrlHost), protocol, profile);
  }
  const c = agent.config || {};
  if (c.profile) return h('span.model', 'no model: profile ', h('code#model-profile', c.profile), ' is not on this server');
  return h('span.model.no-model', 'no model: the agent names none and the server has no default model');
}

function protocolName(p) {
  return String(p).replace(/^PROTOCOL_/, '').toLowerCase();
}

// ---- runs --------------------------------------------------------------

function runsTable(body) {
  return h('table.runs-table', h('thead', h('tr', ['run', 'agent', 'state', 'started', 'duration', 'error', 'waiting for'].map((c) => h('th', c)))), body);
}

// budgetText is a Budget's limits in a few words.
function budgetText(b) {
  const parts = [];
  for (const [k, name] of [['inputTokens', 'input tokens'], ['outputTokens', 'output tokens'], ['modelRequests', 'model requests'],
    ['toolCalls', 'tool calls'], ['cost', 'cost']]) {
    if (b[k] !== undefined) parts.push(`${b[k]} ${name}`);
  }
  if (b.wallTime) parts.push(`${durationText(b.wallTime)} wall time`);
  return parts.join(' · ') || 'none';
}

// asTree orders runs (newest first) as trees: each root run (or a child
// whose parent is not in the list) followed by its child runs, oldest first,
// each followed by its own.
function asTree(runs) {
  const kids = new Map();
  const ids = new Set(runs.map((r) => r.id));
  for (const r of [...runs].reverse()) {
    if (r.parentRunId && ids.has(r.parentRunId)) kids.set(r.parentRunId, [...(kids.get(r.parentRunId) || []), r]);
  }
  const out = [];
  const walk = (r) => { out.push(r); for (const k of kids.get(r.id) || []) walk(k); };
  for (const r of runs) if (!r.parentRunId || !ids.has(r.parentRunId)) walk(r);
  return out;
}

// fillRuns lists runs into a table body, child runs under their parents.
function fillRuns(body, runs) {
  if (!runs.length) append(body, h('tr', h('td', {colSpan: 7}, 'No run yet.')));
  for (const r of asTree(runs)) {
    const state = enumName(r.state, 'RUN_STATE_');
    const pending = (r.pendingPermissions || []).map((q) => q.toolName);
    const inputs = (r.pendingElicitations || []).map((q) => q.toolName);
    const error = r.error ? runErrorText(r.error) : '';
    const depth = Number(r.depth || 0);
    const tree = depth ? {dataset: {depth: String(Math.min(depth, 5))}, title: `child run of ${r.parentRunId} (depth ${depth}), tree of ${r.rootRunId}`} : {};
    append(body, h('tr', {dataset: {run: r.id}},
      h('td.run-id', tree, h('a', {href: `#/runs/${encodeURIComponent(r.id)}`}, h('code', r.id))),
      h('td', h('a', {href: `#/agents/${encodeURIComponent(r.agentId)}`}, r.agentId)),
      h('td', h(`span.badge.${state}`, r.compaction ? `${state} (compaction)` : state)),
      h('td', r.startTime ? new Date(r.startTime).toLocaleString() : ''),
      h('td.duration', {title: r.endTime ? `ended ${new Date(r.endTime).toLocaleString()}` : 'running'}, runDuration(r)),
      h('td.run-error-cell', {title: error}, error.length > 200 ? error.slice(0, 199) + '…' : error),
      h('td', pending.length ? h('strong', `approval: ${pending.join(', ')}`) : '', pending.length && inputs.length ? ' ' : '',
        inputs.length ? h('strong', `input: ${inputs.join(', ')}`) : '')));
  }
}

// runDuration is how long a run took, or has run so far.
function runDuration(r) {
  if (!r.startTime) return '';
  return r.endTime ? durationText(between(r.startTime, r.endTime)) : `${durationText(between(r.startTime))} so far`;
}

// runErrorText is a run's error (a RunError) in one line: its reason, its
// error kind when the reason does not say it, and its message.
function runErrorText(e) {
  const kind = e.metadata?.kind && e.metadata.kind !== (e.reason || '').toLowerCase() ? ` (${e.metadata.kind})` : '';
  return `${e.reason || `code ${e.code}`}${kind}: ${e.message || ''}`;
}

async function runsPage(signal) {
  const body = h('tbody');
  append(view, h('h1', 'Runs'), runsTable(body));
  const {runs = []} = await api.get('/v1/runs?pageSize=100');
  if (!signal.aborted) fillRuns(body, runs);
}

/** resumedText says how often a run was resumed after a crash of its server. */
function resumedText(n) {
  return n === 1 ? 'resumed after a crash' : `resumed after a crash (${n} times)`;
}

async function runPage(signal, runId) {
  const p = api.path;
  const info = h('div.agent-info');
  const msg = h('div');
  const run = new RunView({answer: answerPermission, elicit: answerElicitation});
  let current = null;
  const refresh = async () => {
    const {run: r} = await api.get(p`/v1/runs/${runId}`);
    current = r;
    const state = enumName(r.state, 'RUN_STATE_');
    clear(info);
    append(info,
      h('span', 'state ', h(`span.badge.${state}#run-state`, state)),
      h('span', 'agent ', h('a', {href: `#/agents/${encodeURIComponent(r.agentId)}`}, r.agentId)),
      h('span', `started ${r.startTime ? new Date(r.startTime).toLocaleString() : ''}`),
      r.endTime ? h('span', `ended ${new Date(r.endTime).toLocaleString()}`) : null,
      r.endTime ? h('span#run-duration', `took ${runDuration(r)}`) : null,
      h('span', `${r.lastSeq || 0} events`),
      r.parentRunId ? h('span#run-parent', 'child run of ', h('a', {href: `#/runs/${encodeURIComponent(r.parentRunId)}`}, h('code', r.parentRunId)),
        ` (depth ${r.depth}, tree of `, h('a', {href: `#/runs/${encodeURIComponent(r.rootRunId)}`}, h('code', r.rootRunId)), ')') : null,
      r.result?.treeUsage ? h('span#run-usage', runUsageText(r.result.treeUsage)) : null,
      r.replica ? h('span', `replica ${r.replica}`) : null,
      r.attempts ? h('span.badge.resumed#run-resumed', resumedText(r.attempts)) : null,
      r.error ? h('span.error', runErrorText(r.error)) : null);
    return r;
  };
  const stop = h('button#run-stop', {type: 'button', onclick: async () => {
    try {
      await api.post(p`/v1/agents/${current.agentId}:stop`, {runId});
    } catch (err) {
      append(clear(msg), errorView(err));
    }
  }}, 'Stop');
  append(view, h('h1', h('a', {href: '#/runs'}, 'Runs'), ' / ', runId), info, h('div.row', stop), msg, run.el);
  const r = await refresh();
  if (r.eventsExpired) {
    append(run.el, h('p.muted', 'The events of this run were deleted after the server\'s event retention.'));
    return;
  }
  loaded(signal); // its events follow, until it ends
  await follow(run, runId, signal);
  if (!signal.aborted) await refresh().catch(() => {});
}

/**
 * follow attaches to a run from the view's last seq and draws its events
 * until the run ends; after a broken connection it attaches again from the
 * last event drawn, so that each event is drawn once.
 */
async function follow(run, runId, signal) {
  for (let attempt = 0; !run.ended && !signal.aborted; attempt++) {
    try {
      await api.stream('GET', api.path`/v1/runs/${runId}:attach` + `?afterSeq=${run.lastSeq}`, undefined, (ev) => run.event(ev), signal);
      return;
    } catch (err) {
      if (err.name === 'AbortError') return;
      if (err instanceof api.APIError) {
        run.fail(statusOf(err));
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 250 * 2 ** attempt)));
    }
  }
}

// statusOf is an error as the google.rpc.Status a stream's error event holds.
function statusOf(err) {
  if (!(err instanceof api.APIError)) return {message: err.message};
  return {code: err.code, message: err.message, details: [{'@type': 'google.rpc.ErrorInfo', reason: err.reason, metadata: err.metadata}]};
}

// answerPermission answers a run's permission request.
function answerPermission(runId, toolCallId, allow, reason) {
  return api.post(api.path`/v1/runs/${runId}/permissions/${toolCallId}`, {allow, reason});
}

// answerElicitation answers a run's elicitation request.
function answerElicitation(runId, elicitationId, action, content) {
  return api.post(api.path`/v1/runs/${runId}/elicitations/${elicitationId}`, {action, content});
}

// ---- tools -------------------------------------------------------------

async function toolsPage(signal) {
  const {tools = [], skills = []} = await api.get('/v1/tools');
  if (signal.aborted) return;
  append(view, h('h1', 'Tools'),
    h('table.tools', h('thead', h('tr', ['name', 'description', 'hints', 'source'].map((c) => h('th', c)))),
      h('tbody', tools.map((t) => h('tr',
        h('td', h('a', {href: `#/tools/${encodeURIComponent(t.name)}`}, t.name)),
        h('td', t.description),
        h('td', [t.readOnly ? 'read-only' : '', t.idempotent ? 'idempotent' : '', t.timeout ? `timeout ${durationText(t.timeout)}` : ''].filter(Boolean).join(', ')),
        h('td', h('code', t.source)))))),
    skills.length ? [h('h2', 'Skills'), h('ul', skills.map((s) => h('li', h('strong', s.name), ' ', s.description)))] : null);
}

async function toolPage(signal, name) {
  const {tools = []} = await api.get('/v1/tools');
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    append(view, h('p', `No tool ${name}. `, h('a', {href: '#/tools'}, 'Tools')));
    return;
  }
  const form = schemaForm(tool.inputSchema || {});
  const output = h('pre.tool-output#tool-output');
  const result = h('div#tool-result');
  const run = h('button#tool-run', {type: 'submit'}, 'Run');
  append(view, h('h1', h('a', {href: '#/tools'}, 'Tools'), ' / ', name), h('p', tool.description),
    h('details', h('summary', 'input schema'), h('pre', pretty(tool.inputSchema || {}))),
    h('form.tool-form', {
      onsubmit: async (e) => {
        e.preventDefault();
        clear(output);
        clear(result);
        let input;
        try {
          input = form.value();
        } catch (err) {
          append(result, errorView(err));
          return;
        }
        run.disabled = true;
        try {
          await api.stream('POST', api.path`/v1/tools/${name}:execute`, {input}, (ev) => {
            if (ev.name === 'error') {
              append(result, errorView({reason: ev.data.details?.[0]?.reason, message: ev.data.message}));
            } else if (ev.data.output) {
              append(output, h(`span.${enumName(ev.data.output.stream, 'OUTPUT_STREAM_') || 'output'}`, ev.data.output.data));
            } else if (ev.data.result) {
              const r = ev.data.result;
              append(result, h(`div.tool-call.${r.error ? 'failed' : 'done'}`,
                h('div.tool-head', r.error ? 'error' : 'result', ` in ${durationText(r.duration)}`, r.stop ? ' (stop)' : ''),
                (r.output?.content ? r.output.content.parts.map(partView) : h('pre.output', r.output?.json !== undefined ? pretty(r.output.json) : (r.output?.text ?? '')))));
            }
          }, signal);
        } catch (err) {
          if (err.name !== 'AbortError') append(result, errorView(err));
        } finally {
          run.disabled = false;
        }
      },
    }, form.el, run),
    h('h2', 'Output'), output, result);
}

/**
 * schemaForm builds a form for a JSON Schema object: an input per property
 * (text, number, checkbox, a choice for enums, JSON for the rest); value()
 * reads it back, leaving out empty optional fields.
 */
function schemaForm(schema) {
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const fields = [];
  const el = h('div.fields');
  if (!Object.keys(props).length && schema.type !== 'object') {
    const raw = h('textarea', {name: 'input', rows: 6}, '{}');
    append(el, h('label', 'Input (JSON) ', raw));
    return {el, value: () => JSON.parse(raw.value || '{}')};
  }
  for (const [name, s] of Object.entries(props)) {
    const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
    let input;
    let read;
    if (Array.isArray(s.enum)) {
      input = h('select', {name}, required.has(name) ? null : h('option', {value: ''}, ''), s.enum.map((v) => h('option', {value: JSON.stringify(v)}, String(v))));
      read = () => (input.value === '' ? undefined : JSON.parse(input.value));
    } else if (type === 'boolean') {
      input = h('input', {type: 'checkbox', name});
      read = () => input.checked;
    } else if (type === 'number' || type === 'integer') {
      input = h('input', {type: 'number', name, step: type === 'integer' ? '1' : 'any', required: required.has(name)});
      read = () => (input.value === '' ? undefined : Number(input.value));
    } else if (type === 'string') {
      input = h('input', {type: 'text', name, required: required.has(name)});
      read = () => (input.value === '' && !required.has(name) ? undefined : input.value);
    } else {
      input = h('textarea', {name, rows: 3, placeholder: 'JSON'});
      read = () => {
        if (input.value.trim() === '') return undefined;
        try {
          return JSON.parse(input.value);
        } catch {
          throw new Error(`${name}: not JSON`);
        }
      };
    }
    fields.push([name, read]);
    append(el, h('label', h('span.field-name', name, required.has(name) ? ' *' : ''), ' ', input,
      s.description ? h('span.hint', s.description) : null));
  }
  return {
    el,
    value: () => {
      const out = {};
      for (const [name, read] of fields) {
        const v = read();
        if (v !== undefined) out[name] = v;
      }
      return out;
    },
  };
}

setupToken();
window.addEventListener('hashchange', render);
render();
