import { ORDER_SETTLE_WINDOW } from '../engine/runtime.ts';
import { parseDuration } from '../engine/schedule/catch-up.ts';

/**
 * ORDER_SETTLE_WINDOW (per instance) and STACKER_ORDER_SETTLE_WINDOW (every instance's default):
 * how long an order whose answer was lost is looked for before it is called not-found. Either
 * milliseconds, or the rule the text broke.
 */
export function readSettleWindow(text: string): { readonly ms: number } | { readonly rule: string } {
  const ms = parseDuration(text);
  const floor = ORDER_SETTLE_WINDOW.floorMs / 1000;
  const ceiling = ORDER_SETTLE_WINDOW.ceilingMs / 3_600_000;
  if (ms === null || ms < ORDER_SETTLE_WINDOW.floorMs || ms > ORDER_SETTLE_WINDOW.ceilingMs) {
    return {
      rule:
        `must be a duration from ${floor}s to ${ceiling}h, such as 10m (got ${JSON.stringify(text)}); ` +
        `the exchange's order history can show an order seconds late, so a shorter window could call a placed order not-found`,
    };
  }
  return { ms };
}
