import { describe, expect, it } from 'vitest';
import { askLevels, bidLevels, fillModel, planBuyByBase, planBuyByQuote, slicePlan } from '../../src/sim/fills.ts';
import { DEMO_MARKETS } from '../../src/sim/seed.ts';
import { d, text } from './helpers.ts';

const BTC = DEMO_MARKETS[0]!;
const ETH = DEMO_MARKETS[1]!;

describe('fill plans', () => {
  it('fills a whole base quantity at the price when the book is unlimited', () => {
    const plan = planBuyByBase(BTC, fillModel(), d('65000'), d('0.001'));
    expect(plan.levels.map((l) => [text(l.price), text(l.base), text(l.quote)])).toEqual([['65000', '0.001', '65']]);
    expect(text(plan.fee)).toBe('0.065');
    expect(plan.stoppedByBand).toBe(false);
  });

  it('rounds the fee up to the fee precision', () => {
    // 0.0123 ETH × 3150.42 = 38.750166; 0.1 % = 0.038750166 → 0.03875017 at 8 decimals.
    const plan = planBuyByBase(ETH, fillModel(), d('3150.42'), d('0.0123'));
    expect(text(plan.quote)).toBe('38.750166');
    expect(text(plan.fee)).toBe('0.03875017');
  });

  it('walks a synthetic book level by level', () => {
    const model = fillModel({ bookStepPct: '0.1', bookLevelBase: '0.01' });
    expect(askLevels(BTC, model, d('65000'), 3).map((l) => text(l.price))).toEqual(['65000', '65065', '65130']);
    expect(bidLevels(BTC, model, d('65000'), 2).map((l) => text(l.price))).toEqual(['65000', '64935']);
    const plan = planBuyByBase(BTC, model, d('65000'), d('0.025'));
    expect(plan.levels.map((l) => [text(l.price), text(l.base), text(l.quote)])).toEqual([
      ['65000', '0.01', '650'],
      ['65065', '0.01', '650.65'],
      ['65130', '0.005', '325.65'],
    ]);
    expect(text(plan.quote)).toBe('1626.3');
    expect(text(plan.fee)).toBe('1.6263');
  });

  it('applies slippage to every level and rounds prices up to the price precision', () => {
    const plan = planBuyByBase(ETH, fillModel({ slippagePct: '0.5' }), d('3150.42'), d('0.01'));
    // 3150.42 × 1.005 = 3166.1721 → 3166.18.
    expect(text(plan.levels[0]!.price)).toBe('3166.18');
    expect(text(plan.quote)).toBe('31.6618');
  });

  it('stops at the taker band and reports it', () => {
    const model = fillModel({ bookStepPct: '0.1', bookLevelBase: '0.01', takerBandPct: '0.15' });
    // Band limit 65097.5: levels 65000 and 65065 are inside, 65130 is not.
    const plan = planBuyByBase(BTC, model, d('65000'), d('0.025'));
    expect(text(plan.base)).toBe('0.02');
    expect(text(plan.quote)).toBe('1300.65');
    expect(plan.stoppedByBand).toBe(true);
  });

  it('spends a quote amount down to the base precision and leaves the dust', () => {
    // 100 / 3150.42 = 0.03174... → 0.0317 ETH = 99.868314 USDT.
    const plan = planBuyByQuote(ETH, fillModel(), d('3150.42'), d('100'));
    expect(text(plan.base)).toBe('0.0317');
    expect(text(plan.quote)).toBe('99.868314');
    expect(text(plan.fee)).toBe('0.09986832');
  });

  it('spends a quote amount across book levels', () => {
    const model = fillModel({ bookStepPct: '1', bookLevelBase: '0.01' });
    // Level 0: 0.01 @ 3150.42 = 31.5042; level 1: 3181.9242 → 3181.93, remaining 18.4958 buys 0.0058 = 18.455194.
    const plan = planBuyByQuote(ETH, model, d('3150.42'), d('50'));
    expect(plan.levels.map((l) => [text(l.price), text(l.base)])).toEqual([
      ['3150.42', '0.01'],
      ['3181.93', '0.0058'],
    ]);
    expect(text(plan.quote)).toBe('49.959394');
  });

  it('slices a plan at level boundaries', () => {
    const model = fillModel({ bookStepPct: '0.1', bookLevelBase: '0.01' });
    const plan = planBuyByBase(BTC, model, d('65000'), d('0.025'));
    const slice = slicePlan(plan, d('0.005'), d('0.015'));
    expect(slice.map((l) => [text(l.price), text(l.base), text(l.quote)])).toEqual([
      ['65000', '0.005', '325'],
      ['65065', '0.005', '325.325'],
    ]);
  });

  it('refuses an inconsistent model', () => {
    expect(() => fillModel({ bookStepPct: '0.1' })).toThrow(/go together/);
    expect(() => fillModel({ slippagePct: '-1' })).toThrow(/negative/);
  });
});

describe('fill plans over a book handed in (a paper account’s real asks)', () => {
  const book = [
    { price: d('65000'), base: d('0.002') },
    { price: d('65010.5'), base: d('0.003') },
    { price: d('65100'), base: d('1') },
  ];

  it('takes the given levels in order, at their own prices, without slippage', () => {
    const plan = planBuyByBase(BTC, fillModel({ slippagePct: '1' }), d('64000'), d('0.004'), book);
    expect(plan.levels.map((l) => [text(l.price), text(l.base), text(l.quote)])).toEqual([
      ['65000', '0.002', '130'],
      ['65010.5', '0.002', '130.021'],
    ]);
    expect([text(plan.quote), text(plan.fee), plan.stoppedByBand]).toEqual(['260.021', '0.260021', false]);
  });

  it('stops at the end of the given book like at the taker band', () => {
    const plan = planBuyByBase(BTC, fillModel(), d('65000'), d('2'), book);
    expect([text(plan.base), plan.stoppedByBand]).toEqual(['1.005', true]);
  });

  it('spends a quote amount across the given levels, leaving the dust', () => {
    const plan = planBuyByQuote(BTC, fillModel(), d('65000'), d('200'), book);
    // 0.002 × 65000 = 130; the 70 left buys 70 / 65010.5 = 0.00107674… → 0.001076 at 6 decimals.
    expect(plan.levels.map((l) => [text(l.price), text(l.base)])).toEqual([
      ['65000', '0.002'],
      ['65010.5', '0.001076'],
    ]);
  });

  it('cuts sizes to the base precision and rounds prices up to the price precision, dropping levels that round to nothing', () => {
    const plan = planBuyByBase(BTC, fillModel(), d('65000'), d('0.002'), [
      { price: d('64999.991'), base: d('0.0000004') },
      { price: d('65000.001'), base: d('0.0015009') },
      { price: d('65001'), base: null },
    ]);
    expect(plan.levels.map((l) => [text(l.price), text(l.base)])).toEqual([
      ['65000.01', '0.0015'],
      ['65001', '0.0005'],
    ]);
  });

  it('uses the synthetic book when the given one is empty', () => {
    const plan = planBuyByBase(BTC, fillModel({ slippagePct: '1' }), d('65000'), d('0.001'), []);
    expect(plan.levels.map((l) => text(l.price))).toEqual(['65650']);
  });
});
