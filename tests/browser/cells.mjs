// The Operator table in Debian's headless Chromium: the State cell's box spans its row like
// every other cell (top and bottom equal), on rows of several lines. And the item page: the
// claim holder's heartbeat pointing at other work is warned about, and the custody timeline
// shows CAS generations on claim entries and liveness as spans.
// Usage: node cells.mjs <base-url> <screenshot.png>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot] = args('cells.mjs');

const browser = await launch();

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

  step('the item page warns that the holder beats elsewhere, and shows the custody chain');
  await page.goto(`${base}/items/acme/app/3`);
  const timeline = page.locator('[data-testid="custody-timeline"]');
  await timeline.waitFor();
  assert.match(await page.locator('section.item').innerText(),
    /Claim holder heartbeat currently points at acme\/app#4\./);
  // A claim outside any batch writes no acquisition event: the claim record alone says who
  // holds it, with unproven ownership.
  const acquired = timeline.locator('[data-testid="timeline-entry"][data-kind="unknown_ownership"]');
  assert.equal(await acquired.count(), 1);
  assert.match(await acquired.innerText(), /UNKNOWN ownership by w3/);
  assert.match(await acquired.getByTestId('timeline-generation').innerText(), /^CAS generation (UNKNOWN|\d+)$/);

  step('liveness is a span with its end and duration');
  await page.goto(`${base}/items/acme/app/1`);
  const live = page.locator('[data-testid="timeline-entry"][data-kind="liveness"]');
  await live.first().waitFor();
  assert.match(await live.first().innerText(), /live/);
  assert.match(await live.first().getByTestId('timeline-until').innerText(), /^– \d{4}-\d\d-\d\d .* \(\d+[smhd]\)$/);
  assert.deepEqual(errors, [], 'no page errors');
  console.log('browser test passed');
} finally {
  await browser.close();
}
