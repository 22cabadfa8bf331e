import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { type Intent, intentProblems, readsOf } from '../../src/engine/contract.ts';
import { parseInstanceParams } from '../../src/engine/params.ts';
import { dca } from '../../strategies/dca.ts';
import { type ViewSpec, btcUsdt, slotView } from './view.ts';

const SOURCE = 'config/strategies/dca-btc.env';
const BASE_ENV = { STRATEGY: 'dca', SCHEDULE: '0 9 * * *', MARKET: 'BTC_USDT', AMOUNT: '0.0005' };

async function decide(env: Record<string, string>, spec: ViewSpec): Promise<readonly Intent[]> {
  const params = parseInstanceParams(dca, { ...BASE_ENV, ...env }, SOURCE);
  const intents = await dca.decide(slotView({ ...spec, reads: readsOf(dca, params) }), params);
  for (const intent of intents) expect(intentProblems(intent)).toEqual([]);
  return intents;
}

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

  it('refuses below the min amount with reason below-min-amount', async () => {
    const intents = await decide({ AMOUNT: '0.00005' }, FUNDED);
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'below-min-amount' })]);
  });

  it('refuses an amount that rounds down to zero with reason below-min-amount', async () => {
    const intents = await decide({ AMOUNT: '0.0000001' }, { ...FUNDED, markets: [btcUsdt({ minBaseAmount: new Decimal(0) })] });
    expect(intents.at(-1)).toMatchObject({ kind: 'refusal', reason: 'below-min-amount' });
    expect(intents.some((i) => i.kind === 'buy-stock-market')).toBe(false);
  });

  it('refuses below the min total at the view price with reason below-min-total (0.0001 × 40000 = 4 < 5)', async () => {
    const intents = await decide({ AMOUNT: '0.0001' }, { ...FUNDED, prices: { BTC_USDT: '40000' } });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'below-min-total', data: expect.objectContaining({ total: '4' }) })]);
  });

  it('refuses above the max total with reason above-max-total (0.002 × 65000 = 130 > 100)', async () => {
    const intents = await decide({ AMOUNT: '0.002' }, { ...FUNDED, markets: [btcUsdt({ maxQuoteTotal: new Decimal(100) })] });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'above-max-total' })]);
  });

  it('refuses when trading is disabled on the market', async () => {
    const intents = await decide({}, { ...FUNDED, markets: [btcUsdt({ tradesEnabled: false })] });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'trading-disabled' })]);
  });

  it('refuses over budget when the estimated value is above the remaining budget (32.5 > 30)', async () => {
    const intents = await decide({}, { ...FUNDED, remainingQuote: '30' });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'over-budget' })]);
    expect((intents[0] as { message: string }).message).toContain('32.5 USDT');
  });

  it('buys when the estimated value equals the remaining budget exactly', async () => {
    const intents = await decide({}, { ...FUNDED, remainingQuote: '32.5' });
    expect(intents.map((i) => i.kind)).toEqual(['buy-stock-market']);
  });

  it('refuses above MAX_ORDER_QUOTE with reason above-max-order', async () => {
    const intents = await decide({}, { ...FUNDED, maxOrderQuote: '25' });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'above-max-order' })]);
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

  it('refuses with insufficient-funds when the main balance cannot cover the shortfall', async () => {
    const intents = await decide({ ALLOW_TRANSFER: 'true' }, { ...FUNDED, trade: { USDT: { available: '10.004' } }, main: { USDT: '22.52' } });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'insufficient-funds' })]);
  });

  it('refuses with insufficient-funds, without a transfer, when ALLOW_TRANSFER is false', async () => {
    const intents = await decide({}, { ...FUNDED, trade: { USDT: { available: '10' } }, main: { USDT: '1000' } });
    expect(intents).toEqual([expect.objectContaining({ kind: 'refusal', reason: 'insufficient-funds', message: expect.stringContaining('ALLOW_TRANSFER is false') })]);
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
    const problems = dca.checkParams?.(params, { market: () => undefined, marketNames: () => ['BTC_USDT', 'ETH_USDT'] }, SOURCE);
    expect(problems).toEqual([{ source: SOURCE, field: 'MARKET', rule: expect.stringContaining('did you mean BTC_USDT?') }]);
  });

  it('reports at start an AMOUNT that rounds below the market minimum', () => {
    const params = parseInstanceParams(dca, { ...BASE_ENV, AMOUNT: '0.00009999' }, SOURCE);
    const rules = btcUsdt();
    const problems = dca.checkParams?.(params, { market: () => rules, marketNames: () => ['BTC_USDT'] }, SOURCE);
    expect(problems).toEqual([{ source: SOURCE, field: 'AMOUNT', rule: expect.stringContaining('rounds down to 0.000099') }]);
  });

  it('reads balances, markets and prices, never the paged codes', () => {
    expect(readsOf(dca, parseInstanceParams(dca, BASE_ENV, SOURCE))).toEqual(['balances', 'markets', 'prices']);
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
