import { type CodeRecord, type Decimal, type Intent, type SnapshotPart, type TradeBalance, ZERO, defineStrategy, formatDecimal, intent, maskCode, param } from './sdk.ts';

/**
 * Log the account on a schedule: one note per asset with its main and trade balances, then the
 * account's codes — a note per asset and status, and the codes themselves in pages of
 * CODES_PER_NOTE. A code is redeemable by whoever reads it, so it only ever leaves here masked.
 * Changes nothing.
 *
 * A note's data become the log line's fields, which a log store (Elasticsearch, Loki) indexes by
 * name: every note of a kind has the same names, and what varies (an asset, a status, a code) is
 * a value, never a name, so a new asset or another hundred codes adds no field to its mapping.
 */

const ZERO_TRADE: TradeBalance = { available: ZERO, freeze: ZERO };

export const balanceReport = defineStrategy({
  name: 'balance-report',
  describe: "Log main and trade balances and the account's codes (masked); changes nothing.",
  params: {
    TICKERS: param.optionalTickerList({ description: 'Assets to report (balances and codes), zero balances included. Default: every asset with a balance.', example: 'USDT,BTC' }),
    CODES: param.boolean({ default: true, description: "Also report the account's codes (the engine pages through all of them).", example: 'true' }),
    CODES_PER_NOTE: param.integer({ min: 1, max: 100, default: 50, description: 'Codes listed in one log line.', example: '50' }),
  },

  reads(params): readonly SnapshotPart[] {
    return params.CODES ? ['balances', 'codes'] : ['balances'];
  },

  async decide(view, params) {
    const main = view.mainBalances();
    const trade = view.tradeBalances();
    const tickers = params.TICKERS ?? withBalance(main, trade);
    const intents: Intent[] = tickers.map((ticker) => {
      const m = main.get(ticker) ?? ZERO;
      const t = trade.get(ticker) ?? ZERO_TRADE;
      return note(`balance ${ticker}: main ${formatDecimal(m)}, trade ${formatDecimal(t.available)} available + ${formatDecimal(t.freeze)} in orders`, {
        ticker,
        main: formatDecimal(m),
        tradeAvailable: formatDecimal(t.available),
        tradeFreeze: formatDecimal(t.freeze),
      });
    });
    if (tickers.length === 0) intents.push(note('no balances', {}));
    if (!params.CODES) return intents;

    const wanted = params.TICKERS === null ? null : new Set(params.TICKERS);
    const codes = view.codes().filter((code) => wanted === null || wanted.has(code.ticker));
    intents.push(note(`codes: ${codes.length}`, { count: String(codes.length) }));
    for (const group of summary(codes)) {
      intents.push(note(`codes ${group.ticker} ${group.status}: ${group.count} code${group.count === '1' ? '' : 's'}, ${group.amount}`, group));
    }
    for (let start = 0; start < codes.length; start += params.CODES_PER_NOTE) {
      const page = codes.slice(start, start + params.CODES_PER_NOTE);
      const [first, last, total] = [String(start + 1), String(start + page.length), String(codes.length)];
      // One field for the page: a field per code would name it by its number, a new name for every position.
      intents.push(note(`codes ${first}-${last} of ${total}`, { first, last, total, codes: page.map(describeCode).join('; ') }));
    }
    return intents;
  },
});

function note(message: string, data: Readonly<Record<string, string>>): Intent {
  return intent.note(message, data);
}

function withBalance(main: ReadonlyMap<string, Decimal>, trade: ReadonlyMap<string, TradeBalance>): string[] {
  const tickers = new Set<string>();
  for (const [ticker, amount] of main) if (!amount.isZero()) tickers.add(ticker);
  for (const [ticker, t] of trade) if (!t.available.isZero() || !t.freeze.isZero()) tickers.add(ticker);
  return [...tickers].sort();
}

type CodeGroup = {
  readonly ticker: string;
  readonly status: string;
  readonly count: string;
  readonly amount: string;
};

/** Count and amount per asset and status (`USDT Activated`: 3 codes, 30), sorted. */
function summary(codes: readonly CodeRecord[]): CodeGroup[] {
  const totals = new Map<string, { ticker: string; status: string; count: number; amount: Decimal }>();
  for (const code of codes) {
    const key = `${code.ticker} ${code.status}`;
    const seen = totals.get(key) ?? { ticker: code.ticker, status: code.status, count: 0, amount: ZERO };
    totals.set(key, { ...seen, count: seen.count + 1, amount: seen.amount.add(code.amount) });
  }
  return [...totals.keys()].sort().flatMap((key) => {
    const t = totals.get(key);
    return t === undefined ? [] : [{ ticker: t.ticker, status: t.status, count: String(t.count), amount: formatDecimal(t.amount) }];
  });
}

function describeCode(code: CodeRecord): string {
  // Date's range is ±8.64e15 ms; a nonsense time is shown as the number rather than throwing.
  const date = Number.isFinite(code.dateSec) && Math.abs(code.dateSec) <= 8.64e12 ? new Date(code.dateSec * 1000).toISOString() : String(code.dateSec);
  return `${maskCode(code.code)} ${formatDecimal(code.amount)} ${code.ticker} ${code.status} ${date} id ${code.externalId}`;
}
