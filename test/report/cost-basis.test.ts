import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';
import { feesNote, fillsCsv, positions, runningSums, sumFills } from '../../src/report/cost-basis.ts';
import { order } from '../store/helpers.ts';

const text = (sums: ReturnType<typeof sumFills>) => ({
  bought: formatDecimal(sums.bought),
  spent: formatDecimal(sums.spent),
  fees: Object.fromEntries([...sums.fees].map(([asset, fee]) => [asset, formatDecimal(fee)])),
  cost: formatDecimal(sums.cost),
  held: formatDecimal(sums.held),
  averageCost: sums.averageCost === null ? null : formatDecimal(sums.averageCost),
});

describe('the sums of a market\'s fills', () => {
  it('over every order are what the running sums reach at the last one, fees in either asset', () => {
    const fill = fc.record({
      base: fc.integer({ min: 0, max: 10 ** 8 }),
      quote: fc.integer({ min: 0, max: 10 ** 10 }),
      fee: fc.integer({ min: 0, max: 10 ** 6 }),
      feeInBase: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(fill, { maxLength: 30 }), (fills) => {
        const orders = fills.map((f, i) =>
          order({ orderId: String(i), filledBase: new Decimal(f.base).div(1e8), filledQuote: new Decimal(f.quote).div(1e4), fee: new Decimal(f.fee).div(1e8), feeAsset: f.feeInBase ? 'BTC' : 'USDT' }),
        );
        const running = runningSums('BTC_USDT', orders).at(-1);
        const total = sumFills('BTC_USDT', orders);
        if (running === undefined) expect(text(total)).toEqual({ bought: '0', spent: '0', fees: {}, cost: '0', held: '0', averageCost: null });
        else expect(text(total)).toEqual(text(running));
      }),
    );
  });
});

describe('what a report says of the fees', () => {
  it('says a fee paid in an asset of no market of the position is listed, not counted in the average cost', () => {
    const stored = (o: Parameters<typeof order>[0]) => ({ ...order(o), intentId: null, firstSeenAtMs: 0, updatedAtMs: 0 });
    const inQuote = stored({ orderId: '1', filledBase: new Decimal('0.001'), filledQuote: new Decimal('65'), fee: new Decimal('0.065'), feeAsset: 'USDT' });
    const inWbt = stored({ orderId: '2', filledBase: new Decimal('0.001'), filledQuote: new Decimal('65'), fee: new Decimal('0.5'), feeAsset: 'WBT' });
    expect(feesNote(positions([inQuote], null))).toBe('average cost counts the fees');
    const both = positions([inQuote, inWbt], null);
    // 130.065 / 0.002: the WBT fee is not in it.
    expect(both[0]?.averageCost).toBe('65032.5');
    expect(feesNote(both)).toBe("average cost counts the fees paid in each market's own assets; those paid in WBT are listed, not counted (no price to count them at)");
  });
});

describe('the fills CSV', () => {
  it('makes a text cell that a spreadsheet would read as a formula plain text, and leaves the numbers as they are', () => {
    const csv = fillsCsv([{ ...order({ orderId: '7', clientOrderId: '-2+cmd', filledBase: new Decimal('0.001'), filledQuote: new Decimal('65'), fee: new Decimal('0.065'), feeAsset: 'USDT' }), intentId: null, firstSeenAtMs: 0, updatedAtMs: 0 }]);
    const [header, row] = csv.trimEnd().split('\n');
    expect(header).toBe('time,market,side,base,quote,price,fee,fee_asset,order_id,client_order_id');
    expect(row?.split(',').slice(3)).toEqual(['0.001', '65', '65000', '0.065', 'USDT', '7', "'-2+cmd"]);
  });
});
