import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DEMO_MARKETS } from '../../src/sim/seed.ts';
import { marketsAtStart } from '../../src/daemon/start-markets.ts';
import { AuthError, NetworkError, ServiceUnavailableError } from '../../src/domain/errors.ts';
import type { MarketRules } from '../../src/domain/market.ts';
import type { Exchange } from '../../src/exchange/port.ts';

// The start's market reads, one account at a time or several at once (the daemon's own test,
// test/e2e/daemon.test.ts, runs it against the sandbox answering 503).

const down = (): ServiceUnavailableError => new ServiceUnavailableError({ httpStatus: 503, path: '/api/v4/public/markets', exchangeMessage: 'maintenance' });

/** An exchange whose market list fails with each of `failures` in turn, then answers. */
function exchangeFailing(failures: readonly Error[]): Exchange & { readonly calls: number } {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    markets: async (): Promise<readonly MarketRules[]> => {
      const failure = failures[calls];
      calls += 1;
      if (failure !== undefined) throw failure;
      return DEMO_MARKETS;
    },
  } as unknown as Exchange & { readonly calls: number };
}

function logs(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

describe('reading every account’s markets at start', () => {
  it('waits out each account on its own, trying again after the given delays, and names the account at each try', async () => {
    const { logger, lines } = logs();
    const main = exchangeFailing([down(), down(), down()]);
    const side = exchangeFailing([down()]);
    const found = await marketsAtStart(new Map([['main', main], ['side', side]]), { logger, stop: new AbortController().signal, wait: true, retryMs: [5, 10] });
    expect([...(found?.keys() ?? [])]).toEqual(['main', 'side']);
    expect([main.calls, side.calls]).toEqual([4, 2]);
    expect(lines.filter((l) => l['event'] === 'exchange-waiting').map((l) => [l['account'], l['attempt'], l['retryInMs']])).toEqual([
      ['main', 1, 5],
      ['side', 1, 5],
      ['main', 2, 10],
      ['main', 3, 10],
    ]);
  });

  it('ends the start on a failure that waiting cannot mend, for every account', async () => {
    const { logger } = logs();
    const refused = new AuthError({ httpStatus: 401, path: '/api/v4/public/markets', exchangeMessage: 'refused' });
    const main = exchangeFailing([refused]);
    const side = exchangeFailing(Array.from({ length: 100 }, down));
    await expect(marketsAtStart(new Map([['main', main], ['side', side]]), { logger, stop: new AbortController().signal, wait: true, retryMs: [5] })).rejects.toBe(refused);
  });

  it('names the account in the error that ends the start when there are several, keeping its class and code', async () => {
    const { logger } = logs();
    const failure = down();
    const error = await marketsAtStart(new Map([['main', exchangeFailing([])], ['kids', exchangeFailing([failure])]]), { logger, stop: new AbortController().signal, wait: false }).catch((e: unknown) => e);
    expect(error).toBe(failure);
    expect(error).toMatchObject({ code: 'E_UNAVAILABLE', message: expect.stringMatching(/^account kids: /) });
    // One account: the message is the exchange's own.
    const alone = down();
    await expect(marketsAtStart(new Map([['main', exchangeFailing([alone])]]), { logger, stop: new AbortController().signal, wait: false })).rejects.toBe(alone);
    expect(alone.message).not.toMatch(/^account /);
  });

  it('ends the start on a TLS failure, which waiting does not mend, and hints at a host name not found while it waits', async () => {
    const { logger, lines } = logs();
    const tls = new NetworkError('/api/v4/public/markets', 'ERR_SSL_WRONG_VERSION_NUMBER', false, 'TLS handshake failed');
    expect(tls.retryable).toBe(false);
    await expect(marketsAtStart(new Map([['main', exchangeFailing([tls])]]), { logger, stop: new AbortController().signal, wait: true, retryMs: [5] })).rejects.toBe(tls);
    const typo = new NetworkError('/api/v4/public/markets', 'ENOTFOUND', false, 'host name not found');
    expect(await marketsAtStart(new Map([['main', exchangeFailing([typo])]]), { logger, stop: new AbortController().signal, wait: true, retryMs: [5] })).not.toBeNull();
    expect(lines.find((l) => l['event'] === 'exchange-waiting')?.['msg']).toMatch(/if this lasts, check the host name in STACKER_BASE_URL/);
  });

  it('says so when the exchange does not answer for a while, before the try fails, and not while it waits between tries', async () => {
    const { logger, lines } = logs();
    let calls = 0;
    const slowThenDown = {
      markets: async (): Promise<readonly MarketRules[]> => {
        calls += 1;
        if (calls === 1) {
          await new Promise((resolve) => setTimeout(resolve, 60));
          throw down();
        }
        return DEMO_MARKETS;
      },
    } as unknown as Exchange;
    await marketsAtStart(new Map([['main', slowThenDown]]), { logger, stop: new AbortController().signal, wait: true, retryMs: [100], slowNoticeMs: 20 });
    expect(lines.map((l) => l['event']).filter((e) => e !== undefined)).toEqual(['exchange-slow', 'exchange-waiting', 'exchange-back']);
  });

  it('tries once for `run --once`, and answers null when told to stop while it waits', async () => {
    const { logger } = logs();
    const failure = down();
    await expect(marketsAtStart(new Map([['main', exchangeFailing([failure])]]), { logger, stop: new AbortController().signal, wait: false })).rejects.toBe(failure);
    const stop = new AbortController();
    const waiting = marketsAtStart(new Map([['main', exchangeFailing(Array.from({ length: 100 }, down))]]), { logger, stop: stop.signal, wait: true, retryMs: [60_000] });
    setTimeout(() => stop.abort(), 20);
    expect(await waiting).toBeNull();
  });
});
