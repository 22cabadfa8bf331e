import { compareFactPlaces, type FactPlace } from '../../src/backtest/report/facts.ts';
import type { ReportOrder, ReportRefusal } from '../../src/backtest/report/run.ts';
import type { RunObserver } from '../../src/backtest/driver.ts';

/**
 * Every order and refusal of a backtest, in the journal's order: the run keeps only its fold,
 * so a test that checks each order watches them go by.
 */
export function watchRun(): { observer: RunObserver; orders(): ReportOrder[]; refusals(): ReportRefusal[] } {
  const orders: Array<{ fact: ReportOrder; place: FactPlace }> = [];
  const refusals: Array<{ fact: ReportRefusal; place: FactPlace }> = [];
  const ordered = <T>(list: Array<{ fact: T; place: FactPlace }>): T[] => [...list].sort((a, b) => compareFactPlaces(a.place, b.place)).map((entry) => entry.fact);
  return {
    observer: {
      order: (fact, place) => orders.push({ fact, place }),
      refusal: (fact, place) => refusals.push({ fact, place }),
    },
    orders: () => ordered(orders),
    refusals: () => ordered(refusals),
  };
}
