import { describe, expect, it } from 'vitest';
import { Counter, DEFAULT_MAX_SERIES, Gauge, Histogram, MAX_LABEL_VALUE_LENGTH, OVERFLOW_LABEL_VALUE, Registry, escapeLabelValue, formatNumber } from '../../src/observability/exposition.ts';

describe('the Prometheus text exposition', () => {
  it('renders a counter with HELP, TYPE and one line per label set', () => {
    const counter = new Counter({ name: 'jobs_total', help: 'Jobs run.', labelNames: ['kind'] });
    counter.inc({ kind: 'a' });
    counter.inc({ kind: 'a' }, 2);
    counter.inc({ kind: 'b' });
    expect(counter.render()).toBe('# HELP jobs_total Jobs run.\n# TYPE jobs_total counter\njobs_total{kind="a"} 3\njobs_total{kind="b"} 1\n');
  });

  it('renders a metric without labels without braces', () => {
    const gauge = new Gauge({ name: 'temperature', help: 'Degrees.' });
    gauge.set({}, 21.5);
    expect(gauge.render()).toBe('# HELP temperature Degrees.\n# TYPE temperature gauge\ntemperature 21.5\n');
  });

  it('refuses to count a counter down', () => {
    const counter = new Counter({ name: 'x_total', help: 'x' });
    expect(() => counter.inc({}, -1)).toThrow(RangeError);
    expect(() => counter.inc({}, Number.NaN)).toThrow(RangeError);
  });

  it('renders histogram buckets cumulatively with +Inf, _sum and _count', () => {
    const histogram = new Histogram({ name: 'latency_seconds', help: 'Latency.', labelNames: ['path'], buckets: [0.1, 1] });
    histogram.observe({ path: '/a' }, 0.05);
    histogram.observe({ path: '/a' }, 0.1);
    histogram.observe({ path: '/a' }, 0.5);
    histogram.observe({ path: '/a' }, 3);
    expect(histogram.render().split('\n').slice(2)).toEqual([
      'latency_seconds_bucket{path="/a",le="0.1"} 2',
      'latency_seconds_bucket{path="/a",le="1"} 3',
      'latency_seconds_bucket{path="/a",le="+Inf"} 4',
      'latency_seconds_sum{path="/a"} 3.65',
      'latency_seconds_count{path="/a"} 4',
      '',
    ]);
  });

  it('ignores a non-finite observation instead of poisoning the sum', () => {
    const histogram = new Histogram({ name: 'h', help: 'h', buckets: [1] });
    histogram.observe({}, Number.NaN);
    histogram.observe({}, Infinity);
    expect(histogram.peek()).toBeUndefined();
  });

  it('rejects buckets that are not strictly increasing, and bad metric or label names', () => {
    expect(() => new Histogram({ name: 'h', help: 'h', buckets: [1, 1] })).toThrow(TypeError);
    expect(() => new Histogram({ name: 'h', help: 'h', buckets: [] })).toThrow(TypeError);
    expect(() => new Counter({ name: 'bad-name', help: 'x' })).toThrow(TypeError);
    expect(() => new Counter({ name: 'ok', help: 'x', labelNames: ['le'] })).toThrow(TypeError);
    expect(() => new Counter({ name: 'ok', help: 'x', labelNames: ['__reserved'] })).toThrow(TypeError);
  });

  it('escapes backslash, double quote and line feed in label values, and drops other control characters', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
    const counter = new Counter({ name: 'c_total', help: 'line one\nline two', labelNames: ['v'] });
    counter.inc({ v: 'say "hi"\r\t\n' });
    expect(counter.render()).toBe('# HELP c_total line one\\nline two\n# TYPE c_total counter\nc_total{v="say \\"hi\\"\\n"} 1\n');
  });

  it(`cuts label values longer than ${MAX_LABEL_VALUE_LENGTH} characters`, () => {
    const counter = new Counter({ name: 'c_total', help: 'c', labelNames: ['v'] });
    counter.inc({ v: 'x'.repeat(500) });
    expect(counter.peek({ v: 'x'.repeat(MAX_LABEL_VALUE_LENGTH) })).toBe(1);
  });

  it(`folds label sets past the series limit (default ${DEFAULT_MAX_SERIES}) into one ${OVERFLOW_LABEL_VALUE} series`, () => {
    const counter = new Counter({ name: 'c_total', help: 'c', labelNames: ['id'], maxSeries: 2 });
    counter.inc({ id: 'a' });
    counter.inc({ id: 'b' });
    counter.inc({ id: 'c' });
    counter.inc({ id: 'd' });
    counter.inc({ id: 'a' });
    expect(counter.peek({ id: 'a' })).toBe(2);
    expect(counter.peek({ id: OVERFLOW_LABEL_VALUE })).toBe(2);
    expect(counter.peek({ id: 'c' })).toBeUndefined();
  });

  it('formats special numbers the way Prometheus reads them', () => {
    expect([formatNumber(Infinity), formatNumber(-Infinity), formatNumber(Number.NaN), formatNumber(0.25), formatNumber(1e21)]).toEqual(['+Inf', '-Inf', 'NaN', '0.25', '1e+21']);
  });

  it('keeps a gauge set with setMax at its highest value', () => {
    const gauge = new Gauge({ name: 'g', help: 'g' });
    gauge.setMax({}, 5);
    gauge.setMax({}, 3);
    expect(gauge.peek()).toBe(5);
  });

  it('renders metrics in registration order and refuses a name registered twice', () => {
    const registry = new Registry();
    registry.register(new Gauge({ name: 'b', help: 'b' })).set({}, 1);
    registry.register(new Gauge({ name: 'a', help: 'a' })).set({}, 2);
    expect(registry.render()).toBe('# HELP b b\n# TYPE b gauge\nb 1\n# HELP a a\n# TYPE a gauge\na 2\n');
    expect(() => registry.register(new Gauge({ name: 'a', help: 'again' }))).toThrow(/registered twice/);
  });
});
