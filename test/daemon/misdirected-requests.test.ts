import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MISDIRECTED_LOG_EVERY_MS, misdirectedRequests } from '../../src/daemon/misdirected-requests.ts';
import { type Logger, createLogger } from '../../src/observability/logger.ts';

const ALLOWED = ['localhost', '127.0.0.1', '[::1]'];

/** A real logger writing to memory, and its lines so far. */
async function recorder(): Promise<{ logger: Logger; lines: () => Array<Record<string, unknown>> }> {
  let text = '';
  const logger = await createLogger({ level: 'info', destination: new Writable({ write: (chunk, _encoding, done) => void ((text += String(chunk)), done()) }) });
  return { logger, lines: () => text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('the warning for requests refused for their Host (421)', () => {
  it('names the host asked for, the names allowed and the setting that allows them, at the first request', async () => {
    const { lines, logger } = await recorder();
    misdirectedRequests(logger)('prometheus', ALLOWED);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({ level: 40, event: 'host-refused', host: 'prometheus', allowed: ALLOWED, refused: 1 });
    expect(lines()[0]?.['msg']).toMatch(/^answered 421 to a request naming the host "prometheus": the status server answers only to localhost, 127\.0\.0\.1, \[::1\] \(STACKER_METRICS_ALLOWED_HOSTS\)/);
  });

  it('tells each host once per five minutes, then again with how many of its requests were refused since', async () => {
    const { lines, logger } = await recorder();
    let nowMs = 0;
    const refused = misdirectedRequests(logger, MISDIRECTED_LOG_EVERY_MS, () => nowMs);
    // A scrape every 15 s for ten minutes, from two names.
    for (; nowMs < 10 * 60_000; nowMs += 15_000) {
      refused('prometheus', ALLOWED);
      refused('10.0.0.7', ALLOWED);
    }
    expect(lines().map((line) => [line['host'], line['refused']])).toEqual([
      ['prometheus', 1],
      ['10.0.0.7', 1],
      ['prometheus', 20],
      ['10.0.0.7', 20],
    ]);
  });

  it('follows a bounded number of hosts: a client making up names shares one line for the rest', async () => {
    const { lines, logger } = await recorder();
    const refused = misdirectedRequests(logger, MISDIRECTED_LOG_EVERY_MS, () => 0);
    for (let i = 0; i < 1000; i += 1) refused(`name-${i}.example`, ALLOWED);
    expect(lines()).toHaveLength(101);
  });
});
