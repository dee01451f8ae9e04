// Drives the web console in a real browser (Debian's chromium through
// playwright-core) against a real agent-server with the scripted model:
// give the token, create an agent, send a task whose shell call needs an
// approval, watch the streamed text and the tool's live output, approve,
// see the result; then try a tool from the tools page. Then: deny a call
// with a reason and see the denial reach the tool result and the model;
// stop a running run with the agent page's Stop and with the run page's;
// see a run whose model refuses the key fail with its reason and kind.
// Past runs' pages say how each approval was answered; the agent page names
// the model and profile; the runs table has each run's duration and error;
// durations read as people write them (310 ms, 4.2 s, 1 min 5 s). A tool's
// request for input (an MCP server's elicitation) is a form, answered.
//
// It waits on the console's own state, never on time: the view's data-route
// and data-state (ready once the page's data is drawn), and the elements a
// step expects. The timeout below only bounds a page that hangs; on a
// loaded two-core machine a step can take many times what it takes alone.
//
// tests/console_test.go runs it: node console.mjs, with
//   CONSOLE_URL        the server's HTTP address
//   CONSOLE_TOKEN      its bearer token
//   CONSOLE_SYSTEM     the system prompt the scripted model answers
//   CONSOLE_SYSTEM_DENY, CONSOLE_SYSTEM_SLOW, CONSOLE_SYSTEM_FAIL
//                      those of a model whose shell call is denied, of one
//                      whose shell call runs until stopped, of one that fails
//   CONSOLE_MCP_URL, CONSOLE_SYSTEM_ELICIT
//                      a second server whose tools are the MCP test server's
//                      (same token), and the system prompt of a model that
//                      calls its ask_user, which asks for input (elicitation)
//   CONSOLE_SHOTS      the folder for screenshots
//   CONSOLE_SECRETS    comma-separated texts no page may show (the token, API keys)
//   CHROMIUM           the browser (default /usr/bin/chromium)
// It prints one line per step and exits non-zero on the first failure.

import {env, launch} from './browser.mjs';
import {join} from 'node:path';

const url = env('CONSOLE_URL');
const token = env('CONSOLE_TOKEN');
const system = env('CONSOLE_SYSTEM');
const systemDeny = env('CONSOLE_SYSTEM_DENY');
const systemSlow = env('CONSOLE_SYSTEM_SLOW');
const systemFail = env('CONSOLE_SYSTEM_FAIL');
const systemLead = env('CONSOLE_SYSTEM_LEAD');
const systemHelper = env('CONSOLE_SYSTEM_HELPER');
const mcpUrl = env('CONSOLE_MCP_URL');
const systemElicit = env('CONSOLE_SYSTEM_ELICIT');
const shots = env('CONSOLE_SHOTS');
const secrets = [token, ...(process.env.CONSOLE_SECRETS || '').split(',')].filter(Boolean);
const noSecret = async (page) => {
  const html = await page.content();
  for (const s of secrets) if (html.includes(s)) throw new Error(`a secret is shown on ${page.url()}`);
};
const timeout = 90000;

