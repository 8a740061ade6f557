// Drives the served dashboard in Debian's headless Chromium.
// Usage: node dashboard.mjs <base-url> <screenshot.png>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot] = args('dashboard.mjs');

const PROMPT = [
  'Repository: acme/app',
  'Batch id: b-browser',
  'Batch objective: Imported through the browser.',
  'Items:',
  '- PR #31: https://github.com/acme/app/pull/31',
  '  Context: Browser import',
  'Suggested lanes:',
  '- only (owner: w31): PR #31',
  '',
].join('\n');

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const model = await (await fetch(`${base}/api/dashboard`)).json();
  const tid = (id) => page.locator(`[data-testid="${id}"]`);

  step('overview counts match the model');
  await page.goto(`${base}/`);
  await tid('model-version').waitFor({ state: 'attached' });
  assert.equal((await tid('count-needs-attention').innerText()).trim(), String(model.counts.needsAttention));
  assert.equal((await tid('count-batches').innerText()).trim(), String(model.counts.batches));
  assert.equal((await tid('count-health-warnings').innerText()).trim(), String(model.counts.healthWarnings));
  assert.ok(model.counts.needsAttention > 0, 'the seeded state needs attention somewhere');
  await tid('attention-item').first().waitFor();
  await page.evaluate(() => { window.__sameDocument = true; });

  step('the top bar says how the server syncs (this repository has no remote)');
  await page.locator('[data-testid="last-synced"]', { hasText: 'not syncing: no remote' }).waitFor();
  assert.match(await tid('last-synced').getAttribute('title'), /no remote/);

  step('a health warning is shown');
  await page.click('nav a[href="/health"]');
  await page.locator('[data-testid="health-item"][data-signal="H2"]').first().waitFor();

  step('search operator rows for a target');
  await page.click('nav a[href="/operator"]');
  await tid('operator-search').fill('#2');
  // The server answers the search; the table is marked busy until its answer arrives.
  await page.locator('[data-testid="operator-table"][aria-busy="false"]').waitFor();
  await page.locator('[data-testid="operator-row"][data-row-id="target:acme/app#2"]').waitFor();
  assert.equal(await tid('operator-row').count(), 1, 'exactly the one row for #2');
  assert.match(await tid('operator-summary').innerText(), /of 1 rows \(1 match the search/);

  step('open a batch');
  await page.click('nav a[href="/batches"]');
  await page.locator('[data-testid="batch-card"][data-batch-id="b-seed"] a').first().click();
  await tid('batch-title').waitFor();
  assert.match(await tid('batch-title').innerText(), /Seeded batch/);
  await tid('batch-chart').waitFor();

  step('import a launch prompt through the UI');
  await page.click('nav a[href="/import"]');
  await tid('import-prompt').fill(PROMPT);
  await tid('import-review').click();
  await tid('import-preview').waitFor();
  assert.match(await tid('draft-batch-id').innerText(), /b-browser/);
  await tid('import-save').click();
  await page.locator('[data-testid="import-result"]', { hasText: 'b-browser' }).waitFor();

  step('the new batch appears without a reload');
  await page.click('nav a[href="/batches"]');
  const card = page.locator('[data-testid="batch-card"][data-batch-id="b-browser"]');
  await card.waitFor({ timeout: 15000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no page reload happened');

  step('request a stop and see it reflected');
  await card.locator('a').first().click();
  await tid('batch-title').waitFor();
  await tid('stop-button').click();
  await page.locator('[data-testid="stop-result"]', { hasText: /stop requested/i }).waitFor();
  await page.locator('[data-testid="batch-control"]', { hasText: 'stop_requested' }).waitFor({ timeout: 15000 });
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'still no reload');

  step('back and forward work');
  await page.goBack();
  await page.goForward();
  await tid('batch-title').waitFor();

  await page.screenshot({ path: screenshot, fullPage: true });
  assert.deepEqual(errors, [], 'no uncaught page errors');
  console.log('browser test passed');
} catch (e) {
  console.error(`browser test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
