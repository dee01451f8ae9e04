// Drives the console's Connections view in a real browser (Debian's
// chromium through playwright-core) against a real agent-server holding an
// MCP server that requires OAuth (internal/oauthtest's): the server is not
// connected; Connect opens the authorization server's page in a new window,
// where the person consents (the test's authorization server consents at
// once and sends the browser back); the window lands on agent-server's
// callback page, "Connected"; the view, which followed the connection
// meanwhile, shows it connected, whose it is and its scopes; Disconnect
// forgets it. First as a user of the tenant (the Acting-for-user field),
// then for the tenant itself. The pages' HTML is written to the shots
// folder so that the Go test can look for the tokens in it.
//
// tests/console_connections_test.go runs it: node connections.mjs, with
//   CONSOLE_URL     the server's HTTP address
//   CONSOLE_TOKEN   its bearer token
//   CONSOLE_SERVER  the MCP server's name (its definition's)
//   CONSOLE_SHOTS   the folder for screenshots and the pages' HTML
//   CHROMIUM        the browser (default /usr/bin/chromium)
// It prints one line per step and exits non-zero on the first failure.

import {env, launch} from './browser.mjs';
import {writeFileSync} from 'node:fs';
import {join} from 'node:path';

const url = env('CONSOLE_URL');
const token = env('CONSOLE_TOKEN');
const server = env('CONSOLE_SERVER');
const shots = env('CONSOLE_SHOTS');
const timeout = 90000;

const {context, close} = await launch({width: 1200, height: 800});
let current = '';
const step = (what) => {
  current = what;
  console.log(`step: ${what}`);
};
const problems = [];
let page;
const row = (state) => page.locator(`table.connections tr[data-server="${server}"][data-state="${state}"]`);
const keep = async (p, name) => {
  writeFileSync(join(shots, `${name}.html`), await p.content());
  await p.screenshot({path: join(shots, `${name}.png`), fullPage: true});
};

// connect clicks Connect and follows the authorization window to the
// callback's page, which must say connected; the view must follow.
const connect = async (whose, name) => {
  const popup = context.waitForEvent('page');
  await row('not-connected').locator('button.connect').click();
  const auth = await popup;
  auth.setDefaultTimeout(timeout);
  await auth.locator('body[data-outcome]').waitFor();
  const outcome = await auth.locator('body').getAttribute('data-outcome');
  if (outcome !== 'connected') throw new Error(`the callback page says ${outcome}: ${await auth.locator('body').innerText()}`);
  if (!new URL(auth.url()).pathname.endsWith('/v1/oauth/callback')) throw new Error(`the window ended at ${auth.url()}`);
  await keep(auth, `${name}-callback`);
  await auth.close();
  const done = row('connected');
  await done.waitFor();
  const text = await done.innerText();
  if (!text.includes(whose)) throw new Error(`the connected row does not say whose it is (${whose}): ${text}`);
  await keep(page, name);
};

try {
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`console error: ${m.text()}`);
  });

  step('open the Connections view with the token: the server is not connected');
  await page.goto(url + '/#/connections');
  await page.locator('#token-dialog[open]').waitFor();
  await page.fill('#token-input', token);
  await page.click('#token-dialog button[type=submit]');
  await page.locator('#view[data-route="#/connections"][data-state=ready]').waitFor();
  await row('not-connected').waitFor();

  step('act for a user and connect: consent in the new window, the view shows it connected');
  await page.fill('#connections-user', 'alice@example.com');
  await page.click('form.connections-user button[type=submit]');
  await row('not-connected').waitFor();
  await connect('user alice@example.com', 'connections-user');
  if ((await page.evaluate(() => sessionStorage.getItem('agentcore.user'))) !== 'alice@example.com') throw new Error('the user is not kept in the tab');

  step('another user is not connected; the tenant itself neither');
  await page.fill('#connections-user', 'bob@example.com');
  await page.click('form.connections-user button[type=submit]');
  await row('not-connected').waitFor();
  await page.fill('#connections-user', '');
  await page.click('form.connections-user button[type=submit]');
  await row('not-connected').waitFor();

  step('connect the tenant: every user without a connection of its own uses it');
  await connect('the tenant', 'connections-tenant');
  await page.fill('#connections-user', 'bob@example.com');
  await page.click('form.connections-user button[type=submit]');
  await row('connected').filter({hasText: 'the tenant'}).waitFor();

  step('alice disconnects hers: she falls back on the tenant\'s');
  await page.fill('#connections-user', 'alice@example.com');
  await page.click('form.connections-user button[type=submit]');
  await row('connected').filter({hasText: 'user alice@example.com'}).waitFor();
  await row('connected').locator('button.disconnect').click();
  await row('connected').filter({hasText: 'the tenant'}).waitFor();
  await keep(page, 'connections-after');
} catch (err) {
  problems.unshift(`step "${current}" failed: ${err.stack || err}`);
  if (page) {
    await page.screenshot({path: join(shots, 'connections-failure.png'), fullPage: true}).catch(() => {});
    const shownText = await page.locator('#view').innerText({timeout: 5000}).catch(() => '');
    problems.push(`the page (${page.url()}), screenshot connections-failure.png:\n${shownText.slice(0, 3000)}`);
  }
} finally {
  await close();
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('ok');
