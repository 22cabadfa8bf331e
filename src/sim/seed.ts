import type { MarketRules } from '../domain/market.ts';
import { Decimal } from '../domain/money.ts';
import type { SimCore } from './core.ts';

/** Demo prices used when no price source is given. */
export const DEMO_PRICES = { BTC_USDT: '65000', ETH_USDT: '3150.42' } as const;

export const DEMO_FLEX_PLAN_ID = '3f1c9a52-7d4e-4b8a-9e61-2c5d8f0a7b13';
export const DEMO_EMPTY_FLEX_PLAN_ID = 'a8e2d4c6-1b3f-4d5e-8a7c-9f0e1d2c3b4a';

function market(init: {
  name: string;
  basePrecision: number;
  quotePrecision: number;
  feePrecision: number;
  minBaseAmount: string;
  minQuoteTotal: string;
  maxQuoteTotal: string | null;
}): MarketRules {
  const [base, quote] = init.name.split('_') as [string, string];
  return {
    name: init.name,
    base,
    quote,
    basePrecision: init.basePrecision,
    quotePrecision: init.quotePrecision,
    feePrecision: init.feePrecision,
    makerFeePct: new Decimal('0.1'),
    takerFeePct: new Decimal('0.1'),
    minBaseAmount: new Decimal(init.minBaseAmount),
    minQuoteTotal: new Decimal(init.minQuoteTotal),
    maxQuoteTotal: init.maxQuoteTotal === null ? null : new Decimal(init.maxQuoteTotal),
    tradesEnabled: true,
    type: 'spot',
  };
}

export const DEMO_MARKETS: readonly MarketRules[] = [
  market({ name: 'BTC_USDT', basePrecision: 6, quotePrecision: 2, feePrecision: 8, minBaseAmount: '0.00001', minQuoteTotal: '5', maxQuoteTotal: null }),
  market({ name: 'ETH_USDT', basePrecision: 4, quotePrecision: 2, feePrecision: 8, minBaseAmount: '0.001', minQuoteTotal: '5', maxQuoteTotal: '1000000' }),
];

/** Codes look like WhiteBIT's ("WB" + hex groups + ticker); they are made up and redeem nothing. */
const DEMO_CODES = [
  { code: 'WB7C41E09A-2F6B-4D83-9A1E-55C0B7D3E812USDT', amount: '25', ticker: 'USDT', status: 'Activated', dateSec: 1_760_000_000, externalId: 'c0a8e1f2-3b4c-4d5e-8f60-718293a4b5c6' },
  { code: 'WB0D93F2B4-8C1A-47E5-B6D2-3A9F0E4C7B21USDT', amount: '100', ticker: 'USDT', status: 'New', dateSec: 1_760_086_400, externalId: 'd1b9f2a3-4c5d-4e6f-9071-8293a4b5c6d7' },
  { code: 'WB5A26C8E1-F34D-4B90-8E7A-1D6C2B5F9A03BTC', amount: '0.001', ticker: 'BTC', status: 'Activated', dateSec: 1_760_172_800, externalId: 'e2caf3b4-5d6e-4f70-a182-93a4b5c6d7e8' },
  { code: 'WBE8B17D36-0A5C-4F2E-9D41-7B3E8C0A6F54ETH', amount: '0.05', ticker: 'ETH', status: 'New', dateSec: 1_760_259_200, externalId: 'f3db04c5-6e7f-4081-b293-a4b5c6d7e8f9' },
  { code: 'WB2F6D9B70-C8E3-4A15-8F6B-0E2D7A9C1B48USDT', amount: '10.5', ticker: 'USDT', status: 'Activated', dateSec: 1_760_345_600, externalId: '04ec15d6-7f80-4192-83a4-b5c6d7e8f901' },
] as const;

/**
 * The demo account: some main balance, a little on spot, two markets, a USDT flex plan with an
 * active 1500 USDT investment and a second plan with none, and five codes.
 */
export function seedDemo(sim: SimCore): void {
  for (const rules of DEMO_MARKETS) sim.addMarket(rules);
  sim.seedMain('USDT', new Decimal('10000'));
  sim.seedMain('BTC', new Decimal('0.05'));
  sim.seedMain('ETH', new Decimal('1.2'));
  sim.seedSpot('USDT', new Decimal('1000'));
  sim.addFlexPlan({
    planId: DEMO_FLEX_PLAN_ID,
    ticker: 'USDT',
    minInvestment: new Decimal('10'),
    maxInvestment: new Decimal('100000'),
    maxRatePct: new Decimal('8.5'),
  });
  sim.addFlexPlan({
    planId: DEMO_EMPTY_FLEX_PLAN_ID,
    ticker: 'USDT',
    minInvestment: new Decimal('100'),
    maxInvestment: new Decimal('50000'),
    maxRatePct: new Decimal('6'),
  });
  sim.seedFlexInvestment(DEMO_FLEX_PLAN_ID, new Decimal('1500'));
  for (const c of DEMO_CODES) {
    sim.addCode({ code: c.code, amount: new Decimal(c.amount), ticker: c.ticker, status: c.status, dateSec: c.dateSec, externalId: c.externalId });
  }
}
