import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.ts';
import { BIN, cleanEnv, runCli } from './run-cli.ts';

// The files a user names for stacker to write: a path that cannot be written is bad input,
// named with its flag and found before any work is done (exit 2), not a failure after the run it
// was meant to keep. A write that still fails after the work is an I/O failure (exit 1).

const FIXTURE = new URL('../fixtures/candles/btc-1h-2021-03-01_14.csv', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'stacker-file-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const strategy = join(dir, 'dca.env');
writeFileSync(strategy, 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n');
const backtest = ['backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', strategy, '--wallet', 'USDT=1000'];
const missing = join(dir, 'no-such-folder');

describe('stacker backtest --report and --journal', () => {
  it('refuses a --report in a folder that does not exist, naming the flag and the folder; no page and no summary', async () => {
    const result = await runCli(['--', ...backtest, '--report', join(missing, 'report.html')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: --report: folder not found: ${missing} (create it first, or give a path in an existing folder)\n`);
    expect(result.stdout).toBe('');
    expect(existsSync(missing)).toBe(false);
  });

  it('refuses a --report that is a folder, with --json as E_INPUT too', async () => {
    const result = await runCli(['--', ...backtest, '--json', '--report', dir]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({
      error: { code: 'E_INPUT', problems: [{ field: '--report', rule: `is a folder: give the path of a file to write (got ${JSON.stringify(dir)})` }] },
    });
    expect(result.stdout).toBe('');
  });

  it('refuses a --report of a comparison (--sweep) the same way, before any run', async () => {
    const result = await runCli(['--', ...backtest, '--sweep', 'AMOUNT=0.0005,0.001', '--report', join(missing, 'compare.html')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: --report: folder not found: /);
  });

  it('refuses a --journal in a folder that does not exist as bad input, not as a store failure', async () => {
    const result = await runCli(['--', ...backtest, '--journal', join(missing, 'backtest.db')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: --journal: folder not found: ${missing} (create it first, or give a path in an existing folder)\n`);
  });

  it('reports every unwritable path at once, beside the other bad flags', async () => {
    const result = await runCli(['--', ...backtest, '--slippage-pct', 'x', '--report', dir, '--journal', join(missing, 'j.db')]);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n').filter(Boolean).map((line) => line.split(':')[1]?.trim())).toEqual(['--slippage-pct', '--report', '--journal']);
  });

  it('writes the page to a path with spaces in it', async () => {
    const folder = join(dir, 'my reports');
    mkdirSync(folder);
    const page = join(folder, 'dca report.html');
    const result = await runCli(['--', ...backtest, '--report', page]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`report: ${page}`);
    expect(readFileSync(page, 'utf8')).toMatch(/^<!doctype html>/i);
  });

  it("writes a backtest's page, of simulated data, as any file: the umask decides who reads it", async () => {
    const page = join(dir, 'shared report.html');
    const umask = process.umask(0o022);
    try {
      expect((await runCli(['--', ...backtest, '--report', page])).code).toBe(0);
    } finally {
      process.umask(umask);
    }
    expect((statSync(page).mode & 0o777).toString(8)).toBe('644');
  });
});

// A file that takes no byte (Linux's /dev/full: ENOSPC on every write) passes every check made
// up front, as a real file on a disk that fills during a long backtest would.
const FULL = '/dev/full';
const noFullDevice = !existsSync(FULL);

describe('an output file that cannot be written once the work is done', () => {
  it('is never written through a symbolic link: one left dangling under the name would create the file it points to', async () => {
    const target = join(dir, 'pointed-at.html');
    const link = join(dir, 'link.html');
    symlinkSync(target, link);
    const result = await runCli(['--', ...backtest, '--report', link]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`--report: cannot write ${link}: ELOOP (it is a symbolic link; name the file itself)`);
    expect(existsSync(target)).toBe(false);
  });

  it.skipIf(noFullDevice)('backtest --report: exit 1 (an I/O failure, not bad input), naming the flag, the path and the OS error', async () => {
    const result = await runCli(['--', ...backtest, '--report', FULL]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: E_OUTPUT (OutputFileError): --report: cannot write ${FULL}: ENOSPC\n`);
    const json = await runCli(['--', ...backtest, '--json', '--report', FULL]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: 'E_OUTPUT', name: 'OutputFileError', retryable: false, outcomeUnknown: false, message: `--report: cannot write ${FULL}: ENOSPC`, flag: '--report', path: FULL, osCode: 'ENOSPC' },
    });
  });

  it.skipIf(noFullDevice)('report --html: the same', async () => {
    const data = join(dir, 'journal for a page that cannot be written');
    mkdirSync(data);
    expect((await runCli(['--', ...backtest, '--journal', join(data, 'stacker-backtest.db')])).code).toBe(0);
    const sandbox = await startSandbox();
    try {
      const result = await runCli(['--', 'report', '--mode', 'backtest', '--data-dir', data, '--html', FULL], { STACKER_BASE_URL: sandbox.url });
      expect([result.code, result.stderr]).toEqual([1, `error: E_OUTPUT (OutputFileError): --html: cannot write ${FULL}: ENOSPC\n`]);
    } finally {
      await sandbox.stop();
    }
  });
});

describe('stacker report --html', () => {
  it('refuses a page path that is a folder or in a missing folder before reading the journal (exit 2)', async () => {
    const folder = await runCli(['--', 'report', '--data-dir', dir, '--html', dir]);
    expect([folder.code, folder.stderr]).toEqual([2, `error: --html: is a folder: give the path of a file to write (got ${JSON.stringify(dir)})\n`]);
    const nowhere = await runCli(['--', 'report', '--data-dir', dir, '--html', join(missing, 'r.html')]);
    expect([nowhere.code, nowhere.stderr]).toEqual([2, `error: --html: folder not found: ${missing} (create it first, or give a path in an existing folder)\n`]);
  });

  it('says where the page is when the journal bought nothing, as when it did', async () => {
    const data = join(dir, 'journal that bought nothing');
    mkdirSync(data);
    const broke = ['backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', strategy, '--wallet', 'USDT=0'];
    expect((await runCli(['--', ...broke, '--journal', join(data, 'stacker-backtest.db')])).code).toBe(0);
    const page = join(data, 'empty.html');
    const sandbox = await startSandbox();
    try {
      const result = await runCli(['--', 'report', '--mode', 'backtest', '--data-dir', data, '--html', page], { STACKER_BASE_URL: sandbox.url });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(`nothing bought in the backtest journal ${join(data, 'stacker-backtest.db')}\n`);
      expect(result.stdout).toBe(`report: ${page}\n`);
      expect(existsSync(page)).toBe(true);
    } finally {
      await sandbox.stop();
    }
  });

  it('writes the page to a path with spaces in it (a file name, not a token)', async () => {
    const data = join(dir, 'journal with a page');
    mkdirSync(data);
    expect((await runCli(['--', ...backtest, '--journal', join(data, 'stacker-backtest.db')])).code).toBe(0);
    const page = join(data, 'live report.html');
    const sandbox = await startSandbox();
    try {
      const result = await runCli(['--', 'report', '--mode', 'backtest', '--data-dir', data, '--html', page], { STACKER_BASE_URL: sandbox.url });
      expect([result.code, result.stderr]).toEqual([0, '']);
      expect(result.stdout).toContain(`report: ${page}`);
      expect(readFileSync(page, 'utf8')).toContain('BTC_USDT');
    } finally {
      await sandbox.stop();
    }
  });
});

describe.runIf(process.getuid?.() === 0)('an output file in a folder this user may not write (a container\'s user in the image\'s root-owned /app)', () => {
  it('is bad input found before the run (exit 2), not a write that fails after it', async () => {
    const shared = mkdtempSync(join(tmpdir(), 'stacker-file-flags-shared-'));
    try {
      chmodSync(shared, 0o755);
      const owned = join(shared, 'root-owned');
      mkdirSync(owned, { mode: 0o755 });
      const readable = join(shared, 'dca.env');
      writeFileSync(readable, 'STRATEGY=dca\nSCHEDULE="0 9 * * *"\nMARKET=BTC_USDT\nAMOUNT=0.0005\n', { mode: 0o644 });
      const page = join(owned, 'report.html');
      const result = spawnSync(process.execPath, [BIN, 'backtest', '--data', FIXTURE, '--market', 'BTC_USDT', '--strategy', readable, '--wallet', 'USDT=1000', '--report', page], { uid: 1000, gid: 1000, env: cleanEnv(), encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(2);
      expect(result.stderr).toContain(`--report: ${owned} cannot be written by this user (uid 1000): give a path it may write (in a container, the data volume)`);
      expect(result.stdout).toBe('');
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
  });
});

