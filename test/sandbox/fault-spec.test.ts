import { describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_PATH, describeFaults, parseFaultSpecs } from '../../src/sandbox/fault-spec.ts';

describe('--fault specs', () => {
  it('reads each kind with its defaults: the order endpoint, every request, unlimited', () => {
    const parsed = parseFaultSpecs(['accept-then-5xx,times=2', '5xx=500,every=2,times=3', 'drop-answer,path=/api/v4/main-account/transfer', 'reset,times=1', 'slow=1.5s', 'commit-late=4,status=502', 'history-lag=500ms']);
    expect('ok' in parsed && parsed.ok).toEqual({
      historyLagMs: 500,
      historyPageCap: null,
      faults: [
        { path: DEFAULT_FAULT_PATH, times: 2, kind: 'status', status: 502, body: { message: 'stacker sandbox: injected fault' }, commit: true },
        { path: DEFAULT_FAULT_PATH, times: 3, every: 2, kind: 'status', status: 500, body: { message: 'stacker sandbox: injected fault' }, commit: false },
        { path: '/api/v4/main-account/transfer', times: Infinity, kind: 'drop-after-commit' },
        { path: DEFAULT_FAULT_PATH, times: 1, kind: 'reset' },
        { path: DEFAULT_FAULT_PATH, times: Infinity, kind: 'latency', latencyMs: 1500 },
        { path: DEFAULT_FAULT_PATH, times: Infinity, kind: 'commit-late', status: 502, body: 'Gateway Time-out', latencyMs: 4000 },
      ],
    });
  });

  it('reads answer-late: performed at once, answered late (the balances show the order before its answer comes)', () => {
    const parsed = parseFaultSpecs(['answer-late=2s,times=1']);
    expect('ok' in parsed && parsed.ok).toEqual({ historyLagMs: 0, historyPageCap: null, faults: [{ path: DEFAULT_FAULT_PATH, times: 1, kind: 'answer-late', latencyMs: 2000 }] });
    expect('ok' in parsed && describeFaults(parsed.ok)).toEqual(['/api/v4/order/stock_market: performed at once, answered 2000 ms later (every request, 1 times)']);
    const bad = parseFaultSpecs(['answer-late', 'answer-late=1s,status=502']);
    expect('problems' in bad && bad.problems).toEqual(['"answer-late": answer-late needs a duration, such as answer-late=4s', '"answer-late=1s,status=502": answer-late answers as usual, only late: status=… does not apply']);
  });

  it('reads unknown-status: a status word for the order records of an order path (ACCEPTED by default)', () => {
    const parsed = parseFaultSpecs(['unknown-status', 'unknown-status=PENDING_MATCH,path=/api/v4/orders,times=2']);
    expect('ok' in parsed && parsed.ok).toEqual({
      historyLagMs: 0,
      historyPageCap: null,
      faults: [
        { path: DEFAULT_FAULT_PATH, times: Infinity, kind: 'status-word', statusWord: 'ACCEPTED' },
        { path: '/api/v4/orders', times: 2, kind: 'status-word', statusWord: 'PENDING_MATCH' },
      ],
    });
    expect('ok' in parsed && describeFaults(parsed.ok)).toEqual([
      '/api/v4/order/stock_market: performed, its orders answered with status ACCEPTED (every request)',
      '/api/v4/orders: performed, its orders answered with status PENDING_MATCH (every request, 2 times)',
    ]);
    const bad = parseFaultSpecs(['unknown-status=not a word', 'unknown-status,path=/api/v4/main-account/transfer', 'unknown-status,status=502']);
    expect('problems' in bad && bad.problems).toEqual([
      '"unknown-status=not a word": the status word must be a letter then letters, digits or _ (at most 64), such as ACCEPTED',
      '"unknown-status,path=/api/v4/main-account/transfer": unknown-status applies to the answers that carry orders: path must be one of /api/v4/order/stock_market, /api/v4/order/market, /api/v4/orders, /api/v4/trade-account/order/history',
      '"unknown-status,status=502": unknown-status answers 200 as usual: status=… does not apply',
    ]);
  });

  it('reads upper-ids: the order records of an order path answered with their clientOrderId in capitals', () => {
    const parsed = parseFaultSpecs(['upper-ids,path=/api/v4/trade-account/order/history']);
    expect('ok' in parsed && parsed.ok.faults).toEqual([{ path: '/api/v4/trade-account/order/history', times: Infinity, kind: 'upper-ids' }]);
    expect('ok' in parsed && describeFaults(parsed.ok)).toEqual(['/api/v4/trade-account/order/history: performed, its orders answered with their clientOrderId in capitals (every request)']);
    const bad = parseFaultSpecs(['upper-ids=yes', 'upper-ids,path=/api/v4/main-account/transfer']);
    expect('problems' in bad && bad.problems).toEqual([
      '"upper-ids=yes": upper-ids takes no value',
      '"upper-ids,path=/api/v4/main-account/transfer": upper-ids applies to the answers that carry orders: path must be one of /api/v4/order/stock_market, /api/v4/order/market, /api/v4/orders, /api/v4/trade-account/order/history',
    ]);
  });

  it('reads unfilled-answer: the order records answered without a status and with nothing filled, on the market order endpoint by default', () => {
    const parsed = parseFaultSpecs(['unfilled-answer,times=1']);
    expect('ok' in parsed && parsed.ok.faults).toEqual([{ path: '/api/v4/order/stock_market', times: 1, kind: 'unfilled-answer' }]);
    expect('ok' in parsed && describeFaults(parsed.ok)).toEqual(['/api/v4/order/stock_market: performed, its orders answered without a status and with nothing filled (every request, 1 times)']);
    const bad = parseFaultSpecs(['unfilled-answer=1', 'unfilled-answer,path=/api/v4/main-account/transfer']);
    expect('problems' in bad && bad.problems).toEqual([
      '"unfilled-answer=1": unfilled-answer takes no value',
      '"unfilled-answer,path=/api/v4/main-account/transfer": unfilled-answer applies to the answers that carry orders: path must be one of /api/v4/order/stock_market, /api/v4/order/market, /api/v4/orders, /api/v4/trade-account/order/history',
    ]);
  });

  it('reads history-page: order history pages held to N orders whatever limit is asked', () => {
    const parsed = parseFaultSpecs(['history-page=10']);
    expect('ok' in parsed && parsed.ok).toEqual({ historyLagMs: 0, historyPageCap: 10, faults: [] });
    expect('ok' in parsed && describeFaults(parsed.ok)).toEqual(['order history pages hold at most 10 orders, whatever limit is asked']);
    const bad = parseFaultSpecs(['history-page', 'history-page=0', 'history-page=501', 'history-page=5,times=2']);
    expect('problems' in bad && bad.problems).toEqual([
      '"history-page": history-page needs the most orders a page holds, a whole number from 1 to 500, such as history-page=10',
      '"history-page=0": history-page needs the most orders a page holds, a whole number from 1 to 500, such as history-page=10',
      '"history-page=501": history-page needs the most orders a page holds, a whole number from 1 to 500, such as history-page=10',
      '"history-page=5,times=2": history-page takes no options: it applies to every order history page',
    ]);
  });

  it('refuses a fault that could never fire: an earlier one on its path fires on every request, and a request meets one', () => {
    const bad = parseFaultSpecs(['answer-late=2s', 'accept-then-5xx,every=3', 'slow=1s']);
    expect('problems' in bad && bad.problems).toEqual([
      '"accept-then-5xx,every=3": would never fire: "answer-late=2s" before it fires on every request of /api/v4/order/stock_market, and a request meets one fault; give that one every=N or times=N',
    ]);
    // Taking turns, or a delay (which every request meets besides its outcome), is fine.
    expect('ok' in parseFaultSpecs(['answer-late=2s,every=2', 'accept-then-5xx,every=3', 'slow=1s'])).toBe(true);
    expect('ok' in parseFaultSpecs(['reset,times=1', 'drop-answer'])).toBe(true);
  });

  it('names the spec and the rule for every bad one, all at once', () => {
    const parsed = parseFaultSpecs(['nope', 'slow', '5xx=200', 'reset=1', 'drop-answer,every=0', 'history-lag=1s,path=/x', 'slow=2s,color=red']);
    expect('problems' in parsed && parsed.problems).toEqual([
      '"nope": unknown fault "nope"; the faults are accept-then-5xx, 5xx, drop-answer, reset, slow, commit-late, answer-late, history-lag, unknown-status, upper-ids, unfilled-answer, history-page',
      '"slow": slow needs a duration, such as slow=4s',
      '"5xx=200": the status must be an HTTP status from 400 to 599, such as 502',
      '"reset=1": reset takes no value',
      '"drop-answer,every=0": every must be a whole number >= 1',
      '"history-lag=1s,path=/x": path must be an API path such as /api/v4/order/stock_market (got "/x")',
      '"slow=2s,color=red": unknown option "color=red"; options are path=…, every=…, times=…, status=…',
    ]);
  });
});

describe('the sandbox banner of a fault on every nth request', () => {
  it('writes the ordinal in English: 2nd, 3rd, 11th, 21st', () => {
    const parsed = parseFaultSpecs(['5xx=500,every=2', '5xx=500,every=3', '5xx=500,every=11', '5xx=500,every=21']);
    const lines = 'ok' in parsed ? describeFaults(parsed.ok).join('\n') : '';
    for (const nth of ['every 2nd request', 'every 3rd request', 'every 11th request', 'every 21st request']) expect(lines).toContain(nth);
  });
});
