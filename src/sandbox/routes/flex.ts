import { FLEX_CODES } from '../../sim/flex.ts';
import { ProblemList, SimRejection } from '../../sim/rejection.ts';
import { decimalOrNull, optionalText, paging } from '../params.ts';
import type { Route } from '../router.ts';
import { json } from '../responses.ts';
import { flexInvestmentWire, flexPlanWire } from '../wire.ts';

const FLEX_PAGING = { defaultLimit: 100, maxLimit: 100 } as const;
const invalid = (field: string) => () => SimRejection.validation(FLEX_CODES.validation, field, 'validation.string');

/**
 * Smart Flex endpoints (docs/exchange-api.md §5). The withdrawal answers 201
 * `{"data":{"transaction_id":…}}`; 400 code 0 "Validation failed" with validation keys per
 * field; 422 code 2 "Inner validation failed" for the business rules.
 */
export const flexRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/api/v4/main-account/smart-flex/plans',
    private: true,
    scope: 'main-account',
    refusals: 'main-account',
    handle: ({ exchange, body }) => {
      const ticker = optionalText(body, 'ticker', invalid('ticker'));
      const { limit, offset } = paging(body, FLEX_PAGING, FLEX_CODES.validation);
      return json(200, exchange.flexPlans(ticker).slice(offset, offset + limit).map(flexPlanWire));
    },
  },
  {
    method: 'POST',
    path: '/api/v4/main-account/smart-flex/investments',
    private: true,
    scope: 'main-account',
    refusals: 'main-account',
    handle: ({ exchange, body }) => {
      const ticker = optionalText(body, 'ticker', invalid('ticker'));
      const planId = optionalText(body, 'plan', invalid('plan'));
      const status = body['investmentStatus'];
      if (status !== undefined && status !== 0 && status !== 1) {
        throw SimRejection.validation(FLEX_CODES.validation, 'investmentStatus', 'validation.in');
      }
      const { limit, offset } = paging(body, FLEX_PAGING, FLEX_CODES.validation);
      const investments = exchange.flexInvestments({
        ...(ticker === undefined ? {} : { ticker }),
        ...(planId === undefined ? {} : { planId }),
        ...(status === undefined ? {} : { active: status === 1 }),
      });
      return json(200, { data: investments.slice(offset, offset + limit).map(flexInvestmentWire), limit, offset });
    },
  },
  {
    method: 'POST',
    path: '/api/v4/main-account/smart-flex/investments/withdraw',
    private: true,
    scope: 'main-account',
    refusals: 'main-account',
    handle: ({ exchange, body }) => {
      const problems = new ProblemList();
      const plan = body['plan'];
      if (plan === undefined || plan === null || plan === '') problems.add('plan', 'validation.required');
      else if (typeof plan !== 'string') problems.add('plan', 'validation.string');
      const rawAmount = body['amount'];
      const amount = decimalOrNull(rawAmount);
      if (rawAmount === undefined || rawAmount === null || rawAmount === '') problems.add('amount', 'validation.required');
      // A JSON float is numeric to the exchange, but money must travel as text: say so.
      else if (typeof rawAmount === 'number' && amount === null) problems.add('amount', 'validation.string');
      else if (amount === null) problems.add('amount', 'validation.numeric');
      problems.throwIfAny('validation', FLEX_CODES.validation);
      const { transactionId } = exchange.flexWithdraw(plan as string, amount!);
      return json(201, { data: { transaction_id: transactionId } });
    },
  },
];
