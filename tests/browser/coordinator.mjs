// Drives the coordinator views of the served dashboard in Debian's headless Chromium: the
// attention queue's coordinator entries and the item page's Coordinator panel, by keyboard
// and by the names a screen reader announces.
// Usage: node coordinator.mjs <base-url> <screenshot.png>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot] = args('coordinator.mjs');

const QUESTION = 'https://github.com/acme/app/issues/7#issuecomment-701';

const browser = await launch();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const model = await (await fetch(`${base}/api/dashboard`)).json();
  const tid = (id) => page.locator(`[data-testid="${id}"]`);
  const entry = (kind) => page.locator(`[data-testid="attention-item"][data-kind="${kind}"]`);

  step('the attention queue lists the coordinator entries with their links');
  await page.goto(`${base}/`);
  await tid('model-version').waitFor({ state: 'attached' });
  assert.equal((await tid('count-needs-attention').innerText()).trim(), String(model.counts.needsAttention));
  const waiting = entry('task_waiting_reply');
  await waiting.waitFor();
  assert.match(await waiting.innerText(), /Waiting on a human reply/);
  assert.equal((await waiting.getByTestId('attention-detail').innerText()).trim(),
    'Codex logic found a race in the cache. Lock or channel?');
  assert.equal((await waiting.getByTestId('attention-resume').innerText()).trim(), 'resumes pr_gates_codex');
  const question = waiting.getByRole('link', { name: 'Open the question' });
  assert.equal(await question.getAttribute('href'), QUESTION);
  assert.equal(await question.getAttribute('rel'), 'noopener noreferrer');
  const merge = entry('task_awaiting_merge');
  assert.match(await merge.innerText(), /Ready, waiting for a human merge/);
  assert.equal(await merge.getAttribute('data-severity'), 'info');
  assert.equal(await merge.getByRole('link', { name: 'Open the pull request' }).getAttribute('href'),
    'https://github.com/acme/app/pull/81');
  const operator = entry('task_needs_operator');
  assert.match(await operator.innerText(), /Needs an operator.*outcome is unknown/s);
  assert.equal(await page.locator('[data-testid="attention-item"][data-kind^="task_"]').count(), 3,
    'failed and done tasks stay out of the queue');

  step('the operator\'s hold is on every view');
  const hold = tid('holds');
  await hold.waitFor();
  assert.match(await hold.innerText(), /coordinator paused \(worker:w-coord\) by alice/);
  assert.match(await hold.getAttribute('title'), /upgrade/);

  step('the keyboard opens the item page from the queue');
  await page.evaluate(() => { window.__sameDocument = true; });
  await waiting.getByRole('link', { name: 'acme/app#7' }).focus();
  await page.keyboard.press('Enter');
  const panel = page.getByRole('region', { name: 'Coordinator' });
  await panel.waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no page reload happened');

  step('the panel shows machine, what it waits for, phase, resume phase, question with its link, PR, head and rounds');
  assert.equal((await tid('coordinator-worker').innerText()).trim(), 'w-coord');
  assert.equal((await tid('coordinator-machine').innerText()).trim(), 'box-1 (before: box-0)');
  assert.equal((await tid('coordinator-waits-for').innerText()).trim(),
    'a reply from an authorized human on the issue');
  assert.match(await tid('coordinator-state').innerText(), /waiting/);
  assert.equal((await tid('coordinator-phase').innerText()).trim(), 'pr_gates_codex');
  assert.equal((await tid('coordinator-resume-phase').innerText()).trim(), 'pr_gates_codex');
  assert.match(await tid('coordinator-blocker').innerText(), /Lock or channel\?/);
  assert.equal(await tid('coordinator-question-link').getAttribute('href'), QUESTION);
  const pr = tid('coordinator-pr').getByRole('link', { name: '#71' });
  assert.equal(await pr.getAttribute('href'), 'https://github.com/acme/app/pull/71');
  assert.equal((await tid('coordinator-head').innerText()).trim(), 'c0ffee1');
  assert.equal((await tid('coordinator-rounds').innerText()).trim(), '2');

  step('the checklist marks only evidence on the current head');
  const list = page.getByRole('list', { name: 'Evidence on head c0ffee1' });
  const rows = await list.getByTestId('check-row').evaluateAll((items) => items.map((li) => [
    li.dataset.key, li.querySelector('.mark').textContent, li.querySelector('.check-label').textContent,
  ]));
  assert.deepEqual(rows, [
    ['checks', '✓', 'Checks on head'],
    ['grok_quality', '✓', 'Grok quality'],
    ['grok_logic', '✓', 'Grok logic'],
    ['codex_quality', '✗', 'Codex quality'],
    ['codex_logic', '✗', 'Codex logic'],
    ['ci', '✗', 'GitHub CI'],
    ['readiness', '✗', 'Readiness'],
    ['formal_approval', '✗', 'Formal approval'],
    ['ready_comment', '✗', 'Ready evidence comment'],
    ['left_draft', '✗', 'Left draft'],
  ]);
  const ci = list.locator('[data-key="ci"]');
  assert.match(await ci.innerText(), /passed on 0dead00, another head/);
  // The marks are decoration; a screen reader hears the words.
  assert.equal(await ci.locator('.mark').getAttribute('aria-hidden'), 'true');
  assert.match(await ci.textContent(), /not passed on this head/);
  assert.match(await list.locator('[data-key="checks"]').textContent(), /passed on this head/);
  step('the panel offers the operator commands that apply, each to copy');
  const commands = page.getByRole('list', { name: 'Operator commands' });
  const offered = await commands.getByTestId('copy-operator-command').allInnerTexts();
  assert.deepEqual(offered.map((t) => t.trim()), ['Explain', 'Cancel', 'Resume worker w-coord'],
    'a paused worker is offered its resume');
  assert.equal(await tid('holds').count(), 1, 'the hold is still shown on the item page');
  assert.match(await tid('coordinator-waits-for').innerText(), /a reply from an authorized human/);
  await commands.getByRole('button', { name: 'Cancel' }).click();
  await page.getByText('Command copied').waitFor();
  assert.match(await page.evaluate(() => navigator.clipboard.readText()),
    /^agent-coord coordinate cancel \S+ --reason "…"$/);
  await page.screenshot({ path: screenshot, fullPage: true });

  step('a merged task shows its merge record');
  await page.goto(`${base}/items/acme/app/11`);
  await tid('coordinator-merge').waitFor();
  assert.match(await tid('coordinator-merge').innerText(), /octo[\s\S]*feedfac[\s\S]*main/);

  step('a failed task shows its blocker on the item page');
  await page.goto(`${base}/items/acme/app/10`);
  await tid('coordinator-blocker').waitFor();
  assert.match(await tid('coordinator-blocker').innerText(), /cannot be done/);
  assert.match(await tid('coordinator-state').innerText(), /failed/);
  const failedCommands = await page.getByRole('list', { name: 'Operator commands' })
    .getByTestId('copy-operator-command').allInnerTexts();
  assert.equal(failedCommands[0].trim(), 'Explain');
  assert.ok(!failedCommands.some((t) => t.trim() === 'Cancel'), 'an ended task is not offered a cancel');

  step('a malformed task record is a warning, not a broken page');
  await page.goto(`${base}/items/acme/app/12`);
  await tid('warning-banner').waitFor();
  assert.match(await tid('warning-banner').innerText(), /could not be read/);
  assert.equal(await tid('coordinator-panel').count(), 0);
  await tid('custody-timeline').or(page.getByText('No custody history recorded.')).waitFor();

  assert.deepEqual(errors, [], 'no uncaught page errors');
  console.log('browser test passed');
} catch (e) {
  console.error(`browser test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
