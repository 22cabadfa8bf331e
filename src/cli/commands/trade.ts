import { randomBytes } from 'node:crypto';
import { InputError, type InputProblem, outcomeUnknown } from '../../domain/errors.ts';
import { type MarketRules, roundBaseAmount } from '../../domain/market.ts';
import { type Decimal, formatDecimal } from '../../domain/money.ts';
import type { Order } from '../../domain/order.ts';
import { checkAll, clientOrderId, marketName, optional, positiveAmount, stpMode } from '../args.ts';
import type { CommandContext } from '../context.ts';
import { fields, json, table, utcTime } from '../output.ts';
import { lookupCommand } from '../lookup-command.ts';
import { type SentId, claimId, releaseId, sentIdsDir } from '../sent-ids.ts';
import { defaultUserLockDir } from '../../store/lock.ts';

export interface BuyFlags {
  readonly market: string;
  readonly amount: string;
  readonly clientOrderId?: string;
  readonly stp?: string;
}

/**
 * `stacker buy`: a stock-market buy of an exact base quantity. Never retried. The order always
 * carries a client order id (generated when none is given) so that, if the answer is lost, the
 * order can be looked up with `stacker order --client-order-id` before anyone buys again. An id
 * given that an order already has is refused before sending: the exchange keeps ids unique only
 * among open orders, which a market order never is, so running the same command again would buy
 * again.
 */
export async function buy(ctx: CommandContext, flags: BuyFlags): Promise<void> {
  const args = checkAll({
    market: () => marketName(flags.market),
    amount: () => positiveAmount(flags.amount, '--amount'),
    clientOrderId: () => optional(flags.clientOrderId, (id) => clientOrderId(id)),
    stp: () => optional(flags.stp, (mode) => stpMode(mode)),
  });
  const client = await ctx.privateClient();
  refuseOffRules(await client.market(args.market), args.amount);
  const sent = await sentIdsOf(ctx);
  const id = args.clientOrderId ?? generatedClientOrderId();
  // Claimed before the history is asked: of two commands with one id started together, one goes on.
  const held = sent === null ? null : claimId(sent, { id, market: args.market, atMs: Date.now() });
  if (held !== null) refuseSentHere(held, ctx);
  if (args.clientOrderId !== undefined) {
    const taken = await client.orderHistory({ clientOrderId: args.clientOrderId }).catch((error: unknown) => {
      // Nothing sent: the id is free again.
      if (sent !== null) releaseId(sent, id);
      throw error;
    });
    refuseTakenId(args.clientOrderId, taken, ctx);
  }
  ctx.setLookupHint(lookupCommand(['order', '--client-order-id', id, '--market', args.market], ctx.globalFlags));
  let order: Order;
  try {
    order = await client.buyStockMarket({
      market: args.market,
      baseAmount: args.amount,
      clientOrderId: id,
      ...(args.stp === undefined ? {} : { stp: args.stp }),
    });
  } catch (error) {
    // Refused outright, nothing has the id: it may be sent again (a lost answer keeps it).
    if (sent !== null && !outcomeUnknown(error)) releaseId(sent, id);
    throw error;
  }
  if (ctx.json) ctx.io.out(json(order));
  else ctx.io.out(orderFields(order));
}

/**
 * An amount the market's rules refuse, refused before sending with the rule it breaks, as the
 * daemon rounds to them and `check` warns: the exchange would refuse it (or, a lax one, take
 * more decimals than the market trades).
 */
function refuseOffRules(rules: MarketRules, amount: Decimal): void {
  const problems: InputProblem[] = [];
  const decimals = amount.decimalPlaces();
  if (decimals > rules.basePrecision) {
    problems.push({
      field: '--amount',
      rule: `${formatDecimal(amount)} has ${decimals} decimals; ${rules.name} takes at most ${rules.basePrecision} (its amount precision): rounded down, that is ${formatDecimal(roundBaseAmount(rules, amount))}`,
    });
  }
  if (amount.lt(rules.minBaseAmount)) {
    problems.push({ field: '--amount', rule: `${formatDecimal(amount)} is below ${rules.name}'s minimum amount, ${formatDecimal(rules.minBaseAmount)} ${rules.base}` });
  }
  if (problems.length > 0) throw new InputError(problems);
}

/** Where this machine keeps the ids `buy` sent with the key in use; null without credentials. */
async function sentIdsOf(ctx: CommandContext): Promise<string | null> {
  const credentials = (await ctx.settings()).credentials;
  if (credentials === null) return null;
  const lockDir = (await ctx.envLayers()).lookup('STACKER_LOCK_DIR')?.value ?? defaultUserLockDir();
  return sentIdsDir(lockDir, credentials.apiKey);
}

/** An id this machine sent before with the key: refused, whatever the history shows yet (it lags). */
function refuseSentHere(before: SentId, ctx: CommandContext): never {
  throw InputError.one(
    'clientOrderId',
    `${before.id} was sent from this machine with this key at ${new Date(before.atMs).toISOString()} (${before.market}); the exchange's history may not show its order yet, and the exchange takes a second market order with the same id, so this would buy again. ` +
      `See it with \`${lookupCommand(['order', '--client-order-id', before.id, '--market', before.market], ctx.globalFlags)}\`; to buy once more, give a new --client-order-id`,
  );
}

