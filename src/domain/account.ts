import { Decimal, roundDown, roundUp } from './money.ts';

/** The account of instances that name none (STACKER_API_KEY's), and of orders journalled before accounts. */
export const DEFAULT_ACCOUNT = 'default';

/** The exchange takes transfer amounts with at most this many decimals (docs/exchange-api.md). */
export const TRANSFER_DECIMALS = 8;

/**
 * The transfer that covers `missing` from a balance of `from`: rounded UP to the decimals a
 * transfer takes (rounded down, a need with more decimals, as on a market priced in 12, came
 * out just short, and the buy it funded was refused every slot), at most what `from` holds
 * (rounded down: never more than there is). Zero when `from` holds less than the smallest transfer.
 */
export function transferCovering(missing: Decimal, from: Decimal): Decimal {
  return Decimal.min(roundUp(missing, TRANSFER_DECIMALS), roundDown(from, TRANSFER_DECIMALS));
}

export interface TradeBalance {
  readonly available: Decimal;
  readonly freeze: Decimal;
}

/** A code record (WhiteBIT Codes). `code` is secret-like: mask it wherever it is shown. */
export interface CodeRecord {
  readonly amount: Decimal;
  readonly code: string;
  readonly dateSec: number;
  readonly status: string;
  readonly ticker: string;
  readonly externalId: string;
}

export interface CodePage {
  readonly total: number;
  readonly limit: number;
  readonly offset: number;
  readonly codes: readonly CodeRecord[];
}

export interface FlexPlan {
  readonly planId: string;
  readonly ticker: string;
  readonly minInvestment: Decimal;
  readonly maxInvestment: Decimal;
  readonly maxRatePct: Decimal;
}

export interface FlexInvestment {
  readonly investmentId: string;
  readonly planId: string;
  readonly ticker: string;
  readonly invested: Decimal;
  readonly autoReinvest: boolean;
  /** 1 active, 0 closed. */
  readonly active: boolean;
  readonly createdAtSec: number;
  readonly updatedAtSec: number;
}

export interface Ticker {
  readonly market: string;
  readonly lastPrice: Decimal;
  readonly baseVolume24h: Decimal;
  readonly quoteVolume24h: Decimal;
  readonly changePct: Decimal;
  readonly frozen: boolean;
}

/** Show enough of a code to recognise it, never enough to redeem it. */
export function maskCode(code: string): string {
  if (code.length <= 8) return '*'.repeat(code.length);
  return `${code.slice(0, 4)}${'*'.repeat(Math.min(code.length - 8, 24))}${code.slice(-4)}`;
}

/** The shortest run of a code's characters taken for the code in free text (maskCodesIn). */
const CODE_FRAGMENT = 6;

/**
 * `text` with every run of six or more characters of one of `codes` masked: a strategy's error
 * may quote a code it read, whole or cut (`JSON.parse` quotes the first ten characters), and the
 * error goes to the log, the journal and the notifications.
 */
export function maskCodesIn(text: string, codes: readonly string[]): string {
  let masked = text;
  for (const code of codes) {
    for (let length = code.length; length >= CODE_FRAGMENT; length -= 1) {
      for (let at = 0; at + length <= code.length; at += 1) {
        const fragment = code.slice(at, at + length);
        if (masked.includes(fragment)) masked = masked.split(fragment).join('*'.repeat(Math.min(length, 8)));
      }
    }
  }
  return masked;
}
