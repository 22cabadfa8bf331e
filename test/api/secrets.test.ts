import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { StackerError } from '../../src/domain/errors.ts';
import { Decimal } from '../../src/domain/money.ts';
import { harness, type Harness } from './helpers.ts';

const SECRET = 'SECRET-do-not-leak-7f3a9c1e5b';
const KEY = 'APIKEY-do-not-leak-2b4d6f8a0c';

type Setup = (h: Harness) => void;

const STOCK = '/api/v4/order/stock_market';
const BALANCE = '/api/v4/trade-account/balance';

const jsonReply = (path: string, status: number, body: object | string): Setup => (h) => {
  h.pool.intercept({ path, method: 'POST' }).reply(status, body).persist();
};

/** Every error path, including a server that echoes our credentials and a library error that quotes them. */
const PATHS: ReadonlyArray<[string, Setup]> = [
  ['400 validation', jsonReply(STOCK, 422, { code: 30, message: 'Validation failed', errors: { amount: ['Amount field is required.'] } })],
  ['422 refusal', jsonReply(STOCK, 422, { code: 32, message: 'Validation failed', errors: { amount: ['Not enough balance.'] } })],
  ['401 auth', jsonReply(STOCK, 401, { code: 10, message: 'Unauthorized request.' })],
  ['429 nonce', jsonReply(STOCK, 429, { code: 0, errors: {}, message: 'Too many requests.' })],
  ['429 gateway text', jsonReply(STOCK, 429, 'Too Many Requests')],
  ['503 html', jsonReply(STOCK, 503, '<html><body>maintenance</body></html>')],
  ['500 json', jsonReply(STOCK, 500, { error: ['Internal server error.'] })],
  ['200 not JSON', jsonReply(STOCK, 200, 'garbage')],
  ['200 unreadable money', jsonReply(STOCK, 200, { orderId: 1, market: 'BTC_USDT', side: 'buy', type: 'stock market', timestamp: 1, dealMoney: 'lots', dealStock: '1', amount: '1', dealFee: '0' })],
  [
    'server echoes payload, signature, key and secret',
    (h) => {
      h.pool
        .intercept({ path: STOCK, method: 'POST' })
        .reply(400, (opts) => {
          const headers = opts.headers as Record<string, string>;
          const payload = headers['x-txc-payload']!;
          const signature = headers['x-txc-signature']!;
          return { code: 0, message: `bad signature ${signature} for payload ${payload} key ${KEY} secret ${SECRET}`, errors: { [payload]: [signature, SECRET] } };
        })
        .persist();
    },
  ],
  [
    'library error quoting the secret',
    (h) => {
      h.pool.intercept({ path: STOCK, method: 'POST' }).replyWithError(Object.assign(new Error(`socket hiccup while sending ${SECRET} ${KEY}`), { code: 'E_SOMETHING_NEW' })).persist();
    },
  ],
  [
    'headers timeout',
    (h) => {
      h.pool.intercept({ path: STOCK, method: 'POST' }).replyWithError(Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' })).persist();
    },
  ],
  [
    'reset',
    (h) => {
      h.pool.intercept({ path: STOCK, method: 'POST' }).replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })).persist();
    },
  ],
];

function renderings(error: unknown): string[] {
  const e = error as Error & Record<string, unknown>;
  return [
    String(e.message),
    String(e.stack),
    JSON.stringify(e),
    JSON.stringify({ ...e }),
    inspect(e, { depth: 10, showHidden: true }),
    ...Object.getOwnPropertyNames(e).map((name) => inspect(e[name], { depth: 10 })),
  ];
}

describe('secrets never leave in errors or events', () => {
  let h: Harness;
  afterEach(async () => {
    await h.agent.close();
  });

  it.each(PATHS)('%s: no secret, key, signature or payload in the error or the events', async (_name, setup) => {
    h = harness({ credentials: { apiKey: KEY, apiSecret: SECRET } });
    setup(h);
    const error = await h.client.buyStockMarket({ market: 'BTC_USDT', baseAmount: new Decimal('1') }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StackerError);
    expect((error as Error).cause).toBeUndefined();
    const sent = h.agent.getCallHistory()?.calls() ?? [];
    expect(sent.length).toBeGreaterThan(0);
    const forbidden = [SECRET, KEY];
    for (const call of sent) {
      const headers = call.headers as Record<string, string>;
      forbidden.push(headers['x-txc-signature']!, headers['x-txc-payload']!);
    }
    const texts = [...renderings(error), JSON.stringify(h.events)];
    for (const text of texts) for (const secret of forbidden) expect(text).not.toContain(secret);
  });

  it('keeps secrets out of every attempt of a retried read', async () => {
    h = harness({ credentials: { apiKey: KEY, apiSecret: SECRET } });
    h.pool.intercept({ path: BALANCE, method: 'POST' }).replyWithError(Object.assign(new Error(`reset ${SECRET}`), { code: 'ECONNRESET' })).persist();
    const error = await h.client.tradeBalances().then(
      () => null,
      (e: unknown) => e,
    );
    expect(h.events).toHaveLength(4);
    for (const text of [...renderings(error), JSON.stringify(h.events)]) expect(text).not.toContain(SECRET);
    expect(Object.keys(h.events[0]!).sort()).toEqual(['attempt', 'durationMs', 'errorCode', 'method', 'path', 'scope', 'status']);
  });
});
