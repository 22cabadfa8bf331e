import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { sandboxPerTest, startDaemon } from './daemon-process.ts';

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
});
