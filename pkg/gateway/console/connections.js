// The Connections view (#/connections): the MCP servers that require OAuth
// and whether the console's caller is connected to each. Connect opens the
// authorization server's page in a new window; the person consents there,
// the authorization server sends the browser to agent-server's callback
// route, and this view, following the connection meanwhile, shows it
// connected. The caller is the console's tenant (its token), and the user
// set here (the x-agentcore-user header of every call), if any. Tokens
// never reach the page: the API shows only their state, scopes and expiry.

import * as api from './api.js';
import {h, append, clear, enumName} from './dom.js';

// poll is how often a pending connection is read again.
const poll = 1500;

export async function connectionsPage(view, signal) {
  const table = h('tbody');
  const note = h('p.hint#connections-note');
  const user = h('input#connections-user', {value: api.getUser(), placeholder: 'none: the tenant\'s own', autocomplete: 'off'});
  const draw = (list) => {
    clear(table);
    for (const c of list) table.append(row(c));
    note.textContent = list.length ? '' : 'No MCP server of this agent-server requires OAuth.';
  };
  const refresh = async () => {
    const {connections = []} = await api.get('/v1/connections');
    if (!signal.aborted) draw(connections);
    return connections;
  };
  // follow reads the connections until server's is no longer pending.
  const follow = async (server) => {
    while (!signal.aborted) {
      await new Promise((r) => setTimeout(r, poll));
      if (signal.aborted) return;
      const list = await refresh();
      if (list.find((c) => c.server === server)?.state !== 'CONNECTION_STATE_PENDING') return;
    }
  };
  const row = (c) => {
    const state = enumName(c.state, 'CONNECTION_STATE_');
    const actions = h('td.actions');
    const connect = h('button.connect', {type: 'button'}, c.state === 'CONNECTION_STATE_CONNECTED' ? 'Reconnect' : 'Connect');
    connect.addEventListener('click', async () => {
      connect.disabled = true;
      try {
        const resp = await api.post(api.path`/v1/connections/${c.server}` + ':connect');
        if (resp.authorizationUrl) {
          window.open(resp.authorizationUrl, '_blank', 'noopener');
          append(actions, ' ', h('a.authorize', {href: resp.authorizationUrl, target: '_blank', rel: 'noopener'}, 'open the authorization page'));
          await follow(c.server);
        } else {
          await refresh();
        }
      } catch (err) {
        append(actions, h('span.error', ` ${err.reason || ''} ${err.message}`));
      } finally {
        connect.disabled = false;
      }
    });
    append(actions, connect);
    if (c.state === 'CONNECTION_STATE_CONNECTED' && (c.subject || '') === api.getUser()) {
      append(actions, ' ', h('button.disconnect', {type: 'button', onclick: async () => {
        try {
          await api.del(api.path`/v1/connections/${c.server}`);
          await refresh();
        } catch (err) {
          append(actions, h('span.error', ` ${err.reason || ''} ${err.message}`));
        }
      }}, 'Disconnect'));
    }
    const whose = c.state === 'CONNECTION_STATE_NOT_CONNECTED' ? '' : (c.subject ? `user ${c.subject}` : 'the tenant');
    return h('tr', {dataset: {server: c.server, state: state.replaceAll(' ', '-')}},
      h('td', h('code', c.server)),
      h('td.state', state, c.consent ? '' : ' (client credentials)'),
      h('td', whose),
      h('td', (c.scopes || []).join(' ')),
      h('td', c.expireTime ? new Date(c.expireTime).toLocaleString() : ''),
      actions);
  };
  append(view, h('h1', 'Connections'),
    h('p', 'The MCP servers that need OAuth. A run uses its user\'s connection, else its tenant\'s.'),
    h('form.connections-user', {onsubmit: (e) => {
      e.preventDefault();
      api.setUser(user.value.trim());
      refresh();
    }}, h('label', 'Acting for user ', user), ' ', h('button', {type: 'submit'}, 'Use')),
    h('table.connections', h('thead', h('tr', ['server', 'state', 'whose', 'scopes', 'token expires', ''].map((t) => h('th', t)))), table),
    note);
  draw((await api.get('/v1/connections')).connections || []);
}
