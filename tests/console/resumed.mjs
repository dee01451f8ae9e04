// The console's view of a run resumed after a crash of its server
// (tests/crash_test.go's TestPoisonRun): the run's page says how often it
// was resumed, and its events show each resumption.
import {chromium} from 'playwright-core';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';

const env = (k) => {
  const v = process.env[k];
  if (v === undefined) throw new Error(`${k} is not set`);
  return v;
};
const url = env('CONSOLE_URL');
const token = env('CONSOLE_TOKEN');
const run = env('CONSOLE_RUN');
const badge = env('CONSOLE_RESUMED');

const profile = mkdtempSync(join(tmpdir(), 'agentcore-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
let failed = '';
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(60000);
  await page.goto(url + '/');
  await page.locator('#token-dialog[open]').waitFor();
  await page.fill('#token-input', token);
  await page.click('#token-dialog button[type=submit]');
  await page.locator('#view[data-route="#/agents"][data-state=ready]').waitFor();
  await page.goto(`${url}/#/runs/${run}`);
  await page.locator('#run-resumed', {hasText: badge}).waitFor();
  await page.locator('.line.resumed', {hasText: 'resumed after a crash'}).first().waitFor();
} catch (err) {
  failed = String(err.stack || err);
} finally {
  await context.close();
  rmSync(profile, {recursive: true, force: true});
}
if (failed) {
  console.error(failed);
  process.exit(1);
}
console.log('ok');
