import type { InputProblem } from '../src/domain/errors.ts';
import { type MarketRules, RULE_REFUSAL_REASONS, type RuleViolation, checkBaseOrder, roundBaseAmount, takerFee } from '../src/domain/market.ts';
import { TRANSFER_DECIMALS } from '../src/domain/account.ts';
import { Decimal, formatDecimal, roundDown, roundUp } from '../src/domain/money.ts';
import { STP_INPUT_HELP, type Stp, readStp } from '../src/domain/order.ts';
import { type Intent, type RefusalIntent, STRATEGY_API_VERSION, defineStrategy } from '../src/engine/contract.ts';
import { ParamReader, closestName } from '../src/engine/params.ts';

/**
 * Dollar-cost averaging by quantity: each slot buys a fixed base amount of one market at market
 * ("stock market" order), so the quote spent follows the price. Before the buy it checks what the
 * exchange would refuse anyway (precision, min amount, min/max total) and what the instance
 * allows (max order value, budget), so a refusal carries a clear reason instead of an exchange
 * error. When the trade balance is short it can move the difference from the main balance first.
 */

export interface DcaParams {
  readonly market: string;
  /** Base quantity per slot as configured; rounded down to the market's precision each slot. */
  readonly baseAmount: Decimal;
  readonly stp: Stp;
  readonly clientOrderPrefix: string | null;
  readonly allowTransfer: boolean;
  readonly transferBufferPct: Decimal;
}

const HUNDRED = new Decimal(100);

export const dca = defineStrategy<DcaParams>({
  name: 'dca',
  version: STRATEGY_API_VERSION,
  describe: 'Buy a fixed base quantity of one market at market price on every slot, funding the trade balance from main when allowed.',
  params: [
    { key: 'MARKET', required: true, rule: 'a market BASE_QUOTE in capitals that the exchange lists', description: 'The market to buy on; the base is what is bought, the quote what is spent.', example: 'BTC_USDT' },
    { key: 'AMOUNT', required: true, rule: 'decimal > 0', description: "Base quantity per slot, rounded down to the market's precision (BTC_USDT at 6 decimals: 0.00051234 buys 0.000512).", example: '0.0005' },
    { key: 'STP', required: false, rule: STP_INPUT_HELP, default: 'no', description: 'Self-trade prevention mode sent with the order.', example: 'cn' },
    { key: 'CLIENT_ORDER_PREFIX', required: false, rule: '1 to 24 letters, digits, dots, dashes or underscores', description: 'Start of the clientOrderId of every order; the engine appends a suffix derived from the slot. Default: chosen by the engine.', example: 'dca-btc' },
    { key: 'ALLOW_TRANSFER', required: false, rule: 'true or false', default: 'false', description: 'Move the shortfall from the main balance to the trade balance before buying when the trade balance cannot pay.', example: 'true' },
    { key: 'TRANSFER_BUFFER_PCT', required: false, rule: 'decimal from 0 to 50', default: '0', description: 'Transfer this percent more than the estimate (total + taker fee), as headroom for the price moving before the fill. Capped at the main balance.', example: '1' },
  ],

  parseParams(env, source) {
    const p = new ParamReader(env, source);
    const market = p.market('MARKET');
    const baseAmount = p.decimal('AMOUNT', { positive: true });
    const stpText = p.raw('STP');
    const stp = stpText === undefined ? 'no' : readStp(stpText);
    if (stp === null) p.problem('STP', `must be ${STP_INPUT_HELP} (got ${JSON.stringify(stpText)})`);
    const clientOrderPrefix = p.clientOrderPrefix('CLIENT_ORDER_PREFIX') ?? null;
    const allowTransfer = p.boolean('ALLOW_TRANSFER', false);
    const transferBufferPct = p.decimal('TRANSFER_BUFFER_PCT', { default: '0', nonNegative: true, max: '50' });
    return p.done({ market, baseAmount, stp: stp ?? 'no', clientOrderPrefix, allowTransfer, transferBufferPct });
  },

  checkParams(params, context, source) {
    const problems: InputProblem[] = [];
    const rules = context.market(params.market);
    if (rules === undefined) {
      const guess = closestName(params.market, context.marketNames());
      problems.push({ source, field: 'MARKET', rule: `the exchange does not list ${params.market}${guess === undefined ? '' : `; did you mean ${guess}?`}` });
      return problems;
    }
    const amount = roundBaseAmount(rules, params.baseAmount);
    if (amount.lt(rules.minBaseAmount) || amount.isZero()) {
      problems.push({
        source,
        field: 'AMOUNT',
        rule: `${formatDecimal(params.baseAmount)} rounds down to ${formatDecimal(amount)} at ${rules.name}'s ${rules.basePrecision} decimals, below its minimum ${formatDecimal(rules.minBaseAmount)} ${rules.base}`,
      });
    }
    return problems;
  },

  reads() {
    return ['balances', 'markets', 'prices'];
  },

  budgetAsset(params) {
    // MARKET is BASE_QUOTE (checked by parseParams): the budget counts what is spent, the quote.
    return params.market.slice(params.market.indexOf('_') + 1);
  },

  async decide(view, params) {
    const rules = view.market(params.market);
    if (rules === undefined) {
      return [refusal('unknown-market', `the exchange does not list ${params.market}`, { market: params.market })];
    }
    const price = view.price(params.market);
    if (price === undefined || price.lte(0)) {
      return [refusal('no-price', `no price is known for ${params.market}`, { market: params.market })];
    }

    const intents: Intent[] = [];
    const amount = roundBaseAmount(rules, params.baseAmount);
    if (!amount.eq(params.baseAmount)) {
      intents.push({
        kind: 'note',
        level: 'info',
        message: `AMOUNT ${formatDecimal(params.baseAmount)} rounded down to ${formatDecimal(amount)} (${rules.name} takes ${rules.basePrecision} decimals)`,
        data: { requested: formatDecimal(params.baseAmount), amount: formatDecimal(amount) },
      });
    }

    const violations = checkBaseOrder(rules, amount, price);
    const first = violations[0];
    if (first !== undefined) {
      intents.push(refusal(reasonFor(first), violations.map((v) => v.message).join('; '), orderData(rules, amount, price)));
      return intents;
    }

    const quoteEstimate = amount.mul(price);
    const fee = takerFee(rules, quoteEstimate);
    const maxOrder = view.budget.maxOrderQuote();
    if (maxOrder !== null && quoteEstimate.gt(maxOrder)) {
      intents.push(refusal('above-max-order', `estimated value ${q(quoteEstimate, rules)} is above MAX_ORDER_QUOTE ${q(maxOrder, rules)}`, orderData(rules, amount, price)));
      return intents;
    }
    const remaining = view.budget.remainingQuote();
    if (remaining !== null && quoteEstimate.gt(remaining)) {
      intents.push(refusal('over-budget', `estimated value ${q(quoteEstimate, rules)} is above the remaining budget ${q(remaining, rules)}`, orderData(rules, amount, price)));
      return intents;
    }

    const funding = fund(view.tradeBalance(rules.quote).available, view.mainBalance(rules.quote), quoteEstimate.add(fee), rules, params);
    if (funding.kind === 'short') {
      intents.push(refusal('insufficient-funds', funding.message, orderData(rules, amount, price)));
      return intents;
    }
    if (funding.kind === 'transfer') {
      intents.push({ kind: 'transfer', ticker: rules.quote, amount: funding.amount, from: 'main', to: 'spot' });
    }
    intents.push({
      kind: 'buy-stock-market',
      market: rules.name,
      amount,
      stp: params.stp,
      ...(params.clientOrderPrefix === null ? {} : { tag: params.clientOrderPrefix }),
    });
    return intents;
  },
});

