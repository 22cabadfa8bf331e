import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/**
 * Debian's headless Chromium, driven by playwright-core (.ci/run installs it). Without a
 * browser on the machine the browser tests are skipped and say so: nothing here downloads one.
 */

const NAMES = ['chromium', 'chromium-browser'];

/** CHROMIUM_PATH if set, else the first `chromium` / `chromium-browser` on PATH or in /usr/bin. */
export function findChromium(): string | null {
  const explicit = process.env['CHROMIUM_PATH'];
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== ''), '/usr/bin'];
  const candidates = [...(explicit === undefined || explicit === '' ? [] : [explicit]), ...dirs.flatMap((dir) => NAMES.map((name) => join(dir, name)))];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there: try the next one
    }
  }
  return null;
}

/** The warning a skipped browser test leaves in the output. */
export function warnNoChromium(what: string): void {
  console.warn(`SKIPPED: ${what} did not run: no Chromium found (looked for CHROMIUM_PATH, ${NAMES.join(', ')} on PATH and in /usr/bin). Install Debian's chromium (apt-get install chromium) to run them.`);
}

/** findChromium(), warning once per file when there is none (the file's browser tests are then skipped). */
export function chromiumOrWarn(what: string): string | null {
  const executablePath = findChromium();
  if (executablePath === null) warnNoChromium(`the headless Chromium tests of ${what}`);
  return executablePath;
}

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    // Flags that keep Chromium from reaching out to the network at start (a closed sandbox refuses it).
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
