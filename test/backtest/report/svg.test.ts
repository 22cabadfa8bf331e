import { describe, expect, it } from 'vitest';
import { Decimal, formatDecimal } from '../../../src/domain/money.ts';
import { linearScale, pathData, px, thin, timeAxis, valueAxis } from '../../../src/backtest/report/svg.ts';

const d = (text: string): Decimal => new Decimal(text);
const labels = (ticks: Decimal[]): string[] => ticks.map(formatDecimal);

describe('report chart primitives', () => {
  it('picks value ticks 1, 2 or 5 × 10^k apart and widens the axis to whole ticks', () => {
    // range 45 (+4 % either side) / 5 ticks ≈ 9.7 → step 10; 80 itself is not on the bottom edge
    expect(labels(valueAxis(d('80'), d('125')).ticks)).toEqual(['70', '80', '90', '100', '110', '120', '130']);
    // range 0.00007 (+4 % either side) / 5 ≈ 0.000015 → step 0.00002; labels are exact decimals, no float noise
    const small = valueAxis(d('0.00012'), d('0.00019'));
    expect(labels(small.ticks)).toEqual(['0.0001', '0.00012', '0.00014', '0.00016', '0.00018', '0.0002']);
    expect(formatDecimal(small.min)).toBe('0.0001');
    expect(formatDecimal(small.max)).toBe('0.0002');
  });

  it('leaves room above and below the values: one at the top or bottom is not drawn on the frame', () => {
    // Every buy of a journal at one price and the average cost a little above it: the buys sat on the bottom edge.
    const axis = valueAxis(d('65000'), d('65065'));
    expect(axis.min.lt(d('65000'))).toBe(true);
    expect(axis.max.gt(d('65065'))).toBe(true);
  });

  it('gives a flat series an axis around its value', () => {
    // 100 ± 100 → 0..200 in steps of 50
    expect(labels(valueAxis(d('100'), d('100')).ticks)).toEqual(['0', '50', '100', '150', '200']);
    expect(labels(valueAxis(d('0'), d('0')).ticks)).toEqual(['-1', '-0.5', '0', '0.5', '1']);
  });

  it('puts time ticks on round UTC instants: every 12 hours over 3 days, every 2 years over 7', () => {
    const t0 = Date.UTC(2024, 0, 1);
    const days = timeAxis(t0, t0 + 3 * 86_400_000);
    expect(days.ticks.map((t) => new Date(t).toISOString().slice(0, 13))).toEqual([
      '2024-01-01T00', '2024-01-01T12', '2024-01-02T00', '2024-01-02T12', '2024-01-03T00', '2024-01-03T12', '2024-01-04T00',
    ]);
    expect(days.label(t0 + 12 * 3_600_000)).toBe('2024-01-01 12:00Z');
    const years = timeAxis(Date.UTC(2017, 7, 17, 4), Date.UTC(2024, 3, 21, 14));
    expect(years.ticks.map(years.label)).toEqual(['2018', '2020', '2022', '2024']);
    const hours = timeAxis(t0, t0 + 6 * 3_600_000);
    expect(hours.ticks.map(hours.label)).toEqual(['00:00', '01:00', '02:00', '03:00', '04:00', '05:00', '06:00']);
  });

  it('thins a long series but keeps its ends, its lowest and its highest point', () => {
    const points = Array.from({ length: 10_000 }, (_, i) => [i, Math.sin(i / 50) * 100 + (i === 4321 ? 500 : 0) - (i === 777 ? 900 : 0)] as const);
    const kept = thin(points, 400);
    expect(kept.length).toBeLessThanOrEqual(400);
    expect(kept[0]).toEqual(points[0]);
    expect(kept.at(-1)).toEqual(points.at(-1));
    expect(kept).toContainEqual(points[4321]);
    expect(kept).toContainEqual(points[777]);
    expect(kept.map((p) => p[0])).toEqual([...kept.map((p) => p[0])].sort((a, b) => a - b));
    expect(thin(points.slice(0, 10), 400)).toEqual(points.slice(0, 10));
  });

  it('writes line and step paths with one-decimal coordinates', () => {
    const points = [[0, 10], [5.55, 20], [10, 15]] as const;
    expect(pathData(points)).toBe('M0 10L5.6 20L10 15');
    expect(pathData(points, true)).toBe('M0 10H5.6V20H10V15');
    expect(px(-0.01)).toBe('0');
  });

  it('maps a domain onto pixels, upside down for the y axis', () => {
    const y = linearScale(80, 130, 256, 30);
    expect(y(80)).toBe(256);
    expect(y(130)).toBeCloseTo(30, 9);
    expect(linearScale(5, 5, 0, 100)(5)).toBe(50);
  });
});
