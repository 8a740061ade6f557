// Drives the dashboard's past (?at=) in Debian's headless Chromium: a batch page of the past
// says so and offers no stop control, links inside the dashboard keep the moment, the item
// page of the past shows who held it then and no operator actions, the time slider opens the
// page as of another commit, and "Back to now" leaves the past.
// Usage: node past.mjs <base-url> <screenshot.png> <time> <commit-then> <release-commit>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot, when, commitThen, releaseCommit] = args('past.mjs');

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const tid = (id) => page.locator(`[data-testid="${id}"]`);
  const at = () => new URL(page.url()).searchParams.get('at');

  step('a batch page of the past says which moment it shows and is read-only');
  await page.goto(`${base}/batches/b1?at=${encodeURIComponent(when)}`);
  await tid('past-commit').waitFor();
  assert.equal(await tid('past-commit').innerText(), commitThen.slice(0, 12));
  assert.match(await tid('past-banner').innerText(), /The past, read-only/);
  await tid('batch-title').waitFor();
  assert.equal(await tid('stop-button').count(), 0, 'no stop control in the past');
  await tid('time-slider-range').waitFor();
  const max = Number(await tid('time-slider-range').getAttribute('max'));
  assert.ok(max >= 3, `the batch was touched by several commits (max ${max})`);
  assert.notEqual(Number(await tid('time-slider-range').inputValue()), max, 'the slider is not at now');

  step('a link inside the dashboard keeps the moment');
  await page.getByRole('link', { name: 'Operator', exact: true }).click();
  await page.waitForURL(/\/operator/);
  assert.equal(at(), when);
  await tid('past-banner').waitFor();
  assert.equal((await tid('live-indicator').innerText()).trim(), 'past', 'no live updates in the past');

  step('the item page of the past shows who held it then, and no operator actions');
  await page.goto(`${base}/items/acme/app/7?at=${encodeURIComponent(when)}`);
  await tid('item-holder').waitFor();
  assert.equal((await tid('item-holder').innerText()).trim(), 'a');
  assert.equal(await tid('operator-actions').count(), 0, 'no actions in the past');
  await tid('time-slider-range').waitFor();
  assert.match(await tid('time-slider-count').innerText(), /^2 commits touched it/);
  await page.screenshot({ path: screenshot, fullPage: true });

  step('the time slider opens the page as of the commit chosen');
  await tid('time-slider-range').fill('1');
  await page.waitForURL((u) => u.searchParams.get('at') === releaseCommit);
  await tid('past-commit').waitFor();
  assert.equal(await tid('past-commit').innerText(), releaseCommit.slice(0, 12));
  assert.equal(Number(await tid('time-slider-range').inputValue()), 1);

  step('"Back to now" leaves the past');
  await tid('past-now').click();
  await page.waitForURL((u) => !u.searchParams.has('at'));
  await tid('item-title').waitFor();
  await tid('live-indicator').waitFor();
  assert.notEqual((await tid('live-indicator').innerText()).trim(), 'past');
  assert.equal(await tid('past-banner').count(), 0);
  assert.equal(Number(await tid('time-slider-range').inputValue()), 2, 'the slider is at now');

  assert.deepEqual(errors, [], 'no uncaught page errors');
  console.log('browser test passed');
} catch (e) {
  console.error(`browser test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