/** InputError naming the orders the order history holds under the id given, if any. */
function refuseTakenId(id: string, holders: readonly Order[], ctx: CommandContext): void {
  const [first] = holders;
  if (first === undefined) return;
  const more = holders.length > 1 ? ` and ${holders.length - 1} more` : '';
  throw InputError.one(
    'clientOrderId',
    `order ${first.orderId} (${first.market}, ${first.status}, placed ${utcTime(first.createdAtSec)})${more} already has the id ${id}; ` +
      'the exchange takes a second market order with the same id, so this would buy again. ' +
      `See it with \`${lookupCommand(['order', '--client-order-id', id], ctx.globalFlags)}\`; to buy once more, give a new --client-order-id`,
  );
}

/** `cli-<ms in base 36>-<8 hex>`: unique enough for one person's command line, 22 characters. */
function generatedClientOrderId(): string {
  return `cli-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

function orderFields(order: Order): string {
  const fee = `${formatDecimal(order.fee)}${order.feeAsset === null ? '' : ` ${order.feeAsset}`}`;
  return fields([
    ['order id', order.orderId],
    ['client order id', order.clientOrderId],
    ['market', order.market],
    ['side', order.side],
    ['type', order.type],
    ['status', `${order.status}${order.statusDerived ? ' (derived from the fills)' : ''}`],
    ['amount', formatDecimal(order.amount)],
    ['left', formatDecimal(order.left)],
    ['filled base', formatDecimal(order.filledBase)],
    ['filled quote', formatDecimal(order.filledQuote)],
    ['fee', fee],
    ['stp', order.stp],
    ['created (UTC)', utcTime(order.createdAtSec)],
  ]);
}

export interface OrderFlags {
  readonly clientOrderId: string;
  readonly market?: string;
}

type Found = Order & { readonly source: 'history' | 'active' };

/** `stacker order`: find an order by client order id in the order history and among active orders. */
export async function order(ctx: CommandContext, flags: OrderFlags): Promise<void> {
  const args = checkAll({
    clientOrderId: () => clientOrderId(flags.clientOrderId),
    market: () => optional(flags.market, (m) => marketName(m)),
  });
  const client = await ctx.privateClient();
  const query = { clientOrderId: args.clientOrderId, ...(args.market === undefined ? {} : { market: args.market }) };
  // The active-orders endpoint searches by id only within a market (it answers 422 without one);
  // the history searches every market. Without --market only the history is read, which finds
  // every market order: they never rest, so they are in the history or nowhere.
  const [history, active] = await Promise.all([client.orderHistory(query), args.market === undefined ? Promise.resolve([]) : client.activeOrders({ ...query, market: args.market })]);
  if (args.market === undefined && !ctx.json) ctx.io.err('(searched the order history of every market; give --market to search its active orders too)\n');
  const seen = new Set<string>();
  const found: Found[] = [];
  for (const [source, orders] of [['history', history], ['active', active]] as const) {
    for (const o of orders) {
      if (seen.has(o.orderId)) continue;
      seen.add(o.orderId);
      found.push({ ...o, source });
    }
  }
  if (ctx.json) {
    ctx.io.out(json({ clientOrderId: args.clientOrderId, orders: found }));
    return;
  }
  if (found.length === 0) {
    // The history can list an order minutes after it was taken: "not there" is not "never placed".
    ctx.io.err(
      `no order with client order id ${args.clientOrderId}${args.market === undefined ? ' in the order history' : ` on ${args.market} in the order history or among active orders`} yet: the history can show an order minutes late, so look again in a few minutes before buying again\n`,
    );
    // One account's history says nothing of another's: an order of account kids looked up on
    // the default key is "not there", and a buy again would be the second.
    const { accountsSetUp } = await import('../../config/accounts.ts');
    const others = ctx.globalFlags.account === undefined ? [...accountsSetUp(await ctx.envLayers()).keys()] : [];
    if (others.length > 0) ctx.io.err(`(searched the default account only; the env sets up account${others.length === 1 ? '' : 's'} ${others.join(', ')}: give --account NAME to search ${others.length === 1 ? 'it' : 'one of them'})\n`);
    return;
  }
  ctx.io.out(
    table(
      [
        { header: 'ORDER ID' },
        { header: 'WHERE' },
        { header: 'MARKET' },
        { header: 'SIDE' },
        { header: 'TYPE' },
        { header: 'STATUS' },
        { header: 'AMOUNT', align: 'right' },
        { header: 'FILLED BASE', align: 'right' },
        { header: 'FILLED QUOTE', align: 'right' },
        { header: 'FEE', align: 'right' },
        { header: 'CREATED (UTC)' },
      ],
      found.map((o) => [
        o.orderId,
        o.source,
        o.market,
        o.side,
        o.type,
        o.status,
        formatDecimal(o.amount),
        formatDecimal(o.filledBase),
        formatDecimal(o.filledQuote),
        `${formatDecimal(o.fee)}${o.feeAsset === null ? '' : ` ${o.feeAsset}`}`,
        utcTime(o.createdAtSec),
      ]),
    ),
  );
}
