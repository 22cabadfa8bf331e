import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.ts';

/** The real CLI (`node src/cli.ts run`) as a child process, as a user or Docker starts it. */
export const CLI = resolve(import.meta.dirname, '../../src/cli.ts');

export interface DaemonDir {
  readonly root: string;
  readonly strategies: string;
  readonly data: string;
  writeStrategy(name: string, lines: Record<string, string>): void;
  remove(): void;
}

export function daemonDir(): DaemonDir {
  const root = mkdtempSync(join(tmpdir(), 'stacker-daemon-'));
  const strategies = join(root, 'strategies');
  const data = join(root, 'data');
  mkdirSync(strategies);
  return {
    root,
    strategies,
    data,
    writeStrategy(name, lines) {
      const text = Object.entries(lines)
        .map(([key, value]) => `${key}=${/\s/.test(value) ? `"${value}"` : value}`)
        .join('\n');
      writeFileSync(join(strategies, `${name}.env`), `${text}\n`);
    },
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export interface RunningDaemon {
  readonly child: ChildProcess;
  /** Every line written so far on stdout and stderr. */
  readonly output: () => string;
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  readonly exited: Promise<number | string>;
  /** Resolves once a log line contains `text`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
}

/** Daemons started and not yet exited: a test that fails before it stops its daemon must not leave it running. */
const stillRunning = new Set<ChildProcess>();
afterEach(() => {
  for (const child of stillRunning) child.kill('SIGKILL');
  stillRunning.clear();
});

/**
 * `launcher`: the program and the arguments that precede `run`; by default Node on the sources
 * (`src/cli.ts`), as `npm start -- run` starts them. The compiled daemon passes its script.
 */
export function startDaemon(args: readonly string[], env: Record<string, string>, launcher: readonly [string, ...string[]] = [process.execPath, CLI]): RunningDaemon {
  const [program, ...before] = launcher;
  const child = spawn(program, [...before, 'run', ...args], {
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  stillRunning.add(child);
  child.on('exit', () => stillRunning.delete(child));
  let text = '';
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  const onData = (chunk: Buffer): void => {
    text += chunk.toString('utf8');
    for (const waiter of [...waiters]) {
      if (text.includes(waiter.text)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string>((resolvePromise) => {
    child.on('exit', (code, signal) => resolvePromise(code ?? signal ?? 'unknown'));
  });
  return {
    child,
    output: () => text,
    exited,
    waitFor(wanted, timeoutMs = 15_000) {
      if (text.includes(wanted)) return Promise.resolve();
      return new Promise<void>((resolvePromise, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${wanted}" within ${timeoutMs} ms; ${outputForFailure(text)}`)), timeoutMs);
        waiters.push({
          text: wanted,
          resolve: () => {
            clearTimeout(timer);
            resolvePromise();
          },
        });
        void exited.then(() => {
          clearTimeout(timer);
          if (!text.includes(wanted)) reject(new Error(`daemon exited before "${wanted}"; ${outputForFailure(text)}`));
        });
      });
    },
  };
}

/**
 * What a failed wait shows: every warning and error of the whole run (a rare failure on a busy
 * machine is understood from them, and the tail alone loses them) and the last lines.
 */
function outputForFailure(text: string): string {
  const warnings = text.split('\n').filter((line) => /"level":(4|5|6)0/.test(line) || !line.startsWith('{'));
  return `warnings and errors:\n${warnings.join('\n').slice(-6000)}\nlast output:\n${text.slice(-3000)}`;
}

/** The environment of a live daemon trading on the sandbox, with its locks under the test's own HOME. */
export function liveEnv(sandbox: { readonly url: string; readonly apiKey: string; readonly apiSecret: string }, dir: DaemonDir, logLevel = 'info'): Record<string, string> {
  return {
    HOME: dir.root,
    STACKER_MODE: 'live',
    STACKER_BASE_URL: sandbox.url,
    STACKER_API_KEY: sandbox.apiKey,
    STACKER_API_SECRET: sandbox.apiSecret,
    STACKER_LOG_LEVEL: logLevel,
  };
}

export interface SandboxAndDir {
  readonly sandbox: Sandbox;
  readonly dir: DaemonDir;
  /** liveEnv for this test's sandbox and folder. */
  live(): Record<string, string>;
}

/** A fresh sandbox exchange (started with `options`) and daemon folder for every test of the file, stopped and removed after it. */
export function sandboxPerTest(options: SandboxOptions = {}): SandboxAndDir {
  let sandbox: Sandbox | null = null;
  let dir: DaemonDir | null = null;
  beforeEach(async () => {
    sandbox = await startSandbox(options);
    dir = daemonDir();
  });
  afterEach(async () => {
    await sandbox?.stop();
    dir?.remove();
  });
  const current = <T>(value: T | null): T => {
    if (value === null) throw new Error('sandboxPerTest: used outside a test');
    return value;
  };
  return {
    get sandbox() {
      return current(sandbox);
    },
    get dir() {
      return current(dir);
    },
    live: () => liveEnv(current(sandbox), current(dir)),
  };
}
