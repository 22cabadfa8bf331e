import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configProblems } from '../../strategies/sdk-testing.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { type Intent, intentProblems, readsOf } from '../../src/engine/contract.ts';
import { parseInstanceParams } from '../../src/engine/params.ts';
import { dca } from '../../strategies/dca.ts';
import { judgeWith } from '../../strategies/sdk-testing.ts';
import { type ViewSpec, btcUsdt, slotView } from './view.ts';
import { notListed } from '../../src/config/instance-runtime.ts';

const SOURCE = 'config/strategies/dca-btc.env';
const BASE_ENV = { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0005' };

async function decide(env: Record<string, string>, spec: ViewSpec): Promise<readonly Intent[]> {
  const params = parseInstanceParams(dca, { ...BASE_ENV, ...env }, SOURCE);
  const intents = await dca.decide(slotView({ ...spec, reads: readsOf(dca, params) }), params);
  for (const intent of intents) expect(intentProblems(intent)).toEqual([]);
  return intents;
}

async function verdicts(env: Record<string, string>, spec: ViewSpec): Promise<Array<[string, string | null]>> {
  return (await judgeWith(dca, { ...BASE_ENV, ...env }, spec)).map(({ intent, refused }) => [intent.kind, refused]);
}

const problemsOf = configProblems;

/** Intents in a compact text form: money as plain decimal strings. */
function plain(intents: readonly Intent[]): unknown[] {
  return JSON.parse(JSON.stringify(intents)) as unknown[];
}

const FUNDED: ViewSpec = { markets: [btcUsdt()], prices: { BTC_USDT: '65000' }, trade: { USDT: { available: '1000' } } };

describe('dca', () => {
  it('buys the configured base amount at market with the configured STP and prefix when the trade balance pays', async () => {
    const intents = await decide({ STP: 'cancel_new', CLIENT_ORDER_PREFIX: 'dca-btc' }, FUNDED);
    expect(plain(intents)).toEqual([{ kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.0005', stp: 'cn', tag: 'dca-btc' }]);
  });

  it('leaves the clientOrderId prefix to the engine and sends STP no when neither is configured', async () => {
    const intents = await decide({}, FUNDED);
    expect(plain(intents)).toEqual([{ kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.0005', stp: 'no' }]);
  });

  it("rounds the amount down to the market's base precision (0.00051234 at 6 decimals buys 0.000512) and notes it", async () => {
    const intents = await decide({ AMOUNT: '0.00051234' }, FUNDED);
    const buy = intents.find((i) => i.kind === 'buy-stock-market');
    expect(buy?.kind === 'buy-stock-market' && formatDecimal(buy.amount)).toBe('0.000512');
    expect(intents[0]).toMatchObject({ kind: 'note', level: 'info', data: { requested: '0.00051234', amount: '0.000512' } });
  });

  // The market rules, MAX_ORDER_QUOTE, budgets and balances are the engine's guards (contract 2):
  // dca sizes the order; `judgeWith` shows what the engine does with it before anything is sent.
  it('is refused below the min amount with reason below-min-amount', async () => {
    expect(await verdicts({ AMOUNT: '0.000005' }, { ...FUNDED, markets: [btcUsdt({ basePrecision: 8 })] })).toEqual([['buy-stock-market', 'below-min-amount']]);
  });

  it('refuses an amount that rounds down to zero itself (no zero buy is ever returned)', async () => {
    const intents = await decide({ AMOUNT: '0.0000001' }, { ...FUNDED, markets: [btcUsdt({ minBaseAmount: new Decimal(0) })] });
    expect(intents.at(-1)).toMatchObject({ kind: 'refusal', reason: 'below-min-amount' });
    expect(intents.some((i) => i.kind === 'buy-stock-market')).toBe(false);
  });

  it('is refused below the min total at the view price with reason below-min-total (0.0001 × 40000 = 4 < 5)', async () => {
    expect(await verdicts({ AMOUNT: '0.0001' }, { ...FUNDED, prices: { BTC_USDT: '40000' } })).toEqual([['buy-stock-market', 'below-min-total']]);
  });

  it('is refused above the max total with reason above-max-total (0.002 × 65000 = 130 > 100)', async () => {
    expect(await verdicts({ AMOUNT: '0.002' }, { ...FUNDED, markets: [btcUsdt({ maxQuoteTotal: new Decimal(100) })] })).toEqual([['buy-stock-market', 'above-max-total']]);
  });

  it('is refused when trading is disabled on the market', async () => {
    expect(await verdicts({}, { ...FUNDED, markets: [btcUsdt({ tradesEnabled: false })] })).toEqual([['buy-stock-market', 'trading-disabled']]);
  });

  it('is refused over budget when the estimated value is above the remaining budget (32.5 > 30)', async () => {
    const [judged] = await judgeWith(dca, { ...BASE_ENV }, { ...FUNDED, remainingQuote: '30' });
    expect([judged?.refused, judged?.message]).toEqual(['over-budget', expect.stringContaining('32.5 USDT')]);
  });

  it('buys when the estimated value equals the remaining budget exactly', async () => {
    expect(await verdicts({}, { ...FUNDED, remainingQuote: '32.5' })).toEqual([['buy-stock-market', null]]);
  });

  it('is refused above MAX_ORDER_QUOTE with reason above-max-order', async () => {
    expect(await verdicts({}, { ...FUNDED, maxOrderQuote: '25' })).toEqual([['buy-stock-market', 'above-max-order']]);
  });

  it('transfers exactly the shortfall from main before the buy: 32.5 + 0.0325 fee − 10.004 = 22.5285 → 22.53', async () => {
    const intents = await decide({ ALLOW_TRANSFER: 'true' }, { ...FUNDED, trade: { USDT: { available: '10.004' } }, main: { USDT: '100' } });
    expect(plain(intents)).toEqual([
      { kind: 'transfer', ticker: 'USDT', amount: '22.53', from: 'main', to: 'spot' },
      { kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.0005', stp: 'no' },
    ]);
  });

  it('adds TRANSFER_BUFFER_PCT to the transfer: 32.5325 × 1.01 − 10.004 = 22.853825 → 22.86', async () => {
    const intents = await decide(
      { ALLOW_TRANSFER: 'true', TRANSFER_BUFFER_PCT: '1' },
      { ...FUNDED, trade: { USDT: { available: '10.004' } }, main: { USDT: '100' } },
    );
    expect(plain(intents)[0]).toEqual({ kind: 'transfer', ticker: 'USDT', amount: '22.86', from: 'main', to: 'spot' });
  });

  it('caps the buffered transfer at the main balance when main covers the shortfall but not the buffer', async () => {
    const intents = await decide(
      { ALLOW_TRANSFER: 'true', TRANSFER_BUFFER_PCT: '1' },
      { ...FUNDED, trade: { USDT: { available: '10.004' } }, main: { USDT: '22.6' } },
    );
    expect(plain(intents).map((i) => (i as { amount: string }).amount)).toEqual(['22.6', '0.0005']);
  });

  it('rounds a transfer of the whole main balance down to the 8 decimals a transfer takes', async () => {
    const intents = await decide(
      { ALLOW_TRANSFER: 'true', TRANSFER_BUFFER_PCT: '1' },
      { ...FUNDED, trade: { USDT: { available: '10.004' } }, main: { USDT: '22.6000000099' } },
    );
    expect(plain(intents).map((i) => (i as { amount: string }).amount)).toEqual(['22.6', '0.0005']);
  });

  it('rounds the transfer up to its 8 decimals on a market priced in more, so that the buy it funds goes through', async () => {
    // 0.0005 × 65000.123456789 = 32.5000617283945, + the fee rounded up to 12 decimals: 32.532561790123; − 10 on the trade balance.
    const fine = { ...FUNDED, markets: [btcUsdt({ quotePrecision: 12, feePrecision: 12 })], prices: { BTC_USDT: '65000.123456789' }, trade: { USDT: { available: '10' } }, main: { USDT: '100' } };
    const intents = await decide({ ALLOW_TRANSFER: 'true' }, fine);
    expect((plain(intents)[0] as { amount: string }).amount).toBe('22.5325618');
    expect(await verdicts({ ALLOW_TRANSFER: 'true' }, fine)).toEqual([
      ['transfer', null],
      ['buy-stock-market', null],
    ]);
  });

  it('moves what main has when it cannot cover the shortfall; the buy is refused and the transfer with it', async () => {
    const judged = await verdicts({ ALLOW_TRANSFER: 'true' }, { ...FUNDED, trade: { USDT: { available: '10.004' } }, main: { USDT: '22.52' } });
    expect(judged).toEqual([
      ['transfer', 'group-refused'],
      ['buy-stock-market', 'insufficient-funds'],
    ]);
  });

  it('is refused with insufficient-funds, without a transfer, when ALLOW_TRANSFER is false', async () => {
    expect(await verdicts({}, { ...FUNDED, trade: { USDT: { available: '10' } }, main: { USDT: '1000' } })).toEqual([['buy-stock-market', 'insufficient-funds']]);
  });

  it('refuses with no-price when the view has no price for the market', async () => {
    const intents = await decide({}, { ...FUNDED, prices: {} });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'no-price' })]);
  });

  it('refuses with unknown-market when the exchange no longer lists the market', async () => {
    const intents = await decide({}, { ...FUNDED, markets: [] });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'unknown-market' })]);
  });

  it('reports at start a market the exchange does not list, with a suggestion', () => {
    const params = parseInstanceParams(dca, { ...BASE_ENV, MARKET: 'BTC_USDX' }, SOURCE);
    const problems = dca.checkParams?.(params, { market: () => undefined, marketNames: () => ['BTC_USDT', 'ETH_USDT'], unlisted: (name) => notListed(name, ['BTC_USDT', 'ETH_USDT']) }, SOURCE);
    expect(problems).toEqual([{ source: SOURCE, field: 'MARKET', rule: expect.stringContaining('did you mean BTC_USDT?') }]);
  });

  it('reports at start an AMOUNT that rounds below the market minimum', () => {
    const params = parseInstanceParams(dca, { ...BASE_ENV, AMOUNT: '0.00009999' }, SOURCE);
    const rules = btcUsdt({ minBaseAmount: new Decimal('0.0001') });
    const problems = dca.checkParams?.(params, { market: () => rules, marketNames: () => ['BTC_USDT'], unlisted: (name) => notListed(name, ['BTC_USDT']) }, SOURCE);
    expect(problems).toEqual([{ source: SOURCE, field: 'AMOUNT', rule: expect.stringContaining('rounds down to 0.000099') }]);
  });

  it('reads balances, markets and prices, never the paged codes', () => {
    expect(readsOf(dca, parseInstanceParams(dca, BASE_ENV, SOURCE))).toEqual(['balances', 'markets', 'prices']);
  });

  it('AMOUNT_QUOTE=50 at 65000 buys 50 / 65000 = 0.000769230… rounded down to 0.000769 (49.985 USDT)', async () => {
    const intents = await decide({ AMOUNT: '', AMOUNT_QUOTE: '50' }, FUNDED);
    expect(plain(intents)).toEqual([{ kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.000769', stp: 'no' }]);
  });

  it('takes AMOUNT or AMOUNT_QUOTE: both, or neither, is an error naming both keys', () => {
    const both = problemsOf(() => parseInstanceParams(dca, { ...BASE_ENV, AMOUNT_QUOTE: '50' }, SOURCE));
    expect(both).toEqual([{ source: SOURCE, field: 'AMOUNT', rule: expect.stringMatching(/AMOUNT .*or AMOUNT_QUOTE .*not both/) }]);
    const neither = problemsOf(() => parseInstanceParams(dca, { ...BASE_ENV, AMOUNT: '' }, SOURCE));
    expect(neither).toEqual([{ source: SOURCE, field: 'AMOUNT', rule: expect.stringContaining('unless AMOUNT_QUOTE is given') }]);
  });

  it('reports at start an AMOUNT_QUOTE below the market minimum total', () => {
    const params = parseInstanceParams(dca, { ...BASE_ENV, AMOUNT: '', AMOUNT_QUOTE: '4.99' }, SOURCE);
    const problems = dca.checkParams?.(params, { market: () => btcUsdt(), marketNames: () => ['BTC_USDT'], unlisted: (name) => notListed(name, ['BTC_USDT']) }, SOURCE);
    expect(problems).toEqual([{ source: SOURCE, field: 'AMOUNT_QUOTE', rule: expect.stringContaining('below BTC_USDT\'s minimum order total 5') }]);
  });

  it('refuses at start an AMOUNT_QUOTE that is the minimum total itself: rounded down, nearly every buy comes out below it', () => {
    const params = parseInstanceParams(dca, { ...BASE_ENV, AMOUNT: '', AMOUNT_QUOTE: '5' }, SOURCE);
    const problems = dca.checkParams?.(params, { market: () => btcUsdt(), marketNames: () => ['BTC_USDT'], unlisted: (name) => notListed(name, ['BTC_USDT']) }, SOURCE);
    expect(problems).toEqual([{ source: SOURCE, field: 'AMOUNT_QUOTE', rule: expect.stringContaining("5 USDT is BTC_USDT's minimum order total itself") }]);
  });

  it('refuses a buy whose AMOUNT_QUOTE, rounded down to whole steps, falls below the min total, naming the AMOUNT_QUOTE that would buy', async () => {
    // 5.02 / 67000 = 0.0000749… → 0.000074 BTC = 4.958 USDT < 5; 0.000075 × 67000 = 5.025, 5.03 in the quote's 2 decimals, would do.
    const intents = await decide({ AMOUNT: '', AMOUNT_QUOTE: '5.02' }, { ...FUNDED, prices: { BTC_USDT: '67000' } });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'below-min-total', message: expect.stringMatching(/buys 0\.000074 BTC .*, 4\.958 USDT: below BTC_USDT's minimum order total 5; at this price AMOUNT_QUOTE 5\.03 or more buys/) })]);
    // At 65000 the same amount comes out above the minimum (0.000077 × 65000 = 5.005) and buys.
    expect(plain(await decide({ AMOUNT: '', AMOUNT_QUOTE: '5.02' }, FUNDED))).toEqual([{ kind: 'buy-stock-market', market: 'BTC_USDT', amount: '0.000077', stp: 'no' }]);
  });

  it('never spends more than AMOUNT_QUOTE at the slot price, and buys the most the precision allows (property)', async () => {
    const decimalText = (maxDigits: bigint, maxScale: number) =>
      fc.tuple(fc.bigInt({ min: 1n, max: maxDigits }), fc.integer({ min: 0, max: maxScale })).map(([digits, scale]) => {
        const t = digits.toString().padStart(scale + 1, '0');
        return scale === 0 ? t : `${t.slice(0, -scale)}.${t.slice(-scale)}`;
      });
    await fc.assert(
      fc.asyncProperty(decimalText(10n ** 9n, 4), decimalText(10n ** 10n, 4), fc.integer({ min: 0, max: 8 }), async (quote, price, basePrecision) => {
        const rules = btcUsdt({ basePrecision, minBaseAmount: new Decimal(0), minQuoteTotal: new Decimal(0), maxQuoteTotal: null });
        const params = dca.parseParams({ MARKET: 'BTC_USDT', AMOUNT_QUOTE: quote }, SOURCE);
        const view = slotView({ markets: [rules], prices: { BTC_USDT: price }, trade: { USDT: { available: '1e30' } }, reads: readsOf(dca, params) });
        const buys = (await dca.decide(view, params)).filter((i) => i.kind === 'buy-stock-market');
        for (const buy of buys) {
          expect(buy.amount.mul(price).lte(quote)).toBe(true);
          expect(buy.amount.decimalPlaces()).toBeLessThanOrEqual(basePrecision);
          expect(buy.amount.add(new Decimal(10).pow(-basePrecision)).mul(price).gt(quote)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never buys more than requested nor with more decimals than the market takes (property)', async () => {
    const amountText = fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** 14n }), fc.integer({ min: 0, max: 12 }))
      .map(([digits, scale]) => {
        const s = digits.toString().padStart(scale + 1, '0');
        return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
      });
    await fc.assert(
      fc.asyncProperty(amountText, fc.integer({ min: 0, max: 10 }), async (amount, basePrecision) => {
        const rules = btcUsdt({ basePrecision, minBaseAmount: new Decimal(0), minQuoteTotal: new Decimal(0), maxQuoteTotal: null });
        const params = dca.parseParams({ MARKET: 'BTC_USDT', AMOUNT: amount }, SOURCE);
        const view = slotView({ markets: [rules], prices: { BTC_USDT: '1' }, trade: { USDT: { available: '1000000000000000' } }, reads: readsOf(dca, params) });
        const buys = (await dca.decide(view, params)).filter((i) => i.kind === 'buy-stock-market');
        const rounded = new Decimal(amount).toDecimalPlaces(basePrecision, Decimal.ROUND_DOWN);
        expect(buys.length).toBe(rounded.isZero() ? 0 : 1);
        for (const buy of buys) {
          expect(buy.amount.lte(amount)).toBe(true);
          expect(buy.amount.decimalPlaces()).toBeLessThanOrEqual(basePrecision);
          expect(buy.amount.gt(0)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
