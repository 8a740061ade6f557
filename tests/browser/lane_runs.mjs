// Drives a coordinator task's lane runs on the item page in Debian's headless Chromium: the
// runs table (slot, vendor/model, verdict, duration, tokens, cost), the spend and the vendor
// pause, a run's transcript opened from its button (messages and tool calls, a planted token
// redacted), another machine's transcript named by its machine, and the overview's spend.
// Usage: node lane_runs.mjs <base-url> <screenshot.png> <planted-token>
// Exits non-zero with a message on the first failed expectation.
import { args, launch, step } from './chromium.mjs';
import assert from 'node:assert/strict';

const [base, screenshot, token] = args('lane_runs.mjs');

const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const tid = (id) => page.locator(`[data-testid="${id}"]`);

  step('the item page lists the lane runs, the spend and the pause');
  await page.goto(`${base}/items/acme/app/7`);
  await tid('lane-runs').waitFor();
  const runs = tid('lane-run');
  assert.equal(await runs.count(), 3);
  const first = runs.nth(0);
  assert.match(await first.innerText(), /grok:implementer/);
  assert.equal((await first.getByTestId('lane-run-vendor').innerText()).trim(), 'claude / claude-sonnet-4-5');
  assert.match(await first.getByTestId('lane-run-verdict').innerText(), /done/);
  assert.match(await first.innerText(), /2m 05s/);
  assert.equal((await first.getByTestId('lane-run-tokens').innerText()).trim(), '2.3k');
  assert.equal((await first.getByTestId('lane-run-cost').innerText()).trim(), '$0.2500');
  assert.equal((await runs.nth(1).getByTestId('lane-run-cost').innerText()).trim(), 'unknown');
  assert.match(await tid('coordinator-spend').innerText(), /3 lane runs .* \$0\.7500 \(\+1 of unknown cost\)/);
  assert.match(await tid('coordinator-paused').innerText(), /waiting for the claude usage limit to reset at 2026-06-13/);

  step('a run on this machine opens its transcript: messages and tool calls, redacted');
  await first.getByRole('button', { name: 'Open' }).click();
  const transcript = tid('transcript');
  await transcript.waitFor();
  const entries = transcript.getByTestId('transcript-entry');
  const kinds = await entries.evaluateAll((els) => els.map((e) => e.dataset.kind));
  assert.deepEqual(kinds, ['note', 'note', 'message', 'tool_call', 'tool_result', 'message', 'usage']);
  assert.match(await entries.nth(2).innerText(), /Using the token \[redacted\] to read the parser\./);
  assert.match(await entries.nth(3).innerText(), /→ Read[\s\S]*src\/parse\.rs/);
  assert.match(await entries.nth(4).innerText(), /← Read[\s\S]*fn parse/);
  assert.equal((await page.content()).includes(token), false, 'the planted token is not on the page');
  await page.screenshot({ path: screenshot, fullPage: true });

  step('a run another machine holds names that machine');
  await runs.nth(1).getByRole('button', { name: 'Open' }).click();
  const elsewhere = tid('transcript-elsewhere');
  await elsewhere.waitFor();
  assert.equal(await elsewhere.getAttribute('data-machine'), 'box-2');
  assert.match(await elsewhere.innerText(), /held by box-2/);

  step('a path out of the workspace root is refused');
  await runs.nth(2).getByRole('button', { name: 'Open' }).click();
  await tid('error-banner').waitFor();
  assert.match(await tid('error-banner').innerText(), /outside the worker's workspace root/);
  assert.equal((await page.content()).includes('beyond the workspace root'), false);

  step('the overview shows the spend per batch and worker and a cost-per-day chart');
  await page.goto(`${base}/`);
  await tid('spend').waitFor();
  assert.match(await tid('spend-total').innerText(), /3 lane runs/);
  assert.equal(await tid('cost-bar').count(), 3);
  assert.equal(await tid('spend-batches').getByTestId('spend-row').getAttribute('data-key'), 'coordinator-w-coord');
  assert.equal(await tid('spend-workers').getByTestId('spend-row').getAttribute('data-key'), 'w-coord');

  assert.deepEqual(errors, [], 'no uncaught page errors');
  console.log('browser test passed');
} catch (e) {
  console.error(`browser test failed: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
