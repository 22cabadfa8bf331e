import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellWord } from '../../src/cli/shell-word.ts';
import { CLI, sandboxPerTest, startDaemon } from './daemon-process.ts';

// What `stacker run` writes for a log shipper and what its status server tells a probe: the real
// CLI in a child process, its log read as a collector reads it.
const t = sandboxPerTest();

type LogLine = Readonly<Record<string, unknown>>;

const jsonLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

/** The status server's URL, from the daemon's `metrics` line. */
function metricsUrl(output: string): string {
  const url = jsonLines(output).find((line) => line['event'] === 'metrics')?.['url'];
  if (typeof url !== 'string') throw new Error(`no metrics line in:\n${output.slice(-2000)}`);
  return url;
}

/** GET `path` naming `host` in the Host header, as a probe or Prometheus configured with that name does. */
function getAs(url: string, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: new URL(url).port, path, headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** util-linux `script`, which gives a command a terminal of its own, as `docker run -t` does. */
const SCRIPT = spawnSync('script', ['--version']).status === 0;
if (!SCRIPT) console.warn('util-linux `script` is not installed: the tests of the daemon on a terminal are skipped');

/**
 * `stacker run ARGS` on a terminal, its stdout (the result of --once) to a file: what the
 * terminal shows is the log, as a container's log collector reads it under `docker run -t`.
 */
function runOnTerminal(args: readonly string[], env: Record<string, string>): Promise<{ code: number; log: string }> {
  const command = ['exec', process.execPath, CLI, 'run', ...args].map(shellWord).join(' ');
  const child = spawn('script', ['-qec', `${command} > ${shellWord(join(t.dir.root, 'stdout.txt'))}`, '/dev/null'], {
    env: { PATH: process.env['PATH'] ?? '', HOME: t.dir.root, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, log: log.replace(/\r\n/g, '\n') })));
}

function dcaEverySecond(): void {
  t.dir.writeStrategy('dca-btc', { STRATEGY: 'dca', SCHEDULE: '* * * * * *', MARKET: 'BTC_USDT', AMOUNT: '0.001' });
}

describe('the daemon for log shippers and probes', () => {
  it('logs a request refused for its Host (421) once, naming the host and STACKER_METRICS_ALLOWED_HOSTS, however often it comes', async () => {
    dcaEverySecond();
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_METRICS_PORT: '0' });
    await daemon.waitFor('"event":"scheduled"');
    const url = metricsUrl(daemon.output());
    for (let i = 0; i < 3; i += 1) expect(await getAs(url, '/metrics', `stacker:${new URL(url).port}`)).toBe(421);
    expect(await getAs(url, '/metrics', `localhost:${new URL(url).port}`)).toBe(200);
    await daemon.waitFor('"event":"host-refused"');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.output()).toBe(0);
    const refused = jsonLines(daemon.output()).filter((line) => line['event'] === 'host-refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 40, mode: 'live', host: 'stacker', allowed: ['localhost', '127.0.0.1', '[::1]'], refused: 1 });
    expect(refused[0]?.['msg']).toContain('STACKER_METRICS_ALLOWED_HOSTS');
  }, 30_000);

  it.skipIf(!SCRIPT)('keeps every line of its log one JSON object on a terminal with STACKER_LOG_FORMAT=json; without it a terminal gets readable lines', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const args = ['--live', '--once', '--strategies', t.dir.strategies, '--data-dir', t.dir.data];
    const readable = await runOnTerminal(args, t.live());
    expect(readable.code, readable.log).toBe(0);
    expect(readable.log).toContain('starting in live mode');
    expect(readable.log).not.toContain('"event":"starting"');

    const json = await runOnTerminal(args, { ...t.live(), STACKER_LOG_FORMAT: 'json' });
    expect(json.code, json.log).toBe(0);
    const lines = json.log.split('\n').filter((line) => line !== '');
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(jsonLines(json.log).map((line) => line['event'])).toContain('starting');
  }, 30_000);

  it('refuses a STACKER_LOG_FORMAT it does not know before it starts: E_CONFIG naming it, exit 2', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_LOG_FORMAT: 'yaml' });
    expect(await daemon.exited, daemon.output()).toBe(2);
    expect(daemon.output()).toContain('STACKER_LOG_FORMAT: must be json (one JSON object a line, on a terminal too) or pretty');
    expect(daemon.output()).toContain('E_CONFIG');
  }, 30_000);
});
