import { formatDecimal } from '../domain/money.ts';
import type { AccountCapDay, InstanceDay, NotifyEvent } from '../domain/notification.ts';
import { priceText } from './payload.ts';

/**
 * An event as a person reads it on a phone's lock screen: a title that says what happened in a
 * few words, then short lines, the important figure first. Plain text (no Markdown to escape),
 * ASCII in the title (ntfy sends it as an HTTP header). Amounts are the same decimal strings as
 * in the JSON payload.
 */
export interface Message {
  readonly title: string;
  readonly body: string;
}

export function messageOf(event: NotifyEvent): Message {
  const mode = event.mode === 'live' ? '' : ` [${event.mode}]`;
  switch (event.kind) {
    case 'order-filled': {
      const [base, quote] = assetsOf(event.market);
      const fee = event.fee.isZero() ? 'no fee' : `fee ${formatDecimal(event.fee)} ${event.feeAsset ?? ''}`.trim();
      const partly = event.status === 'FILLED' ? [] : [`Ended ${event.status}: filled only in part`];
      return {
        title: `Bought ${formatDecimal(event.filledBase)} ${base} for ${formatDecimal(event.filledQuote)} ${quote}${mode}`,
        body: lines(`${event.instance} · ${event.market}`, `Average price ${priceText(event.averagePrice)} ${quote}, ${fee}`, ...partly, `Order ${event.orderId} (${event.clientOrderId})`),
      };
    }
    case 'order-refused':
      return {
        title: `Not bought: ${event.instance} (${event.reason})${mode}`,
        body: lines(
          event.message,
          `${event.intent}${event.clientOrderId === null ? '' : ` ${event.clientOrderId}`}`,
          event.withheld === undefined ? '' : `${event.withheld.count} more like it since ${new Date(event.withheld.sinceMs).toISOString()} not sent (one a day while nothing changes)`,
        ),
      };
    case 'intent-unknown':
      return {
        title: `Answer lost: ${event.instance}${event.account === undefined ? '' : ` (account ${event.account})`} - check the exchange${mode}`,
        body: lines(
          `A ${event.intent}${event.clientOrderId === null ? '' : ` (${event.clientOrderId})`} may or may not have happened. stacker never sends it again; it keeps looking.`,
          `${event.code}: ${event.message}`,
        ),
      };
    case 'order-stuck': {
      const who = event.instance === null ? event.market : `${event.instance} · ${event.market}`;
      return {
        title: `Order stuck: ${event.instance ?? event.market} - check the exchange${mode}`,
        body: lines(
          `${who}: order ${event.orderId} (${event.clientOrderId}) still ${event.status} since ${new Date(event.sinceMs).toISOString()}; a market order ends in seconds.`,
          event.why,
          'Check it at the exchange. stacker keeps following it, cancels and resends nothing; its budget stays counted.',
        ),
      };
    }
    case 'strategy-disabled':
      return {
        title: `Strategy failed: ${event.instance} stopped buying${mode}`,
        body: lines(
          `${event.instance} (${event.strategy}), slot ${new Date(event.slotTimeMs).toISOString()}: ${event.error}`,
          'This instance runs no more slots until stacker is restarted; the others go on. Fix the strategy or its file, check it with `stacker check`, then restart.',
        ),
      };
    case 'trading-stopped':
      // E_LOCKED is only ever a second stacker refused the lock another one holds: that one trades on.
      if (event.code === 'E_LOCKED') return { title: `Second stacker refused (E_LOCKED)${mode}`, body: lines(event.reason, 'The stacker already running was not touched.') };
      return {
        title: `Trading stopped (${event.code})${mode}`,
        body: lines(event.reason, 'No order is sent until a person fixes this and restarts stacker.'),
      };
    case 'daemon-stopped':
      return { title: `stacker stopped (${event.reason})${mode}`, body: 'Stopped as asked: no slot runs until stacker is started again.' };
    case 'daily-summary':
      return {
        title: `Daily summary ${event.day}${mode}`,
        body: [event.instances.length === 0 ? 'No instance is configured.' : event.instances.map((day) => dayLines(day, event.day)).join('\n\n'), ...event.accountCaps.map((cap) => capLine(cap, event.day))].join('\n\n'),
      };
  }
}

/** Title and body as one text, for channels with a single text field (Telegram, chat webhooks). */
export function textOf(message: Message): string {
  return `${message.title}\n${message.body}`;
}

function dayLines(day: InstanceDay, date: string): string {
  const [base, quote] = day.market === null ? ['', ''] : assetsOf(day.market);
  const state = day.state === 'no-file' ? ' (no file any more)' : day.state === 'disabled' ? ' (disabled)' : '';
  const out = [`${day.instance}${day.market === null ? '' : ` · ${day.market}`}${day.account === 'default' ? '' : ` · account ${day.account}`}${state}`];
  if (day.orders === 0) out.push('Bought nothing');
  else {
    const fees = [...day.fees].map(([asset, amount]) => `${formatDecimal(amount)} ${asset}`).join(' + ');
    out.push(`Bought ${formatDecimal(day.bought)} ${base} for ${formatDecimal(day.spent)} ${quote} in ${day.orders} order${day.orders === 1 ? '' : 's'}`);
    if (day.averageCost !== null) out.push(`Average cost ${priceText(day.averageCost)} ${quote} (fees in${fees === '' ? '' : `: ${fees}`})`);
  }
  if (day.budgetLeft !== null) out.push(`Budget left ${`${formatDecimal(day.budgetLeft)} ${day.budgetAsset ?? quote}`.trim()} ${leftWhen(date, day.budgetTimeZone)}`);
  return out.join('\n');
}

function capLine(cap: AccountCapDay, date: string): string {
  return `Account ${cap.account}: cap left ${formatDecimal(cap.capLeft)} ${cap.capAsset} ${leftWhen(date, cap.timeZone, 'its ', ' calendar')} (all its instances together)`;
}

/**
 * The day a budget or cap is left on: the summary's UTC day, or the same date in the zone it
 * counts days in, which is not the UTC day (it ended hours before, or runs on past the summary).
 */
function leftWhen(date: string, timeZone: string | null, before = '', after = ''): string {
  return timeZone === null || timeZone === 'UTC' ? "at the day's end" : `on ${date} in ${before}${timeZone}${after}`;
}

function assetsOf(market: string): [string, string] {
  const [base = market, quote = ''] = market.split('_');
  return [base, quote];
}

function lines(...parts: string[]): string {
  return parts.filter((part) => part !== '').join('\n');
}
