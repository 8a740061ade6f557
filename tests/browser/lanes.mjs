// Drives the Lanes page of the served dashboard in Debian's headless Chromium: the Gantt chart
// of the seeded lane timeline (a bar per lane on its machine's row, coloured by outcome, the
// lane on hover, a link to its item page), the utilisation per machine and per vendor, and
// the window chips. The seed is `seed_lane_timeline` in tests/tests/test_serve_lanes.rs.
// Usage: node lanes.mjs <base-url> <screenshot.png>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot] = args('lanes.mjs');

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const tid = (id) => page.locator(`[data-testid="${id}"]`);

  step('the top bar leads to the Lanes page');
  await page.goto(`${base}/`);
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Lanes' }).click();
  await tid('lane-gantt').waitFor();
  assert.equal(new URL(page.url()).pathname, '/lanes');
  assert.match(await tid('lanes-summary').innerText(), /9 lanes on 3 machines in the last 6 hours · 2 running now/);

  step('one bar per lane, on its machine\'s rows, coloured by its outcome');
  const bars = tid('lane-bar');
  assert.equal(await bars.count(), 9);
  const seen = await bars.evaluateAll((els) => els.map((e) => ({
    row: e.dataset.row, outcome: e.dataset.outcome, machine: e.dataset.machine,
    task: e.dataset.task, cls: e.getAttribute('class'),
  })));
  assert.deepEqual(seen.map((b) => `${b.machine}/${b.row}/${b.outcome}`), [
    'box-0/0/incomplete',
    'box-1/1/done', 'box-1/1/approved', 'box-1/1/running',
    'box-1/2/ask', 'box-1/2/running',
    'box-2/3/rejected', 'box-2/3/approved', 'box-2/3/unknown',
  ]);
  for (const b of seen) {
    assert.match(b.cls, new RegExp(`\\blane-bar\\b.*\\boutcome-${b.outcome}\\b`));
  }
  assert.match(seen[0].cls, /\btaken-over\b/, 'the run on the machine the task was taken from');
  assert.match(seen[7].cls, /\bclock-skew\b/, 'the run whose end came before its start');
  assert.equal(await page.locator('rect.lane-bar.outcome-running').count(), 2);
  // Bars on one row never overlap, and a later lane starts further right.
  const boxes = await bars.evaluateAll((els) => els.map((e) => e.getBBox()).map((b) => ({ x: b.x, y: b.y, w: b.width })));
  for (let i = 1; i < boxes.length; i++) {
    if (seen[i].row === seen[i - 1].row) {
      assert.ok(boxes[i].x >= boxes[i - 1].x + boxes[i - 1].w - 0.01, `bars ${i - 1} and ${i} overlap`);
      assert.equal(boxes[i].y, boxes[i - 1].y);
    } else {
      assert.ok(boxes[i].y > boxes[i - 1].y, `row ${seen[i].row} is below row ${seen[i - 1].row}`);
    }
  }
  // The running gates reach the right edge (the clock); the 08:00–09:00 implementer is a
  // sixth of the window wide.
  const gantt = await tid('lane-gantt').evaluate((e) => e.viewBox.baseVal.width);
  assert.ok(Math.abs(boxes[3].x + boxes[3].w - (gantt - 16)) < 0.5, 'running lanes end at the clock');
  assert.ok(Math.abs(boxes[1].w - (gantt - 150 - 16) / 6) < 0.5, 'an hour is a sixth of six hours');

  step('hovering a bar names the task, the lane, its vendor, outcome and times');
  const quality = bars.nth(5);
  const title = await quality.locator('title').textContent();
  assert.match(title, /^acme\/app#7 · w1-acme-app-7/);
  assert.match(title, /grok quality \(grok:pr-reviewer-quality\) · pr_gates_grok/);
  assert.match(title, /\ngrok · running\n/);
  assert.match(title, /2026-06-13 11:00:00 UTC – now \(1h 00m\)/);
  const first = await bars.nth(1).locator('title').textContent();
  assert.match(first, /claude \/ claude-model · done/);
  assert.match(first, /2026-06-13 08:00:00 UTC – 2026-06-13 09:00:00 UTC \(1h 00m\)/);

  step('utilisation per machine and per vendor');
  const rows = (id) => tid(id).getByTestId('utilisation-row').evaluateAll((els) =>
    els.map((e) => `${e.dataset.key}: peak ${e.dataset.peak} mean ${e.dataset.mean}`));
  assert.deepEqual(await rows('utilisation-machines'), [
    'box-0: peak 1.00 mean 0.08',
    'box-1: peak 2.00 mean 0.71',
    'box-2: peak 1.00 mean 0.12',
  ]);
  assert.deepEqual(await rows('utilisation-vendors'), [
    'claude: peak 2.00 mean 0.42',
    'codex: peak 1.00 mean 0.15',
    'grok: peak 2.40 mean 0.34',
  ]);
  assert.equal((await tid('utilisation-machines').getByTestId('utilisation-summary').nth(1).textContent()).trim(),
    'peak 2.00 · mean 0.71');
  await page.screenshot({ path: screenshot, fullPage: true });

  step('the last hour shows the lanes that reach into it');
  await tid('lanes-windows').getByRole('link', { name: '1 hour' }).click();
  await page.waitForURL(/\/lanes\?hours=1$/);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="lane-bar"]').length === 4);
  assert.match(await tid('lanes-summary').innerText(), /4 lanes on 2 machines in the last 1 hour/);

  step('a bar links to its item page');
  const unknown = page.locator('[data-testid="lane-bar"][data-outcome="unknown"]');
  assert.equal(await page.locator('[data-testid="lane-bar-link"]').nth(3).getAttribute('href'), '/items/acme/app/9');
  await unknown.click();
  await tid('item-title').waitFor();
  assert.equal((await tid('item-title').innerText()).trim(), 'Work item #9');
  assert.equal(new URL(page.url()).pathname, '/items/acme/app/9');

  assert.deepEqual(errors, [], 'no uncaught page errors');
  console.log('browser test passed');
} catch (e) {
  console.error(`browser test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
