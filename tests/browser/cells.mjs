// The Operator table in Debian's headless Chromium: the State cell's box spans its row like
// every other cell (top and bottom equal), on rows of several lines.
// Usage: node cells.mjs <base-url> <screenshot.png>
// Exits non-zero with a message on the first failed expectation.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';

const [base, screenshot] = process.argv.slice(2);
if (!base || !screenshot) {
  console.error('usage: node cells.mjs <base-url> <screenshot.png>');
  process.exit(64);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const step = (name) => console.log(`step: ${name}`);

// Per row: the State cell's top and bottom, and every other cell's, in CSS pixels.
const boxes = (page) => page.locator('[data-testid="operator-row"]').evaluateAll((rows) => rows.map((tr) => {
  const cells = [...tr.children].map((td) => {
    const r = td.getBoundingClientRect();
    return { cls: td.className, top: Math.round(r.top * 10) / 10, bottom: Math.round(r.bottom * 10) / 10 };
  });
  return { id: tr.dataset.rowId, height: tr.getBoundingClientRect().height, cells };
}));

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}/operator`);
  await page.locator('[data-testid="operator-row"]').first().waitFor();

  step('every row is several lines tall');
  const rows = await boxes(page);
  assert.ok(rows.length >= 3, `rows: ${rows.length}`);
  for (const row of rows) {
    const state = row.cells.find((c) => c.cls === 'cell-state');
    assert.ok(state, `${row.id} has a State cell`);
    assert.ok(row.height > 40, `${row.id} is a multi-line row (${row.height}px)`);
  }

  step('the State cell spans its row like the other cells');
  for (const row of rows) {
    const state = row.cells.find((c) => c.cls === 'cell-state');
    for (const other of row.cells.filter((c) => c !== state)) {
      assert.equal(state.top, other.top, `${row.id}: State top vs ${other.cls}`);
      assert.equal(state.bottom, other.bottom, `${row.id}: State bottom vs ${other.cls}`);
    }
  }

  step('the measurement sees a State cell that is not a table cell (the old layout)');
  await page.addStyleTag({ content: 'td.cell-state { display: flex; }' });
  const broken = await boxes(page);
  assert.ok(broken.some((row) => {
    const state = row.cells.find((c) => c.cls === 'cell-state');
    const work = row.cells.find((c) => c.cls === 'cell-work');
    return state.bottom !== work.bottom;
  }), 'a flex State cell would have been caught');

  await page.reload();
  await page.locator('[data-testid="operator-row"]').first().waitFor();
  await page.screenshot({ path: screenshot, fullPage: true });
  assert.deepEqual(errors, [], 'no page errors');
  console.log('browser test passed');
} finally {
  await browser.close();
}
