// Edits the saved target repositories in the served dashboard, in Debian's headless
// Chromium: a bad value shows the server's 400 message, a good one scopes the operator rows
// without a reload and shows what was left out.
// Usage: node scope.mjs <base-url> <screenshot.png>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot] = args('scope.mjs');

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const tid = (id) => page.locator(`[data-testid="${id}"]`);
  const rowIds = () => tid('operator-row').evaluateAll((rows) => rows.map((r) => r.dataset.rowId).sort());

  step('unscoped, the operator rows show both repositories');
  await page.goto(`${base}/operator`);
  await tid('operator-row').first().waitFor();
  assert.deepEqual(await rowIds(), ['target:acme/app#1', 'target:acme/app#3', 'target:gamma/secret#2']);

  step('the overview shows every repository and an editable field');
  await page.click('nav a[href="/"]');
  const panel = page.getByRole('region', { name: 'Target repositories' });
  await panel.waitFor();
  await tid('scope-input').waitFor();
  assert.equal((await tid('scope-repos').innerText()).trim(), 'All repositories');
  assert.equal(await tid('scope-notice').count(), 0);
  assert.equal(await tid('scope-chip').count(), 0, 'no scope chip while every repository shows');

  step('a bad value shows the server message and changes nothing');
  await tid('scope-input').fill('acme/app, ./app');
  await tid('scope-save').click();
  await tid('scope-error').waitFor();
  assert.match(await tid('scope-error').innerText(), /Target repository "\.\/app" is not owner\/repo/);
  assert.equal((await tid('scope-repos').innerText()).trim(), 'All repositories');
  await tid('scope-input').fill('  ');
  await tid('scope-save').click();
  await page.getByText('At least one owner/repo target is required.').waitFor();

  step('a good value scopes the dashboard without a reload');
  await page.evaluate(() => { window.__sameDocument = true; });
  await tid('scope-input').fill('Acme/App');
  await tid('scope-input').press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="scope-repos"]')?.textContent.trim() === 'acme/app');
  assert.equal(await tid('scope-error').count(), 0, 'the error clears');
  await tid('scope-notice').first().waitFor();
  const notices = await tid('scope-notice').allInnerTexts();
  assert.ok(notices.includes('Skipped 1 claim records outside saved target repositories.'), notices.join(' | '));
  await tid('scope-chip').waitFor();
  assert.equal((await tid('scope-chip').innerText()).trim(), 'acme/app');
  await page.screenshot({ path: screenshot, fullPage: true });

  step('the operator rows change');
  await page.click('nav a[href="/operator"]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="operator-row"]').length === 2);
  assert.deepEqual(await rowIds(), ['target:acme/app#1', 'target:acme/app#3']);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no page reload happened');
  const settings = await (await fetch(`${base}/api/settings`)).json();
  assert.deepEqual(settings.targetRepos, ['acme/app']);

  step('an item of the other repository is not found');
  await page.goto(`${base}/items/gamma/secret/2`);
  await page.getByText('Work item is not in the saved target repositories.').waitFor();

  assert.deepEqual(errors, [], 'no uncaught page errors');
  console.log('browser test passed');
} catch (e) {
  console.error(`browser test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
