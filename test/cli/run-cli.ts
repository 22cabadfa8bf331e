import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** Helpers for the CLI tests: run the real `bin/stacker.js` as a child process. */

export const BIN = fileURLToPath(new URL('../../bin/stacker.js', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The lock folder of this test file's commands (API-key locks, the ids `buy` sent): a run of the
 * suite starts with none, and nothing is written under the user's home. It goes with the file's
 * last test: a test worker is ended without its `exit` event, which left one folder per file behind.
 */
const LOCK_DIR = mkdtempSync(join(tmpdir(), 'stacker-cli-locks-'));
afterAll(() => rmSync(LOCK_DIR, { recursive: true, force: true }));

/**
 * The child's environment is built from scratch (plus PATH and HOME) so a developer's own
 * STACKER_* variables can never leak into a test.
 */
export function cleanEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = { STACKER_LOCK_DIR: LOCK_DIR };
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'SYSTEMROOT']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...extra };
}

/** `nodeArgs` go before the script, e.g. `['--']` to stop Node reading our flags as its own. */
export function startCli(args: readonly string[], env: Readonly<Record<string, string>> = {}, nodeArgs: readonly string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
}

export function finished(child: ChildProcess, timeoutMs = 20_000): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`stacker did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export function runCli(args: readonly string[], env: Readonly<Record<string, string>> = {}, nodeArgs: readonly string[] = []): Promise<CliResult> {
  return finished(startCli(args, env, nodeArgs));
}

/** Resolve with the first stdout text matching `pattern` (for a long-running child). */
export function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 15_000): Promise<RegExpMatchArray> {
  let seen = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no output matching ${pattern} within ${timeoutMs} ms; got: ${seen}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer | string) => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
  });
}

/**
 * A pass-through HTTP proxy that counts what reaches it: put it in front of the sandbox to prove
 * that a refused command line sent nothing at all.
 */
export interface CountingProxy {
  readonly url: string;
  readonly requests: readonly string[];
  close(): Promise<void>;
}

export async function countingProxy(targetUrl: string): Promise<CountingProxy> {
  const target = new URL(targetUrl);
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
