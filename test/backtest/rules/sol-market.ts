import type { MarketRules } from '../../../src/domain/market.ts';
import { Decimal } from '../../../src/domain/money.ts';

/**
 * A market stacker has no demo rules for, with rules unlike the demo markets' in every field
 * that changes a fill: 0.2 % taker fee rounded up to 4 decimals, amounts to 2 decimals.
 */
export const SOL: MarketRules = {
  name: 'SOL_USDT',
  base: 'SOL',
  quote: 'USDT',
  basePrecision: 2,
  quotePrecision: 3,
  feePrecision: 4,
  makerFeePct: new Decimal('0.15'),
  takerFeePct: new Decimal('0.2'),
  minBaseAmount: new Decimal('0.01'),
  minQuoteTotal: new Decimal('5'),
  maxQuoteTotal: null,
  tradesEnabled: true,
  type: 'spot',
};
