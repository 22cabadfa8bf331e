import { type CodePage, type CodeRecord, TRANSFER_DECIMALS } from '../../domain/account.ts';
import { InputError } from '../../domain/errors.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import { checkIntegerIn, checkPositiveAmount, checkTicker, optionalInteger } from '../checks.ts';
import { parseCodePage, parseMainBalance, parseMainBalances } from '../parse.ts';
import { PATHS } from '../paths.ts';
import type { Requester } from '../requester.ts';
import type { TransferParamsWire } from '../wire.ts';

/** Main-account endpoints (balance, transfer, codes). All 1000 requests / 10 s. */

const CODES_MAX_OFFSET = 10_000;
/** The exchange's default page when `limit` is omitted (docs/exchange-api.md §5). */
const CODES_DEFAULT_LIMIT = 30;

export function mainBalances(http: Requester): Promise<Map<string, Decimal>> {
  return http.post(PATHS.mainBalance, {}, parseMainBalances, { retry: true });
}

export async function mainBalance(http: Requester, ticker: string): Promise<Decimal> {
  checkTicker(ticker);
  return http.post(PATHS.mainBalance, { ticker }, (value) => parseMainBalance(value, ticker), { retry: true });
}

/** Main → spot (trade) balance; orders spend only the trade balance. Never retried. */
export async function transferToSpot(http: Requester, params: { ticker: string; amount: Decimal }): Promise<void> {
  const ticker = checkTicker(params.ticker);
  const amount = checkPositiveAmount(params.amount, 'amount');
  if (amount.decimalPlaces() > TRANSFER_DECIMALS) {
    throw InputError.one('amount', `a transfer takes at most ${TRANSFER_DECIMALS} decimals (got ${formatDecimal(amount)}); round it down first`);
  }
  const body: TransferParamsWire = { ticker, amount: formatDecimal(amount), from: 'main', to: 'spot' };
  await http.post(PATHS.transfer, { ...body }, () => undefined, { retry: false, ignoreBody: true });
}

/** limit 1–100, offset 0–10000 and offset+limit ≤ 10000, all checked before sending. */
export async function codes(http: Requester, params: { limit?: number; offset?: number } = {}): Promise<CodePage> {
  const limit = optionalInteger(params.limit, 'limit', 1, 100);
  const offset = optionalInteger(params.offset, 'offset', 0, CODES_MAX_OFFSET);
  if ((offset ?? 0) + (limit ?? CODES_DEFAULT_LIMIT) > CODES_MAX_OFFSET) {
    throw InputError.one('offset', `offset + limit must not exceed ${CODES_MAX_OFFSET} (got ${offset ?? 0} + ${limit ?? CODES_DEFAULT_LIMIT})`);
  }
  return http.post(PATHS.codes, { limit, offset }, (value) => parseCodePage(value, { limit: limit ?? CODES_DEFAULT_LIMIT, offset: offset ?? 0 }), {
    retry: true,
  });
}

/**
 * Every code, page by page, until `total` is reached or a page comes back empty. The list is
 * newest first, so a code created while paging shifts the pages by one; a code already seen is
 * not yielded twice. The exchange serves at most the first 10000 records.
 */
export async function* allCodes(http: Requester, params: { pageSize?: number } = {}): AsyncGenerator<CodeRecord> {
  const pageSize = checkIntegerIn(params.pageSize ?? 100, 'pageSize', 1, 100);
  const seen = new Set<string>();
  let offset = 0;
  while (offset < CODES_MAX_OFFSET) {
    const page = await codes(http, { limit: Math.min(pageSize, CODES_MAX_OFFSET - offset), offset });
    for (const record of page.codes) {
      if (seen.has(record.code)) continue;
      seen.add(record.code);
      yield record;
    }
    offset += page.codes.length;
    if (page.codes.length === 0 || offset >= page.total) return;
  }
}