type Funding = { kind: 'enough' } | { kind: 'transfer'; amount: Decimal } | { kind: 'short'; message: string };

/**
 * Whether the trade balance can pay `needQuote` (estimated total + taker fee), and if not, how
 * much to move from main: the shortfall rounded up to the quote precision, plus the buffer
 * when main can afford it. The buffer never causes a transfer on its own and never causes a
 * refusal: it only sizes a transfer that is needed anyway.
 */
function fund(tradeAvailable: Decimal, mainAvailable: Decimal, needQuote: Decimal, rules: MarketRules, params: DcaParams): Funding {
  if (tradeAvailable.gte(needQuote)) return { kind: 'enough' };
  const shortfall = roundUp(needQuote.sub(tradeAvailable), rules.quotePrecision);
  const need = `the trade balance has ${q(tradeAvailable, rules)}, the buy needs about ${q(needQuote, rules)} (total + taker fee)`;
  if (!params.allowTransfer) return { kind: 'short', message: `${need}; ALLOW_TRANSFER is false` };
  if (mainAvailable.lt(shortfall)) {
    return { kind: 'short', message: `${need}; the main balance has ${q(mainAvailable, rules)}, short of the ${q(shortfall, rules)} to transfer` };
  }
  const buffered = roundUp(needQuote.mul(HUNDRED.add(params.transferBufferPct)).div(HUNDRED).sub(tradeAvailable), rules.quotePrecision);
  // The whole main balance may carry more decimals than a transfer takes: round down, never up.
  return { kind: 'transfer', amount: roundDown(Decimal.min(buffered, mainAvailable), TRANSFER_DECIMALS) };
}

function reasonFor(violation: RuleViolation): string {
  return RULE_REFUSAL_REASONS[violation.rule];
}

function refusal(reason: string, message: string, data: Readonly<Record<string, string>>): RefusalIntent {
  return { kind: 'refusal', reason, message, data };
}

function orderData(rules: MarketRules, amount: Decimal, price: Decimal): Readonly<Record<string, string>> {
  return { market: rules.name, amount: formatDecimal(amount), price: formatDecimal(price), total: formatDecimal(amount.mul(price)) };
}

function q(value: Decimal, rules: MarketRules): string {
  return `${formatDecimal(value)} ${rules.quote}`;
}
