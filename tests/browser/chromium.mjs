// What every browser test starts with: its two arguments, Debian's headless Chromium (as
// root, so without the sandbox; nothing that calls home), and step logging.
import { chromium } from 'playwright-core';

// Returns `[base-url, screenshot.png, ...rest]`, or exits 64 with the usage of `script`.
export function args(script) {
  const [base, screenshot, ...rest] = process.argv.slice(2);
  if (!base || !screenshot) {
    console.error(`usage: node ${script} <base-url> <screenshot.png>`);
    process.exit(64);
  }
  return [base, screenshot, ...rest];
}

// Starts Chromium (`$CHROMIUM`, else /usr/bin/chromium).
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// Logs the step about to run (a failure's log then says where it stopped).
export const step = (name) => console.log(`step: ${name}`);
