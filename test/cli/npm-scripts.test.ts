import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, waitForOutput } from './run-cli.ts';

/**
 * The npm scripts as a supervisor runs them: `npm start -- …` and `npm run daemon` are what the
 * README says to leave running, and a supervisor (systemd, a shell's kill) signals the npm
 * process it started. npm passes SIGTERM to its child only: a `sh -c` between npm and Node died
 * and left Node running, orphaned, holding its locks.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function stopsListening(url: string, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    const up = await fetch(`${url}/api/v4/public/ping`).then(
      () => true,
      () => false,
    );
    if (!up) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe('npm start', () => {
  it('stops what it started when npm itself is sent SIGTERM', async () => {
    const npm = spawn('npm', ['start', '--silent', '--', 'sandbox', '--port', '0'], { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(npm);
    const [, url] = await waitForOutput(npm, /base URL\s+(http:\/\/127\.0\.0\.1:\d+)\n/, 30_000);
    expect((await fetch(`${url as string}/api/v4/public/ping`)).status).toBe(200);
    npm.kill('SIGTERM');
    expect(await stopsListening(url as string, 10_000)).toBe(true);
  });
});
