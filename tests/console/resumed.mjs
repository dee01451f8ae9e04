// The console's view of a run resumed after a crash of its server
// (tests/crash_test.go's TestPoisonRun): the run's page says how often it
// was resumed, and its events show each resumption.

import {env, launch} from './browser.mjs';
const url = env('CONSOLE_URL');
const token = env('CONSOLE_TOKEN');
const run = env('CONSOLE_RUN');
const badge = env('CONSOLE_RESUMED');

const {context, close} = await launch();
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
  await close();
}
if (failed) {
  console.error(failed);
  process.exit(1);
}
console.log('ok');
