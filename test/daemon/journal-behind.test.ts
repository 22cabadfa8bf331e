import { describe, expect, it } from 'vitest';
import { JournalBehind } from '../../src/daemon/journal-behind.ts';
import type { LedgerReport } from '../../src/engine/exchange-ledger.ts';
import type { BehindMark } from '../../src/store/opened-store.ts';
import { order } from '../store/helpers.ts';

const WINDOW_MS = 600_000;
const START_MS = Date.UTC(2026, 10, 28, 9, 0, 0);

/** The start's first history read, adopting orders placed `agoMs` before the start. */
function adopting(...agoMs: number[]): LedgerReport {
  return {
    fromMs: START_MS - 3_600_000,
    toMs: START_MS,
    accounts: ['default'],
    unreadable: [],
    ours: agoMs.length,
    adopted: agoMs.map((ago, i) => order({ orderId: String(100 + i), createdAtSec: (START_MS - ago) / 1000, status: 'FILLED' })),
    linked: [],
    cleared: [],
  };
}

function world(behind: BehindMark | null = null): { readonly held: JournalBehind; readonly lines: Array<{ level: string; fields: Record<string, unknown>; message: string }>; readonly noted: BehindMark[] } {
  const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const noted: BehindMark[] = [];
  const logger = {
    warn: (fields: Record<string, unknown>, message: string) => void lines.push({ level: 'warn', fields, message }),
    info: (fields: Record<string, unknown>, message: string) => void lines.push({ level: 'info', fields, message }),
  };
  const store = { behind, noteBehind: (mark: BehindMark) => void noted.push(mark) };
  return { held: new JournalBehind(store, WINDOW_MS, START_MS, logger as never), lines, noted };
}

const events = (lines: ReadonlyArray<{ fields: Record<string, unknown> }>): unknown[] => lines.map((line) => line.fields['event']);

describe('a journal found behind at start', () => {
  it('holds every buy, a new journal whose first read adopts an order of moments ago, for the settle window, and notes it beside the journal', () => {
    const { held, lines, noted } = world();
    held.firstHistoryRead(true, adopting(4_000), START_MS);
    expect(events(lines)).toEqual(['journal-lost-found-by-history', 'budgets-held']);
    expect(held.budgetHold(START_MS + 1_000)).toMatchObject({ everyBuy: true, untilMs: START_MS + WINDOW_MS });
    expect(noted).toEqual([expect.objectContaining({ sinceMs: START_MS, everyBuy: true })]);
  });

  it('holds only budgeted buys when what a new journal adopts is older than the settle window', () => {
    const { held } = world();
    held.firstHistoryRead(true, adopting(2 * WINDOW_MS), START_MS);
    expect(held.budgetHold(START_MS + 1_000)).toMatchObject({ everyBuy: false });
  });

  it('holds every buy when a journal that is not new lacks orders of moments ago (a copy), and not when what it lacked is old', () => {
    const recent = world();
    recent.held.firstHistoryRead(false, adopting(4_000, 60_000), START_MS);
    expect(events(recent.lines)).toEqual(['journal-lacks-recent-orders', 'budgets-held']);
    expect(recent.lines[0]?.message).toMatch(/holds 2 order\(s\) of its instances that the journal lacked \(adopted\), the newest placed 4 s before this start/);
    expect(recent.held.budgetHold(START_MS)).toMatchObject({ everyBuy: true });

    const old = world();
    old.held.firstHistoryRead(false, adopting(2 * WINDOW_MS), START_MS);
    expect(old.lines).toEqual([]);
    expect(old.held.budgetHold(START_MS)).toBeNull();
  });

  it('turns an older copy’s hold on budgeted buys into one on every buy when the history shows what it lacks is of moments ago', () => {
    const { held, lines } = world({ sinceMs: START_MS, reason: 'an older copy of the journal' });
    expect(held.budgetHold(START_MS)).toMatchObject({ everyBuy: false });
    held.firstHistoryRead(false, adopting(3_000), START_MS);
    expect(events(lines)).toEqual(['budgets-held', 'journal-lacks-recent-orders', 'budgets-held']);
    expect(held.budgetHold(START_MS)).toMatchObject({ everyBuy: true });
  });

  it('says once, at the first buy after the window, that buys are sent again', () => {
    const { held, lines } = world();
    held.firstHistoryRead(true, adopting(4_000), START_MS);
    expect(held.budgetHold(START_MS + WINDOW_MS - 1)).not.toBeNull();
    expect(held.budgetHold(START_MS + WINDOW_MS)).toBeNull();
    expect(held.budgetHold(START_MS + WINDOW_MS + 1)).toBeNull();
    const ended = lines.filter((line) => line.fields['event'] === 'hold-ended');
    expect(ended).toHaveLength(1);
    expect(ended[0]?.message).toMatch(/: buys are sent again$/);
  });
});
