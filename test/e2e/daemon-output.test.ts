import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellWord } from '../../src/cli/shell-word.ts';
import { CLI, sandboxPerTest, startDaemon } from './daemon-process.ts';
import { CONTROL_TOKEN, postControl } from './status-daemon.ts';

// What `stacker run` writes for a log shipper and what its status server tells a probe: the real
// CLI in a child process, its log read as a collector reads it.
const t = sandboxPerTest();

type LogLine = Readonly<Record<string, unknown>>;

const jsonLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

/** A log shipper's view: every line of the output is one JSON object. */
function everyLineJson(output: string): void {
  const lines = output.split('\n').filter((line) => line !== '');
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) expect(() => JSON.parse(line), `not JSON: ${line}\nin:\n${output}`).not.toThrow();
}

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

/**
 * NODE_OPTIONS that make the daemon do `code` when it gets SIGUSR2: code loaded before stacker's
 * own (`--import`, as an operator's preload is), so a test decides when Node warns or crashes.
 */
function onSigusr2(code: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(`process.on('SIGUSR2', () => { ${code} });`)}` };
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
    everyLineJson(json.log);
    expect(jsonLines(json.log).map((line) => line['event'])).toContain('starting');
  }, 30_000);

  it('refuses a STACKER_LOG_FORMAT it does not know before it starts: E_CONFIG naming it, exit 2', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_LOG_FORMAT: 'yaml' });
    expect(await daemon.exited, daemon.output()).toBe(2);
    expect(daemon.output()).toContain('STACKER_LOG_FORMAT: must be json (one JSON object a line, on a terminal too) or pretty');
    expect(daemon.output()).toContain('E_CONFIG');
  }, 30_000);

  it('writes nothing but JSON lines when a start fails with the log in JSON: start-failed names the mode, the code, the exit code and each problem', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_METRICS_PORT: String(port) });
      expect(await daemon.exited, daemon.output()).toBe(2);
      everyLineJson(daemon.output());
      const failed = jsonLines(daemon.output()).filter((line) => line['event'] === 'start-failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ level: 50, mode: 'live', code: 'E_CONFIG', exitCode: 2, retryable: false, problems: [{ field: 'STACKER_METRICS_PORT', rule: expect.stringContaining(`port ${port} is already in use`) }] });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 30_000);

  it('says a start refused for its settings in JSON too, marked with the mode they name', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_LOG_LEVEL: 'loud' });
    expect(await daemon.exited, daemon.output()).toBe(2);
    everyLineJson(daemon.output());
    expect(jsonLines(daemon.output()).find((line) => line['event'] === 'start-failed')).toMatchObject({
      mode: 'live',
      code: 'E_CONFIG',
      exitCode: 2,
      problems: [{ field: 'STACKER_LOG_LEVEL', rule: expect.stringContaining('must be one of') }],
    });
  }, 30_000);

  it('exits 4 for a start failure that passes, in one JSON line that says it may be tried again', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_DATABASE_URL: `postgres://stacker@127.0.0.1:${port}/stacker` });
    expect(await daemon.exited, daemon.output()).toBe(4);
    everyLineJson(daemon.output());
    expect(jsonLines(daemon.output()).find((line) => line['event'] === 'start-failed')).toMatchObject({ mode: 'live', code: 'E_STORE', exitCode: 4, retryable: true });
  }, 30_000);

  it.skipIf(!SCRIPT)('on a terminal, a failed start is told in words too; forced to JSON there, it is JSON alone', async () => {
    t.dir.writeStrategy('report', { STRATEGY: 'balance-report', SCHEDULE: '0 0 1 1 *' });
    const args = ['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data];
    const readable = await runOnTerminal(args, { ...t.live(), STACKER_LOG_LEVEL: 'loud' });
    expect(readable.code, readable.log).toBe(2);
    expect(readable.log).toContain('error: environment: STACKER_LOG_LEVEL: must be one of');

    const json = await runOnTerminal(args, { ...t.live(), STACKER_LOG_LEVEL: 'loud', STACKER_LOG_FORMAT: 'json' });
    expect(json.code, json.log).toBe(2);
    everyLineJson(json.log);
    expect(jsonLines(json.log).find((line) => line['event'] === 'start-failed')).toMatchObject({ mode: 'live', code: 'E_CONFIG' });
  }, 30_000);

  it("logs Node's own warnings as JSON lines (node-warning), not Node's text", async () => {
    dcaEverySecond();
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], {
      ...t.live(),
      ...onSigusr2("process.emitWarning('the old way is going away', { type: 'DeprecationWarning', code: 'DEP0999' });"),
    });
    await daemon.waitFor('"event":"scheduled"');
    daemon.child.kill('SIGUSR2');
    await daemon.waitFor('"event":"node-warning"');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.output()).toBe(0);
    everyLineJson(daemon.output());
    expect(jsonLines(daemon.output()).find((line) => line['event'] === 'node-warning')).toMatchObject({
      level: 40,
      mode: 'live',
      name: 'DeprecationWarning',
      code: 'DEP0999',
      warning: 'the old way is going away',
    });
  }, 30_000);

  it.each([
    ['an exception nothing catches', "setImmediate(() => { throw new Error('boom'); });", 'uncaughtException', 'boom'],
    ['a promise rejected with nothing to handle it', "void Promise.reject(new Error('nobody listened'));", 'unhandledRejection', 'nobody listened'],
  ])('ends on %s with a fatal JSON line (crashed, with the stack) and exit 1, as Node would', async (_what, code, origin, message) => {
    dcaEverySecond();
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), ...onSigusr2(code) });
    await daemon.waitFor('"event":"scheduled"');
    daemon.child.kill('SIGUSR2');
    expect(await daemon.exited, daemon.output()).toBe(1);
    everyLineJson(daemon.output());
    const crashed = jsonLines(daemon.output()).filter((line) => line['event'] === 'crashed');
    expect(crashed).toHaveLength(1);
    expect(crashed[0]).toMatchObject({ level: 60, mode: 'live', origin, error: message, stack: expect.stringContaining(message) });
  }, 30_000);

  it('serves /healthz (503, starting, naming the wait), /metrics (the journal\'s last slot and order, the counters at 0) and the controls while it waits for the exchange at start, and is healthy once it trades', async () => {
    dcaEverySecond();
    // A slot bought before: the journal knows its time and its order's.
    const once = startDaemon(['--live', '--once', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], t.live());
    expect(await once.exited, once.output()).toBe(0);
    t.sandbox.faults.inject({ path: '/api/v4/public/markets', kind: 'status', status: 503, body: 'maintenance', times: Number.POSITIVE_INFINITY });
    const daemon = startDaemon(['--live', '--strategies', t.dir.strategies, '--data-dir', t.dir.data], { ...t.live(), STACKER_METRICS_PORT: '0', STACKER_CONTROL_TOKEN: CONTROL_TOKEN });
    await daemon.waitFor('"event":"exchange-waiting"', 20_000);
    const url = metricsUrl(daemon.output());
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(503);
    const body = (await health.json()) as { status: string; problems: string[] };
    expect(body.status).toBe('starting');
    expect(body.problems[0]).toMatch(/^starting: waiting for the exchange, whose market list could not be read: account default since \S+ \(E_UNAVAILABLE: .*\); nothing is scheduled until it answers$/);
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    const scraped = await metrics.text();
    expect(scraped).toMatch(/^stacker_last_successful_slot_timestamp_seconds\{strategy_instance="dca-btc"\} \d{10}$/m);
    expect(scraped).toMatch(/^stacker_last_order_timestamp_seconds\{strategy_instance="dca-btc"\} \d{10}/m);
    expect(scraped).toMatch(/^stacker_slots_total\{strategy_instance="dca-btc",outcome="missed"\} 0$/m);
    // /api/status says the same as /healthz, and names no next slot while nothing is scheduled.
    const status = (await (await fetch(`${url}/api/status`)).json()) as { health: { status: string }; instances: Array<{ nextSlot: string | null }> };
    expect(status.health.status).toBe('starting');
    expect(status.instances.map((instance) => instance.nextSlot)).toEqual([null]);
    // The controls are there: a kill switch is taken (and journalled), a slot now must wait for the start.
    expect((await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: true })).status).toBe(200);
    expect((await postControl(url, '/api/instances/dca-btc/run', CONTROL_TOKEN)).status).toBe(503);
    expect((await postControl(url, '/api/kill-switch', CONTROL_TOKEN, { on: false })).status).toBe(200);

    t.sandbox.faults.clear();
    await daemon.waitFor('"event":"scheduled"', 30_000);
    await expect.poll(async () => (await fetch(`${url}/healthz`)).status, { timeout: 10_000 }).toBe(200);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.output()).toBe(0);
  }, 60_000);
});
