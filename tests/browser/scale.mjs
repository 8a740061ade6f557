// The dashboard on a large fleet in Debian's headless Chromium: how long the first useful
// view takes after navigation and how many bytes it transferred, the operator table's
// search answer and a page turn; and that the page never asked for the whole model.
// Usage: node scale.mjs <base-url> <screenshot.png> [search]  (default: `#<target>` of a row
// on the operator table's second page)
// Prints one line `figures: {json}` and exits non-zero on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot, given] = args('scale.mjs');
const browser = await launch();
const second = await (await fetch(`${base}/api/dashboard?view=operator&page=2`)).json();
const search = given || `#${second.rows[0].target}`;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (e) => { bytes += e.encodedDataLength; });
  const asked = [];
  page.on('request', (r) => { if (r.url().includes('/api/dashboard')) asked.push(r.url()); });
  const tid = (id) => page.locator(`[data-testid="${id}"]`);

  step('first useful view: the overview with its attention queue');
  const t0 = Date.now();
  await page.goto(`${base}/`);
  await tid('attention-item').first().waitFor({ timeout: 60000 });
  const firstViewMs = Date.now() - t0;
  const firstViewBytes = bytes;

  step('the operator table, one page');
  let t = Date.now();
  await page.click('nav a[href="/operator"]');
  await tid('operator-row').first().waitFor({ timeout: 60000 });
  const operatorMs = Date.now() - t;
  assert.ok(await tid('operator-row').count() <= 100, 'at most one page of rows');

  step('search answered by the server');
  t = Date.now();
  await tid('operator-search').fill(search);
  await page.waitForFunction((q) => {
    const table = document.querySelector('[data-testid="operator-table"]');
    return table && table.getAttribute('aria-busy') === 'false'
      && new URL(location.href).searchParams.get('q') === q;
  }, search, { timeout: 60000 });
  const searchMs = Date.now() - t;
  const found = await tid('operator-row').count();
  assert.ok(found >= 1, `the search ${search} finds something`);

  step('page 2 of all rows');
  await tid('operator-search').fill('');
  await page.locator('[data-testid="operator-table"][aria-busy="false"]').waitFor();
  const firstOnPage1 = await tid('operator-row').first().getAttribute('data-row-id');
  t = Date.now();
  await page.goto(`${base}/operator?page=2`);
  await tid('operator-row').first().waitFor({ timeout: 60000 });
  const pageMs = Date.now() - t;
  assert.match(await tid('operator-summary').innerText(), /^Showing 101–/);
  assert.notEqual(await tid('operator-row').first().getAttribute('data-row-id'), firstOnPage1);

  const whole = asked.filter((u) => !new URL(u).searchParams.has('view'));
  assert.deepEqual(whole, [], 'the page never asked for the whole model');
  assert.deepEqual(errors, [], 'no page errors');
  await page.screenshot({ path: screenshot, fullPage: false });
  console.log(`figures: ${JSON.stringify({ firstViewMs, firstViewBytes, operatorMs, searchMs, found, pageMs, totalBytes: bytes })}`);
  console.log('browser test passed');
} finally {
  await browser.close();
}
