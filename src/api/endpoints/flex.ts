import type { FlexInvestment, FlexPlan } from '../../domain/account.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import { checkPlan, checkPositiveAmount, checkTicker, optionalInteger } from '../checks.ts';
import { parseFlexInvestments, parseFlexPlans, parseFlexWithdraw } from '../parse.ts';
import { PATHS } from '../paths.ts';
import type { Requester } from '../requester.ts';
import type { FlexWithdrawParamsWire } from '../wire.ts';

/** Smart Flex (lending) endpoints under main-account: 1000 requests / 10 s. */

const MAX_OFFSET = 4_294_967_295;

export async function flexPlans(http: Requester, params: { ticker?: string; limit?: number; offset?: number } = {}): Promise<FlexPlan[]> {
  const body = {
    ticker: params.ticker === undefined ? undefined : checkTicker(params.ticker),
    limit: optionalInteger(params.limit, 'limit', 1, 100),
    offset: optionalInteger(params.offset, 'offset', 0, MAX_OFFSET),
  };
  return http.post(PATHS.flexPlans, body, parseFlexPlans, { retry: true });
}

export async function flexInvestments(
  http: Requester,
  params: { ticker?: string; plan?: string; active?: boolean; limit?: number; offset?: number } = {},
): Promise<FlexInvestment[]> {
  const body = {
    ticker: params.ticker === undefined ? undefined : checkTicker(params.ticker),
    plan: params.plan === undefined ? undefined : checkPlan(params.plan),
    // The wire filter is `investmentStatus`: 1 active, 0 closed.
    investmentStatus: params.active === undefined ? undefined : params.active ? 1 : 0,
    limit: optionalInteger(params.limit, 'limit', 1, 100),
    offset: optionalInteger(params.offset, 'offset', 0, MAX_OFFSET),
  };
  return http.post(PATHS.flexInvestments, body, parseFlexInvestments, { retry: true });
}

/**
 * Back to the main balance (docs/exchange-api.md §5: 201 with the transaction id; 400 validation; 422 code 2 when
 * the amount exceeds the investment or there is none). Never retried.
 */
export async function flexWithdraw(http: Requester, params: { plan: string; amount: Decimal }): Promise<{ transactionId: string }> {
  const body: FlexWithdrawParamsWire = { plan: checkPlan(params.plan), amount: formatDecimal(checkPositiveAmount(params.amount, 'amount')) };
  return http.post(PATHS.flexWithdraw, { ...body }, parseFlexWithdraw, { retry: false });
}
