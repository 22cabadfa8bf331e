import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.ts';

/** A destination that keeps every line pino writes. */
function memory(): { stream: Writable; lines: () => Array<Record<string, unknown>>; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const text = (): string => chunks.join('');
  const lines = (): Array<Record<string, unknown>> =>
    text()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, lines, text };
}

const SECRET = 'sk-live-0123456789abcdef';

describe('logger', () => {
  it('redacts secrets, signatures, payloads and X-TXC headers at the top level and one level down', async () => {
    const out = memory();
    const logger = await createLogger({ level: 'info', destination: out.stream });
    logger.info(
      {
        apiSecret: SECRET,
        secret: SECRET,
        signature: SECRET,
        payload: SECRET,
        credentials: { apiKey: 'key-1', apiSecret: SECRET },
        request: { signature: SECRET, payload: SECRET, secret: SECRET },
        headers: { 'x-txc-apikey': 'key-1', 'x-txc-payload': SECRET, 'x-txc-signature': SECRET, 'content-type': 'application/json' },
        req: { headers: { 'x-txc-apikey': 'key-1', 'x-txc-payload': SECRET, 'x-txc-signature': SECRET } },
        path: '/api/v4/main-account/balance',
      },
      'sent',
    );
    expect(out.text()).not.toContain(SECRET);
    expect(out.text()).not.toContain('key-1');
    const [line] = out.lines();
    expect(line).toMatchObject({
      msg: 'sent',
      name: 'stacker',
      apiSecret: '[redacted]',
      signature: '[redacted]',
      payload: '[redacted]',
      credentials: { apiSecret: '[redacted]', apiKey: '[redacted]' },
      headers: { 'x-txc-signature': '[redacted]', 'x-txc-payload': '[redacted]', 'x-txc-apikey': '[redacted]', 'content-type': 'application/json' },
      req: { headers: { 'x-txc-signature': '[redacted]' } },
      path: '/api/v4/main-account/balance',
    });
  });

  it("writes the line the README documents: pino's numeric level, time in epoch milliseconds, name stacker, the event and msg as given", async () => {
    const out = memory();
    const logger = await createLogger({ level: 'info', destination: out.stream });
    const before = Date.now();
    logger.child({ mode: 'live' }).warn({ event: 'exchange-waiting' }, 'waiting');
    logger.fatal({ event: 'crashed' }, 'crashed');
    const [warn, fatal] = out.lines();
    expect(warn).toEqual({ level: 40, time: expect.any(Number), name: 'stacker', mode: 'live', event: 'exchange-waiting', msg: 'waiting' });
    expect(warn?.['time']).toBeGreaterThanOrEqual(before);
    expect(warn?.['time']).toBeLessThanOrEqual(Date.now());
    expect(fatal?.['level']).toBe(60);
  });

  it('logs at the configured level and drops lines below it', async () => {
    const out = memory();
    const logger = await createLogger({ level: 'warn', destination: out.stream });
    logger.info('hidden');
    logger.warn({ market: 'BTC_USDT' }, 'shown');
    expect(out.lines().map((l) => l['msg'])).toEqual(['shown']);
  });

  it('refuses an unknown level when the logger is built', async () => {
    await expect(createLogger({ level: 'loud' as 'info', destination: memory().stream })).rejects.toThrow(/level must be one of/);
  });
});
