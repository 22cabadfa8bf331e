import { describe, expect, it } from 'vitest';
import type { RequestEvent } from '../../src/api/requester.ts';
import { logNonceRefusals } from '../../src/daemon/nonce-refusal-log.ts';

const attempt = (extra: Partial<RequestEvent & { account: string }>): RequestEvent & { account: string } => ({
  method: 'POST',
  path: '/api/v4/order/stock_market',
  scope: 'trade',
  attempt: 1,
  status: 429,
  durationMs: 3,
  errorCode: 'E_NONCE',
  account: 'kids',
  ...extra,
});

describe('the nonce refusal log', () => {
  it('writes a line a minute at most per account and kind, each counting the refusals since the last, and nothing for other requests', () => {
    let nowMs = 0;
    const lines: Array<{ fields: Record<string, unknown>; msg: string }> = [];
    const log = logNonceRefusals({ warn: ((fields: Record<string, unknown>, msg: string) => lines.push({ fields, msg })) as never }, () => nowMs);
    log(attempt({ nonceRefusal: 'reused' }));
    log(attempt({ status: 200, errorCode: null }));
    log(attempt({ errorCode: 'E_RATE_LIMIT' }));
    nowMs = 30_000;
    log(attempt({ nonceRefusal: 'reused' }));
    nowMs = 60_000;
    log(attempt({ nonceRefusal: 'window', path: '/api/v4/trade-account/balance' }));
    expect(lines.map(({ fields }) => [fields['refusal'], fields['count'], fields['account']])).toEqual([
      ['reused', 1, 'kids'],
      ['window', 1, 'kids'],
    ]);
    // Each kind and account throttled apart: a clock's refusals are never told as another client's.
    nowMs = 70_000;
    log(attempt({ nonceRefusal: 'reused' }));
    log(attempt({ nonceRefusal: 'window', account: 'main' }));
    log(attempt({ nonceRefusal: 'window' }));
    expect(lines.slice(2).map(({ fields }) => [fields['refusal'], fields['count'], fields['account']])).toEqual([
      ['reused', 2, 'kids'],
      ['window', 1, 'main'],
    ]);
    expect(lines[0]?.msg).toBe(
      'the exchange refused POST /api/v4/order/stock_market for its nonce: its nonce was one the exchange had seen: another client may be using this API key; ' +
        'stacker signs a read afresh and sends it again; a write only when the clocks explain the refusal (an order after looking it up), ' +
        'and otherwise takes it for a lost answer, since a throttle or a gateway may answer so after the write was done; a refusal that persists fails the slot with its own error',
    );
    expect(lines[1]?.msg).toMatch(/^the exchange refused POST \/api\/v4\/trade-account\/balance for its nonce: .* this machine's clock and the exchange's disagree; .* with its own error$/);
    expect(lines[2]?.msg).toMatch(/another client may be using this API key; .* \(2 such refusals since the last line\)$/);
  });
});
