import { TRANSFER_DECIMALS } from '../../domain/account.ts';
import { formatDecimal } from '../../domain/money.ts';
import type { TransferAccount } from '../../sim/core.ts';
import { ProblemList, SimRejection } from '../../sim/rejection.ts';
import { type Body, decimalOrNull, integerOrNaN } from '../params.ts';
import type { Route } from '../router.ts';
import { json } from '../responses.ts';
import { codePageWire } from '../wire.ts';

const ACCOUNTS: ReadonlyMap<unknown, TransferAccount> = new Map<unknown, TransferAccount>([
  ['main', 'main'],
  ['spot', 'spot'],
]);
/** The deprecated `method` field (docs/exchange-api.md §5): deposit = main → trade, withdraw = trade → main. */
const METHODS: ReadonlyMap<unknown, [TransferAccount, TransferAccount]> = new Map<unknown, [TransferAccount, TransferAccount]>([
  ['deposit', ['main', 'spot']],
  ['withdraw', ['spot', 'main']],
]);

function transferDirection(body: Body, problems: ProblemList): [TransferAccount, TransferAccount] | null {
  if (body['from'] === undefined && body['to'] === undefined && body['method'] !== undefined) {
    const direction = METHODS.get(body['method']);
    if (!direction) problems.add('method', 'The selected method is invalid.');
    return direction ?? null;
  }
  const ends: (TransferAccount | undefined)[] = [];
  for (const field of ['from', 'to'] as const) {
    const value = body[field];
    // Collateral exists on the exchange but is not simulated: refused as an invalid choice.
    if (value === undefined) problems.add(field, `The ${field} field is required.`);
    else if (!ACCOUNTS.has(value)) problems.add(field, `The selected ${field} is invalid.`);
    ends.push(ACCOUNTS.get(value));
  }
  const [from, to] = ends;
  return from && to ? [from, to] : null;
}

/** Main-account endpoints other than flex: 400 for validation, 422 for business rules. */
export const mainAccountRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/api/v4/main-account/balance',
    private: true,
    scope: 'main-account',
    refusals: 'main-account',
    handle: ({ exchange, body }) => {
      const ticker = body['ticker'];
      if (ticker === undefined) {
        const out: Record<string, { main_balance: string }> = {};
        for (const [asset, amount] of exchange.mainBalances()) out[asset] = { main_balance: formatDecimal(amount) };
        return json(200, out);
      }
      if (typeof ticker !== 'string') throw SimRejection.validation(0, 'ticker', 'validation.string');
      // With a ticker the answer is unwrapped; an unknown ticker is "0", not an error.
      return json(200, { main_balance: formatDecimal(exchange.mainBalance(ticker)) });
    },
  },
  {
    method: 'POST',
    path: '/api/v4/main-account/transfer',
    private: true,
    scope: 'main-account',
    refusals: 'main-account',
    handle: ({ exchange, body }) => {
      const problems = new ProblemList();
      const ticker = body['ticker'];
      if (ticker === undefined || ticker === '') problems.add('ticker', 'The ticker field is required.');
      else if (typeof ticker !== 'string') problems.add('ticker', 'The selected ticker is invalid.');
      const amount = body['amount'] === undefined ? null : decimalOrNull(body['amount']);
      if (body['amount'] === undefined) problems.add('amount', 'The amount field is required.');
      else if (amount === null) problems.add('amount', 'The amount must be a number.');
      // The exchange takes at most 8 decimals here; the wording is the sandbox's own.
      else if (amount.decimalPlaces() > TRANSFER_DECIMALS) problems.add('amount', `The amount may not have more than ${TRANSFER_DECIMALS} decimal places.`);
      const direction = transferDirection(body, problems);
      problems.throwIfAny('validation', 0);
      const [from, to] = direction as [TransferAccount, TransferAccount];
      exchange.transfer({ ticker: ticker as string, amount: amount!, from, to });
      return json(201, []);
    },
  },
  {
    method: 'POST',
    path: '/api/v4/main-account/codes/my',
    private: true,
    scope: 'main-account',
    refusals: 'main-account',
    handle: ({ exchange, body }) => {
      const limit = integerOrNaN(body['limit']);
      const offset = integerOrNaN(body['offset']);
      const page = exchange.codes({ ...(limit === undefined ? {} : { limit }), ...(offset === undefined ? {} : { offset }) });
      return json(201, codePageWire(page));
    },
  },
];
