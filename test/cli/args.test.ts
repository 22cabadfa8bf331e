import { describe, expect, it } from 'vitest';
import { CODE_LIMIT, checkAll, clientOrderId, integerIn, marketName, planId, positiveAmount, stpMode, tickerName } from '../../src/cli/args.ts';
import { fields, json, table, toPlain } from '../../src/cli/output.ts';
import { InputError } from '../../src/domain/errors.ts';
import { Decimal, formatDecimal } from '../../src/domain/money.ts';

function messageOf(check: () => unknown): string {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return (error as InputError).message;
  }
  throw new Error('expected an InputError');
}

describe('flag checks', () => {
  it('accepts a plain positive decimal amount and keeps it exact', () => {
    expect(formatDecimal(positiveAmount('0.00050000', '--amount'))).toBe('0.0005');
  });

  it('refuses an amount in exponent notation, naming the flag and the value', () => {
    expect(messageOf(() => positiveAmount('1e-3', '--amount'))).toBe('--amount: must be a plain decimal number such as 0.0005 (got "1e-3")');
  });

  it('refuses zero and negative amounts', () => {
    expect(messageOf(() => positiveAmount('0', '--amount'))).toBe('--amount: must be greater than 0 (got "0")');
    expect(messageOf(() => positiveAmount('-1', '--amount'))).toBe('--amount: must be greater than 0 (got "-1")');
  });

  it('accepts code list limits 1 to 100 only, as whole numbers', () => {
    expect(integerIn('100', '--limit', CODE_LIMIT)).toBe(100);
    for (const bad of ['0', '101', '1.5', '-1', '', ' 5', '0x10']) {
      expect(messageOf(() => integerIn(bad, '--limit', CODE_LIMIT))).toBe(`--limit: must be a whole number from 1 to 100 (got ${JSON.stringify(bad)})`);
    }
  });

  it('normalises market and ticker names to upper case and refuses other shapes', () => {
    expect(marketName('btc_usdt')).toBe('BTC_USDT');
    expect(tickerName('usdt')).toBe('USDT');
    expect(messageOf(() => marketName('BTCUSDT'))).toBe('--market: must be a market such as BTC_USDT (BASE_QUOTE) (got "BTCUSDT")');
    expect(messageOf(() => tickerName('B TC'))).toMatch(/^--ticker: /);
  });

  it('accepts client order ids of letters, digits, dashes, dots and underscores up to 64 characters', () => {
    expect(clientOrderId('dca.btc-2024_01')).toBe('dca.btc-2024_01');
    expect(messageOf(() => clientOrderId('a'.repeat(65)))).toMatch(/^--client-order-id: must be 1 to 64 characters/);
    expect(messageOf(() => clientOrderId('no/slash'))).toMatch(/\(got "no\/slash"\)$/);
  });

  it('accepts the short stp forms and reads the long ones as short', () => {
    expect(stpMode('cn')).toBe('cn');
    expect(stpMode('cancel_new')).toBe('cn');
    expect(messageOf(() => stpMode('cancel'))).toBe('--stp: must be no, cb (cancel both), cn (cancel new) or co (cancel old); the long forms cancel_both, cancel_new and cancel_old are read too (got "cancel")');
  });

  it('refuses an empty plan id', () => {
    expect(messageOf(() => planId(''))).toMatch(/^--plan: must be a plan id/);
  });

  it('reports every bad flag at once', () => {
    let error: unknown;
    try {
      checkAll({ amount: () => positiveAmount('1e-3', '--amount'), stp: () => stpMode('x'), market: () => marketName('BTC_USDT') });
    } catch (e) {
      error = e;
    }
    expect((error as InputError).problems.map((p) => p.field)).toEqual(['--amount', '--stp']);
  });
});

describe('output', () => {
  it('aligns columns without touching the digits of a decimal', () => {
    const text = table(
      [{ header: 'TICKER' }, { header: 'AMOUNT', align: 'right' }],
      [
        ['BTC', '0.00000001'],
        ['USDT', '123456789.5'],
      ],
    );
    expect(text).toBe('TICKER       AMOUNT\nBTC      0.00000001\nUSDT    123456789.5\n');
  });

  it('prints label/value lines for one record', () => {
    expect(fields([['market', 'BTC_USDT'], ['last price', '65000']])).toBe('market:      BTC_USDT\nlast price:  65000\n');
  });

  it('turns every Decimal into its exact string and Maps into objects', () => {
    const value = { amount: new Decimal('0.10000000000000000001'), balances: new Map([['BTC', new Decimal('1e-8')]]), skipped: undefined };
    expect(toPlain(value)).toEqual({ amount: '0.10000000000000000001', balances: { BTC: '0.00000001' } });
    expect(JSON.parse(json([new Decimal('-0')]))).toEqual(['0']);
  });
});
