// What the console's browser tests share: their settings from the
// environment, and a headless Debian chromium in a profile of its own.
import {chromium} from 'playwright-core';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';

// env is the environment variable k, which the Go test must set.
export const env = (k) => {
  const v = process.env[k];
  if (v === undefined) throw new Error(`${k} is not set`);
  return v;
};

// launch starts chromium (CHROMIUM, or Debian's) headless in a new profile,
// with viewport when given; close ends it and removes the profile.
export async function launch(viewport) {
  const profile = mkdtempSync(join(tmpdir(), 'agentcore-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    ...(viewport && {viewport}),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const close = async () => {
    await context.close();
    rmSync(profile, {recursive: true, force: true});
  };
  return {context, close};
}
