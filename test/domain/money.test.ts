import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Decimal, DecimalFormatError, formatDecimal, isAboveZero, parseDecimalStrict, parseWireDecimal, ownDecimal, roughNumber, roundDown } from '../../src/domain/money.ts';

describe('money', () => {
  it('parses user decimals strictly and names the field on refusal', () => {
    expect(formatDecimal(parseDecimalStrict('0.0005', 'AMOUNT'))).toBe('0.0005');
    for (const bad of ['1e-3', ' 1', '01', '.5', '1.', '+1', 'NaN', '', '1,5']) {
      expect(() => parseDecimalStrict(bad, 'AMOUNT')).toThrow(DecimalFormatError);
      expect(() => parseDecimalStrict(bad, 'AMOUNT')).toThrow(/^AMOUNT: /);
    }
  });

  it('reads wire decimals as text and refuses floats on a money field', () => {
    expect(formatDecimal(parseWireDecimal('12.', 'amount'))).toBe('12');
    expect(formatDecimal(parseWireDecimal(5, 'amount'))).toBe('5');
    // The exchange's exponent notation, exactly; an exponent of more than two digits is no money.
    expect(formatDecimal(parseWireDecimal('1.0E-8', 'amount'))).toBe('0.00000001');
    expect(formatDecimal(parseWireDecimal('6.5e-2', 'amount'))).toBe('0.065');
    expect(() => parseWireDecimal('1e999', 'amount')).toThrow(/amount: expected a decimal string/);
    expect(() => parseWireDecimal(0.1, 'amount')).toThrow(/amount: .*non-integer number/);
    expect(() => parseWireDecimal(null, 'amount')).toThrow(/amount/);
  });

  it('formats in plain notation for tiny and huge values', () => {
    expect(formatDecimal(new Decimal('0.00000000000000000001'))).toBe('0.00000000000000000001');
    expect(formatDecimal(new Decimal('123456789012345678901234567890'))).toBe('123456789012345678901234567890');
    expect(formatDecimal(new Decimal('-0'))).toBe('0');
    expect(formatDecimal(new Decimal('1.2300'))).toBe('1.23');
  });

  it('round-trips any decimal text through parse and format', () => {
    const decimalText = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 30 }))
      .map(([digits, scale]) => {
        const s = digits.toString().padStart(scale + 1, '0');
        return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`;
      });
    fc.assert(
      fc.property(decimalText, (text) => {
        const canonical = formatDecimal(parseWireDecimal(text, 'x'));
        expect(new Decimal(canonical).eq(new Decimal(text))).toBe(true);
        expect(formatDecimal(parseDecimalStrict(canonical, 'x'))).toBe(canonical);
      }),
    );
  });

  it('tells a value above zero from its sign alone, as a comparison with 0 would', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 0, max: 12 }), (units, places) => {
        const value = new Decimal(units).div(new Decimal(10).pow(places));
        expect(isAboveZero(value)).toBe(value.gt(0));
      }),
    );
    expect(isAboveZero(new Decimal('-0'))).toBe(false);
    expect(isAboveZero(new Decimal(NaN))).toBe(false);
    expect(isAboveZero(new Decimal(Infinity))).toBe(true);
  });

  it('rounds down, never up, to a precision', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 12 }), (n, places) => {
        const value = new Decimal(n.toString()).div(new Decimal(10).pow(14));
        const cut = roundDown(value, places);
        expect(cut.lte(value)).toBe(true);
        expect(value.minus(cut).lt(new Decimal(10).pow(-places))).toBe(true);
        expect(cut.decimalPlaces()).toBeLessThanOrEqual(places);
      }),
    );
  });
});

describe('roughNumber: a Decimal as a float for ranking, read from its digits', () => {
  it('is within a few parts in 10^16 of the correctly rounded float, for any size and sign', () => {
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^[1-9]\d{0,29}$/), fc.integer({ min: -40, max: 40 }))
      .map(([negative, digits, shift]) => new Decimal(`${negative ? '-' : ''}${digits}e${shift}`));
    fc.assert(
      fc.property(decimal, (x) => {
        const exact = x.toNumber();
        expect(Math.abs(roughNumber(x) - exact)).toBeLessThanOrEqual(Math.abs(exact) * 4e-16);
      }),
      { numRuns: 2000 },
    );
  });

  it('holds that bound for every word layout: a first word of one or two digits followed by many more', () => {
    // decimal.js keeps digits in words of seven, the first holding one to seven of them: with a short
    // first word, three words are only 15 or 16 digits, fewer than a float's 17.
    for (const text of ['9999999999999999999999.99999999999999999999999999999999999999', '1.0000000000000099', '-12.345678901234567890123', '0.0000000000000000000010000000000000099']) {
      const x = new Decimal(text);
      expect(Math.abs(roughNumber(x) - x.toNumber()), text).toBeLessThanOrEqual(Math.abs(x.toNumber()) * 4e-16);
    }
    const long = fc
      .tuple(fc.boolean(), fc.stringMatching(/^[1-9]\d{15,39}$/), fc.integer({ min: -40, max: 40 }))
      .map(([negative, digits, shift]) => new Decimal(`${negative ? '-' : ''}${digits}e${shift}`));
    fc.assert(
      fc.property(long, (x) => {
        expect(Math.abs(roughNumber(x) - x.toNumber())).toBeLessThanOrEqual(Math.abs(x.toNumber()) * 4e-16);
      }),
      { numRuns: 5000 },
    );
  });

  it('reads zero, prices and amounts as they are written, and NaN and infinities as toNumber does', () => {
    expect(roughNumber(new Decimal(0))).toBe(0);
    expect(roughNumber(new Decimal('123.45'))).toBe(123.45);
    expect(roughNumber(new Decimal('0.001'))).toBe(0.001);
    expect(roughNumber(new Decimal('-105554.32'))).toBe(-105554.32);
    expect(roughNumber(new Decimal(NaN))).toBeNaN();
    expect(roughNumber(new Decimal(-Infinity))).toBe(-Infinity);
  });
});


describe("ownDecimal: a value in the program's own Decimal, whatever made it", () => {
  it('copies every value decimal.js makes as it is, into a fresh program Decimal', () => {
    fc.assert(
      fc.property(fc.integer({ min: -12, max: 12 }), fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (shift, digits) => {
        const made = new Decimal(digits.toString()).mul(new Decimal(10).pow(shift));
        const own = ownDecimal(made);
        expect(own).not.toBe(made);
        expect(own.constructor).toBe(Decimal);
        expect(own.toString()).toBe(made.toString());
        expect(own.eq(made)).toBe(true);
      }),
    );
  });

  it('reads the text of a value whose digit words are not in order, so its text and its arithmetic agree', () => {
    // Words that make 0.0046 "say" one value and compute another; its text is what it says.
    const lookalike = { toStringTag: '[object Decimal]', s: 1, e: -3, d: [46], toString: () => '0.0046' } as unknown as Decimal;
    const own = ownDecimal(lookalike);
    expect([own.toString(), own.mul(1000).toString()]).toEqual(['0.0046', '4.6']);
    expect(() => ownDecimal({ toStringTag: '[object Decimal]', s: 1, e: -2, d: [1000] } as unknown as Decimal)).toThrow();
  });
});