const {context, close} = await launch({width: 1200, height: 900});
let current = '';
const step = (what) => {
  current = what;
  console.log(`step: ${what}`);
};
const problems = [];
let page;
// shown waits until the console shows the page of route (compared with op,
// a CSS attribute operator: = or ^=) with its data drawn, or fails with the
// error the page shows instead.
const shown = async (route, op = '=') => {
  const at = `#view[data-route${op}"${route}"]`;
  await page.locator(`${at}[data-state=ready], ${at}[data-state=error]`).waitFor();
  if (await page.locator(`${at}[data-state=error]`).count()) throw new Error(`${route}: the page shows ${JSON.stringify(await page.locator('#view').innerText())}`);
};
// created waits for the page of the agent the form just created, or fails
// with the error the form shows instead.
const created = async (id) => {
  const form = page.locator('form.create-agent .error');
  await page.locator(`#view[data-route="#/agents/${id}"][data-state=ready], #view[data-route="#/agents/${id}"][data-state=error], form.create-agent .error`).first().waitFor();
  if (await form.count()) throw new Error(`creating ${id}: ${await form.innerText()}`);
  await shown(`#/agents/${id}`);
};
// humane checks that a duration reads as people write it (310 ms, 4.2 s,
// 42 s, 1 min 5 s), not as a protobuf Duration (0.310786194s).
const humane = (what, text) => {
  if (!/(^|\s)\d+(\.\d)? (ms|s|min|h)\b/.test(text) || /\d\.\d{2,}s/.test(text)) throw new Error(`${what} reads ${JSON.stringify(text)}`);
};
try {
  page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(timeout);
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  // The first call answers 401 until the token is given: the browser logs it.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`console error: ${m.text()}`);
  });

  step('open the console and give the token');
  await page.goto(url + '/');
  await page.locator('#token-dialog[open]').waitFor();
  await page.fill('#token-input', token);
  await page.click('#token-dialog button[type=submit]');
  await shown('#/agents');
  const stored = await page.evaluate(() => sessionStorage.getItem('agentcore.token'));
  if (stored !== token) throw new Error('the token is not in session storage');

  step('create an agent naming its model: the page shows the model and the profile');
  await page.fill('#agent-id', 'console-agent');
  await page.fill('#agent-system', system);
  await page.fill('#agent-model', 'console-model');
  await page.click('#create-agent');
  await created('console-agent');
  if (await page.locator('#model-name').innerText() !== 'console-model') throw new Error('the agent page does not name the model');
  if (await page.locator('#model-profile').innerText() !== 'default') throw new Error('the agent page does not name the profile');

  step('send a task');
  await page.fill('#send-input', 'Build the greeting and tell me how it went.');
  await page.selectOption('#send-permission', 'PERMISSION_MODE_ASK_LISTED');
  await page.fill('#send-ask-tools', 'shell');
  await page.click('#send-button');
  const run = page.locator('section.run').first();
  await run.locator('.event-text', {hasText: 'Let me build it.'}).waitFor();

  step('approve the shell call');
  const card = run.locator('.permission');
  await card.locator('button.allow').waitFor();
  if (await run.locator('.tool-call').count() !== 0) throw new Error('the shell call started before it was approved');
  await page.screenshot({path: join(shots, 'console-approval.png'), fullPage: true});
  await card.locator('button.allow').click();
  await card.locator('.status', {hasText: 'allowed'}).waitFor();

  step('watch the tool output stream');
  const call = run.locator('.tool-call');
  await call.locator('.tool-output .stdout', {hasText: 'building'}).first().waitFor();
  await call.locator('.tool-output .stderr', {hasText: 'a warning'}).waitFor();
  await call.locator('.tool-result').waitFor();
  humane('the tool call\'s duration', await call.locator('.tool-head .status').innerText());

  step('see the result');
  await run.locator('.run-result', {hasText: 'The greeting is built.'}).waitFor();
  await page.locator('.history .turn').first().waitFor();
  await page.locator('#agent-state', {hasText: 'idle'}).waitFor();
  await page.screenshot({path: join(shots, 'console-run.png'), fullPage: true});
  await noSecret(page);

  step('the runs table: the run\'s duration, no error');
  {
    const row = page.locator('.runs-table tbody tr').first();
    await row.locator('.badge', {hasText: 'succeeded'}).waitFor();
    humane('the run\'s duration', await row.locator('td.duration').innerText());
    if (await row.locator('td.run-error-cell').innerText() !== '') throw new Error('a succeeded run shows an error');
  }

  step('open the run from the runs list: its events replayed, its approval answered');
  await page.locator('.runs-table tbody tr a code').first().click();
  await shown('#/runs/run_', '^=');
  await page.locator('#run-state', {hasText: 'succeeded'}).waitFor();
  await page.locator('section.run .tool-output .stderr', {hasText: 'a warning'}).waitFor();
  await page.locator('section.run .run-result', {hasText: 'The greeting is built.'}).waitFor();
  if (await page.locator('section.run .permission button.allow').count() !== 0) throw new Error('an answered permission still offers buttons');
  await page.locator('section.run .permission[data-answer=allowed] .status', {hasText: /^allowed$/}).waitFor();
  humane('the past run\'s tool call', await page.locator('section.run .tool-call .tool-head .status').innerText());
  humane('the run page\'s duration', await page.locator('#run-duration').innerText());
  await page.goto(url + '/#/agents');
  await shown('#/agents');
  await page.locator('tr[data-agent=console-agent]').waitFor();
  await noSecret(page);

  step('try a tool');
  await page.goto(url + '/#/tools/count');
  await shown('#/tools/count');
  await page.fill('input[name=n]', '3');
  await page.click('#tool-run');
  await page.locator('#tool-output', {hasText: 'counted to 3'}).waitFor();
  await page.locator('#tool-result .tool-call.done').waitFor();
  humane('the tool\'s duration', await page.locator('#tool-result .tool-head').innerText());
  await page.screenshot({path: join(shots, 'console-tool.png'), fullPage: true});
  await noSecret(page);

  // createAndSend creates an agent from the agents page, sends it a task
  // and returns the run's section.
  const createAndSend = async (id, prompt, mode) => {
    await page.goto(url + '/#/agents');
    await shown('#/agents');
    await page.fill('#agent-id', id);
    await page.fill('#agent-system', prompt);
    await page.click('#create-agent');
    await created(id);
    await page.fill('#send-input', 'Do it.');
    await page.selectOption('#send-permission', mode);
    await page.click('#send-button');
    return page.locator('section.run').first();
  };

  step('deny a call with a reason; an agent without a model names its profile');
  {
    const denied = await createAndSend('console-deny', systemDeny, 'PERMISSION_MODE_ASK_ALL');
    const model = await page.locator('.agent-info .model').innerText();
    if (/model default/.test(model) || !/profile default/.test(model)) throw new Error(`the agent page says ${JSON.stringify(model)}, want its profile named as one`);
    const card = denied.locator('.permission');
    await card.locator('button.deny').waitFor();
    await card.locator('input[aria-label=reason]').fill('no shell today');
    await card.locator('button.deny').click();
    await card.locator('.status', {hasText: 'denied: no shell today'}).waitFor();
    await denied.locator('.tool-call.failed .tool-result', {hasText: 'no shell today'}).waitFor();
    await denied.locator('.run-result', {hasText: 'I was told:'}).waitFor();
    if (!(await denied.locator('.run-result').innerText()).includes('no shell today')) throw new Error('the model was not told the reason');
    if (await denied.locator('.tool-output .stdout').count() !== 0) throw new Error('the denied call ran');
    await denied.locator('.tool-call .tool-head .status', {hasText: 'not run (denied: no shell today)'}).waitFor();
    await page.screenshot({path: join(shots, 'console-denied.png'), fullPage: true});
  }

  step('the denied run\'s page says the call was denied, and why');
  {
    await page.locator('#agent-state', {hasText: 'idle'}).waitFor();
    await page.locator('.runs-table tbody tr a code').first().click();
    await shown('#/runs/run_', '^=');
    await page.locator('#run-state', {hasText: 'succeeded'}).waitFor();
    await page.locator('section.run .permission[data-answer=denied] .status', {hasText: /^denied: no shell today$/}).waitFor();
    await page.locator('section.run .run-result', {hasText: 'I was told:'}).waitFor();
  }

  // stoppedView checks a stopped run's section: the killed call, and the
  // run's end (the stop cut the model loop: ABORTED, kind aborted).
  const stoppedView = async (run) => {
    await run.locator('.tool-call.failed .tool-result', {hasText: 'tool "shell" was stopped'}).waitFor();
    const end = run.locator('.run-error', {hasText: 'ABORTED'});
    await end.waitFor();
    const text = await end.innerText();
    if (!text.includes('(aborted)') || !text.includes('the run was stopped')) throw new Error(`the stopped run shows ${JSON.stringify(text)}`);
  };

  step('stop a running run from its agent page');
  {
    const running = await createAndSend('console-stop', systemSlow, 'PERMISSION_MODE_ALLOW_ALL');
    await running.locator('.tool-output .stdout', {hasText: 'waiting'}).waitFor();
    await page.locator('#agent-state', {hasText: 'running'}).waitFor();
    await page.click('#stop-button');
    await stoppedView(running);
    await page.locator('#agent-state', {hasText: 'idle'}).waitFor();
    const row = page.locator('.runs-table tbody tr').first();
    await row.locator('.badge', {hasText: 'stopped'}).waitFor();
    const error = await row.locator('td.run-error-cell', {hasText: 'the run was stopped'}).innerText();
    if (!error.startsWith('ABORTED')) throw new Error(`the runs table's error column shows ${JSON.stringify(error)}`);
    humane('the stopped run\'s duration', await row.locator('td.duration').innerText());
  }

  step('stop a running run from its run page');
  {
    const running = await createAndSend('console-stop-run', systemSlow, 'PERMISSION_MODE_ALLOW_ALL');
    await running.locator('.tool-output .stdout', {hasText: 'waiting'}).waitFor();
    await page.locator('.runs-table tbody tr a code').first().click();
    await shown('#/runs/run_', '^=');
    await page.locator('#run-state', {hasText: 'running'}).waitFor();
    const run = page.locator('section.run');
    await run.locator('.tool-output .stdout', {hasText: 'waiting'}).waitFor();
    await page.click('#run-stop');
    await stoppedView(run);
    await page.locator('#run-state', {hasText: 'stopped'}).waitFor();
    await page.screenshot({path: join(shots, 'console-stopped.png'), fullPage: true});
  }

  step('a failed run shows its error kind');
  {
    const failed = await createAndSend('console-fail', systemFail, 'PERMISSION_MODE_ALLOW_ALL');
    await failed.locator('.run-error', {hasText: 'AUTH'}).waitFor();
    const text = await failed.locator('.run-error').innerText();
    if (!text.includes('(auth)') || !text.includes('bad key')) throw new Error(`the failed run shows ${JSON.stringify(text)}, want its reason, kind (auth) and message`);
    await page.locator('#agent-state', {hasText: 'idle'}).waitFor();
    const cell = page.locator('.runs-table tbody tr').first().locator('td.run-error-cell', {hasText: 'bad key'});
    await cell.waitFor();
    const error = await cell.innerText();
    if (!error.startsWith('AUTH') || !error.includes('bad key')) throw new Error(`the runs table's error column shows ${JSON.stringify(error)}`);
    await page.screenshot({path: join(shots, 'console-failed.png'), fullPage: true});
  }

  step('a run with a child run: the child drawn inside its call, the tree in the runs table');
  {
    const create = async (agent) => {
      const resp = await fetch(url + '/v1/agents', {method: 'POST', headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json'},
        body: JSON.stringify({agent})});
      if (!resp.ok) throw new Error(`creating ${agent.id}: ${resp.status} ${await resp.text()}`);
    };
    await create({id: 'console-helper', config: {system: systemHelper}, tools: {names: []}});
    await create({id: 'console-lead', config: {system: systemLead}, tools: {names: []}, agentTools: [{agentId: 'console-helper', name: 'helper'}]});
    await page.goto(url + '/#/agents/console-lead');
    await shown('#/agents/console-lead');
    await page.locator('#agent-tools-info', {hasText: 'calls agents: helper'}).waitFor();
    await page.fill('#send-input', 'Ask the helper.');
    await page.selectOption('#send-permission', 'PERMISSION_MODE_ALLOW_ALL');
    await page.click('#send-button');
    const run = page.locator('section.run').first();
    const child = run.locator('.tool-call section.run.child-run[data-depth="1"]');
    await child.locator('.event-text', {hasText: 'the helper did it'}).waitFor();
    await child.locator('.run-result').waitFor();
    await run.locator('.run-result .tree-usage', {hasText: '1 child runs'}).waitFor();
    await run.locator('.run-result', {hasText: 'The helper said: the helper did it'}).waitFor();
    await page.screenshot({path: join(shots, 'console-child-run.png'), fullPage: true});
    await page.goto(url + '/#/runs');
    await shown('#/runs');
    const rows = page.locator('.runs-table tbody tr');
    const cells = await rows.locator('td.run-id').evaluateAll((tds) => tds.slice(0, 2).map((td) => td.dataset.depth || '0'));
    if (cells.join(',') !== '0,1') throw new Error(`the runs table lists the tree's runs at depths ${cells}, want the root then its child`);
    await rows.nth(1).locator('a code').click();
    await shown('#/runs/run_', '^=');
    await page.locator('#run-parent', {hasText: 'child run of'}).waitFor();
  }

  step('a tool asks for input: the form, its default filled in, submitted');
  {
    const resp = await fetch(mcpUrl + '/v1/agents', {method: 'POST', headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json'},
      body: JSON.stringify({agent: {id: 'console-elicit', config: {system: systemElicit}}})});
    if (!resp.ok) throw new Error(`creating console-elicit: ${resp.status} ${await resp.text()}`);
    await page.goto(mcpUrl + '/#/agents/console-elicit');
    await page.locator('#token-dialog[open]').waitFor(); // another origin: the token again
    await page.fill('#token-input', token);
    await page.click('#token-dialog button[type=submit]');
    await shown('#/agents/console-elicit');
    await page.fill('#send-input', 'Greet me.');
    await page.selectOption('#send-permission', 'PERMISSION_MODE_ALLOW_ALL');
    await page.click('#send-button');
    const run = page.locator('section.run').first();
    const card = run.locator('.tool-call .elicitation');
    await card.locator('.message', {hasText: 'Who are you?'}).waitFor();
    const greeting = await card.locator('input[name=greeting]').inputValue();
    if (greeting !== 'hello') throw new Error(`the greeting field starts as ${JSON.stringify(greeting)}, want the schema's default "hello"`);
    await page.screenshot({path: join(shots, 'console-elicitation.png'), fullPage: true});
    await card.locator('input[name=name]').fill('Ada');
    await card.locator('button.accept').click();
    await run.locator('.elicitation[data-answer=accept] .status', {hasText: /^accepted$/}).waitFor();
    if (await card.locator('button').count() !== 0) throw new Error('an answered elicitation still offers buttons');
    await run.locator('.run-result', {hasText: 'hello, Ada'}).waitFor();
  }

  await noSecret(page);
} catch (err) {
  problems.unshift(`step "${current}" failed: ${err.stack || err}`);
  // What the page showed, for whoever reads the failure.
  if (page) {
    await page.screenshot({path: join(shots, 'console-failure.png'), fullPage: true}).catch(() => {});
    const shownText = await page.locator('#view').innerText({timeout: 5000}).catch(() => '');
    problems.push(`the page (${page.url()}), screenshot console-failure.png:\n${shownText.slice(0, 3000)}`);
  }
} finally {
  await close();
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('ok');
