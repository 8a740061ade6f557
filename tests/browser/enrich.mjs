// Drives the dashboard's GitHub enrichment in Debian's headless Chromium: with GitHub
// answering, the operator table shows the merged issue done and the unassigned open issue
// ready, and no degraded-source banner; with the token refused, the banner (role alert,
// linking /api/doctor) says so while the rows from git still render.
// Usage: node enrich.mjs <base-url> <screenshot.png> <enriched|refused>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot, mode] = args('enrich.mjs');
if (!['enriched', 'refused'].includes(mode)) {
  console.error('usage: node enrich.mjs <base-url> <screenshot.png> <enriched|refused>');
  process.exit(64);
}

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const row = (target) => page.locator(`[data-testid="operator-row"][data-row-id="target:acme/app#${target}"]`);
  const banner = page.getByTestId('source-banner');

  await page.goto(`${base}/operator`);
  await page.getByTestId('model-version').waitFor({ state: 'attached' });
  await row('1').waitFor();
  if (mode === 'enriched') {
    step('the merged issue is done, the unassigned open issue ready, no banner');
    await page.locator('[data-testid="operator-row"][data-row-id="target:acme/app#1"].state-row-done').waitFor();
    await page.locator('[data-testid="operator-row"][data-row-id="target:acme/app#3"].state-row-ready').waitFor();
    assert.match(await row('3').innerText(), /Nobody's/);
    assert.equal(await banner.count(), 0, 'GitHub answers: no degraded-source banner');
  } else {
    step('the banner says GitHub refused the token and links the diagnostics');
    const alert = page.getByRole('alert').filter({ hasText: 'GitHub authentication failed' });
    await alert.waitFor();
    assert.match(await alert.innerText(), /GitHub authentication failed \(401\)/);
    const details = alert.getByRole('link', { name: 'Details' });
    assert.equal(await details.getAttribute('href'), '/api/doctor');
    step('the rows from git still render');
    assert.equal(await page.getByTestId('operator-row').count(), 3);
    assert.equal(await row('3').count(), 0, 'nothing from GitHub');
  }
  await page.screenshot({ path: screenshot, fullPage: true });
  assert.deepEqual(errors, [], 'no page errors');
  console.log('browser test passed');
} finally {
  await browser.close();
}
