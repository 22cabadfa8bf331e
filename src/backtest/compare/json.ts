import type { RunResult } from './job.ts';

export const COMPARISON_SCHEMA = 'stacker.backtest-comparison/1';

/**
 * The JSON of several backtests: `runs[]` in the order they were asked, each with its label, the
 * keys it set (`overrides`, a sweep's values) and its whole report (SCHEMA.md). Deterministic
 * bytes, as the single report.
 */
export function comparisonToJson(results: readonly RunResult[]): string {
  return `${JSON.stringify({ schema: COMPARISON_SCHEMA, runs: results.map((r) => ({ label: r.label, overrides: r.overrides, report: r.report })) }, null, 2)}\n`;
}
