// An empty coordination state in Debian's headless Chromium: every model page shows the one
// setup notice saying how to start, and an item nobody knows is "Not found", not an empty page.
// Usage: node setup.mjs <base-url> <screenshot.png>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot] = args('setup.mjs');

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const tid = (id) => page.locator(`[data-testid="${id}"]`);
  const model = await (await fetch(`${base}/api/dashboard`)).json();
  assert.match(model.setup, /agent-coord init --remote/, 'the model carries the setup notice');

  for (const path of ['/', '/operator', '/batches', '/machines', '/health']) {
    step(`${path} shows the one setup notice`);
    await page.goto(`${base}${path}`);
    await tid('setup-notice').waitFor();
    assert.equal(await tid('setup-notice').count(), 1);
    assert.equal((await tid('setup-notice').innerText()).trim(), model.setup);
    assert.equal(await page.getByRole('status').filter({ hasText: 'No coordination state found' }).count(), 1);
  }

  step('an unknown item says Not found');
  await page.goto(`${base}/items/acme/app/999`);
  await tid('item-not-found').waitFor();
  assert.match(await tid('item-not-found').innerText(), /Not found\..*acme\/app#999 is not in the coordination state/s);
  assert.equal(await tid('error-banner').count(), 0, 'not a load failure');
  assert.equal((await tid('item-title').innerText()).trim(), 'Work item #999');

  await page.goto(`${base}/`);
  await tid('setup-notice').waitFor();
  await page.screenshot({ path: screenshot, fullPage: true });
  assert.deepEqual(errors, [], 'no page errors');
  console.log('browser test passed');
} finally {
  await browser.close();
}
