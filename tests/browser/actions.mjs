// The operator's action loop in Debian's headless Chromium: select rows → the $pr-batch
// prompt (and its refusal), copy it, import it as a batch; find by keyboard (Ctrl-K);
// resume and takeover commands on the item page; dismiss and snooze hide attention.
// Usage: node actions.mjs <base-url> <screenshot.png>
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot] = args('actions.mjs');

const browser = await launch();
const model = async () => (await fetch(`${base}/api/dashboard`)).json();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const tid = (id) => page.locator(`[data-testid="${id}"]`);
  const box = (row) => page.locator(`[data-testid="select-row"][data-row-id="${row}"]`);
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

  step('only selectable rows have a checkbox, labelled as the reference says');
  await page.goto(`${base}/operator`);
  await box('target:acme/app#5').waitFor();
  assert.equal(await box('target:acme/app#1').count(), 0, '#1 is in process in a batch');
  assert.equal(await box('target:acme/app#3').count(), 0, '#3 is in a batch');
  assert.match(await box('target:acme/app#5').getAttribute('aria-label'),
    /^Select (PR|Issue|Target) #5 for a PR-batch prompt$/);
  assert.equal((await tid('prompt-summary').innerText()).trim(), 'PR-batch prompt · 0 selected');
  assert.equal((await tid('prompt-text').innerText()).trim(),
    'No selected items. Check issues or pull requests to generate a $pr-batch prompt.');
  await page.evaluate(() => { window.__sameDocument = true; });

  step('the same number in two repos is refused');
  await box('target:acme/app#5').check();
  await box('target:acme/web#5').check();
  await page.locator('[data-testid="prompt-summary"]', { hasText: '· 2 selected' }).waitFor();
  const refusal = await tid('prompt-text').innerText();
  assert.match(refusal, /^Cannot generate a single \$pr-batch prompt for this selection\./);
  assert.match(refusal, /- #5 in acme\/app, acme\/web$/);

  step('a valid selection builds the prompt');
  await box('target:acme/web#5').uncheck();
  await box('target:acme/app#6').check();
  await page.locator('[data-testid="prompt-text"]', { hasText: 'Use $pr-batch' }).waitFor();
  const prompt = await tid('prompt-text').innerText();
  const batchId = (await tid('prompt-batch-id').innerText()).trim();
  assert.match(batchId, /^batch-acme-app-[0-9a-z]+$/);
  assert.ok(prompt.startsWith('Use $pr-batch to complete this batch with subagents.\n'), prompt);
  assert.ok(prompt.includes('\nRepository: acme/app\n'), prompt);
  assert.ok(prompt.includes(`\nBatch id: ${batchId}\n`), prompt);
  assert.ok(prompt.includes('#5: ') && prompt.includes('#6: '), prompt);
  assert.ok(prompt.length < 4000, `${prompt.length} characters`);

  step('the selection survives a new model version');
  const before = (await model()).version;
  await fetch(`${base}/api/annotations`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ repo: 'acme/app', target: '99', kind: 'dismiss' }),
  });
  await page.waitForFunction(async (v) => (await (await fetch('/api/dashboard')).json()).version !== v, before);
  await page.waitForTimeout(500);
  assert.equal(await box('target:acme/app#5').isChecked(), true);
  assert.equal((await tid('prompt-summary').innerText()).trim(), 'PR-batch prompt · 2 selected');

  step('copy the prompt');
  await tid('prompt-copy').click();
  await page.locator('[data-testid="prompt-copy"]', { hasText: 'Copied ✓' }).waitFor();
  assert.equal(await clipboard(), prompt);

  step('import it as a batch in one step');
  await tid('prompt-import').click();
  await page.locator('[data-testid="prompt-import-result"]', { hasText: batchId }).waitFor();
  await page.click('nav a[href="/batches"]');
  await page.locator(`[data-testid="batch-card"][data-batch-id="${batchId}"]`).waitFor({ timeout: 15000 });

  step('Ctrl-K opens Find with the field focused; arrows move; Escape closes');
  await page.keyboard.press('Control+k');
  await tid('find-dialog').waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.dataset?.testid), 'find-input');
  await page.keyboard.type('#5');
  await tid('find-result').first().waitFor();
  const kinds = await tid('find-result').evaluateAll((els) => els.map((e) => e.dataset.id));
  assert.ok(kinds.includes('target:acme/app#5') && kinds.includes('target:acme/web#5'), kinds.join());
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await tid('find-result').nth(1).getAttribute('aria-selected'), 'true');
  assert.equal(await tid('find-result').nth(0).getAttribute('aria-selected'), 'false');
  await page.keyboard.press('Escape');
  await tid('find-dialog').waitFor({ state: 'detached' });

  step('Enter opens the exact match');
  await page.keyboard.press('Control+k');
  await page.keyboard.type('acme/app#3');
  await tid('find-result').first().waitFor();
  await page.keyboard.press('Enter');
  await page.waitForURL(`${base}/items/acme/app/3`);
  await page.locator('[data-testid="item-title"]', { hasText: 'Work item #3' }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no page reload happened');

  step('resume and takeover commands with the reference texts');
  assert.equal(await tid('resume-prompt').innerText(), [
    '$pr-batch',
    'Resume the existing lane for acme/app#3.',
    'Thread handle: UNKNOWN',
    'Batch: b-three',
    'Branch: fix/three',
    'Last phase: in_progress',
    'Verify current coordination state and custody before edits. Continue in the owning task when available.',
  ].join('\n'));
  const takeover = `agent-coord claim --agent-id "\${AGENT_COORD_AGENT_ID:?Set AGENT_COORD_AGENT_ID}" --repo 'acme/app' --target '3' --batch-id 'b-three' --branch 'fix/three'`;
  assert.equal(await tid('takeover-command').innerText(), takeover);
  await tid('copy-takeover').click();
  await page.locator('[data-testid="action-status"]', { hasText: 'Takeover command copied' }).waitFor();
  assert.equal(await clipboard(), takeover);
  await tid('copy-resume').click();
  await page.locator('[data-testid="action-status"]', { hasText: 'Resume prompt copied' }).waitFor();

  step('dismiss hides the item from the attention queue');
  const queued = (m) => m.attention.map((a) => a.rowId);
  assert.deepEqual(queued(await model()), ['target:acme/app#3']);
  await page.selectOption('[data-testid="annotate"]', 'dismiss');
  await page.locator('[data-testid="action-status"]', { hasText: 'Presentation preference saved' }).waitFor();
  await page.locator('[data-testid="clear-annotation"]', { hasText: 'Clear dismissal' }).waitFor({ timeout: 15000 });
  await page.click('nav a[href="/"]');
  await page.locator('[data-testid="count-needs-attention"]', { hasText: '0' }).waitFor({ timeout: 15000 });
  assert.equal(await page.locator('[data-testid="attention-item"]').count(), 0);

  step('clear it, then snooze it for an hour');
  await page.goto(`${base}/items/acme/app/3`);
  await tid('clear-annotation').click();
  await tid('annotate').waitFor({ timeout: 15000 });
  assert.deepEqual(queued(await model()), ['target:acme/app#3']);
  await page.selectOption('[data-testid="annotate"]', 'snooze-1h');
  await page.locator('[data-testid="clear-annotation"]', { hasText: 'Clear snooze' }).waitFor({ timeout: 15000 });
  assert.deepEqual(queued(await model()), []);

  await page.screenshot({ path: screenshot, fullPage: true });
  assert.deepEqual(errors, [], 'no uncaught page errors');
  console.log('browser test passed');
} finally {
  await browser.close();
}
