import { Decimal, ZERO, formatDecimal } from '../domain/money.ts';

/**
 * Where money sits in the simulated account. `spot` is the trade balance's `available`,
 * `spot-freeze` its `freeze` (funds held by an order that is still settling), `flex` the sum
 * invested in flex plans.
 */
export type LedgerAccount = 'main' | 'spot' | 'spot-freeze' | 'flex';
export const LEDGER_ACCOUNTS: readonly LedgerAccount[] = ['main', 'spot', 'spot-freeze', 'flex'];

export type LedgerReason = 'seed' | 'transfer' | 'freeze' | 'unfreeze' | 'buy' | 'fee' | 'flex-withdraw' | 'flex-interest';

/** One line of the append-only ledger. Balances are, by construction, the sums of these. */
export interface LedgerEntry {
  readonly seq: number;
  readonly timeMs: number;
  readonly account: LedgerAccount;
  readonly asset: string;
  readonly delta: Decimal;
  readonly reason: LedgerReason;
  /** Order id, transaction id or investment id the movement belongs to. */
  readonly ref: string;
}

export interface Posting {
  readonly account: LedgerAccount;
  readonly asset: string;
  readonly delta: Decimal;
  readonly reason: LedgerReason;
}

export interface LedgerMismatch {
  readonly account: LedgerAccount | 'flex-investments';
  readonly asset: string;
  readonly balance: Decimal;
  readonly ledgerSum: Decimal;
}

/**
 * A balance's map key. Kept once per (account, asset): balances are read many times a slot, and
 * the same string, whose hash V8 keeps, costs a lookup instead of a new string to build and hash.
 */
const keys = new Map<LedgerAccount, Map<string, string>>();
function key(account: LedgerAccount, asset: string): string {
  let byAsset = keys.get(account);
  if (byAsset === undefined) {
    byAsset = new Map();
    keys.set(account, byAsset);
  }
  let found = byAsset.get(asset);
  if (found === undefined) {
    found = `${account}\u0000${asset}`;
    byAsset.set(asset, found);
  }
  return found;
}

/**
 * Balances plus the ledger that explains them. Every change goes through `post`, which applies
 * a group of postings atomically (all or none) and refuses to take any balance below zero: the
 * callers check sufficiency and answer the exchange's refusal first, so a negative here is a
 * bug in the sim and must not be papered over.
 */
export class Books {
  readonly #entries: LedgerEntry[] = [];
  readonly #balances = new Map<string, Decimal>();
  readonly #keepEntries: boolean;
  /** Per asset, the sum over every account: moved with each posting (a backtest values the account every slot). */
  readonly #holdings = new Map<string, Decimal>();

  /** `entries: false` keeps the balances only (a backtest over years): see SimHistory. */
  constructor(options: { readonly entries?: boolean } = {}) {
    this.#keepEntries = options.entries ?? true;
  }

  balance(account: LedgerAccount, asset: string): Decimal {
    return this.#balances.get(key(account, asset)) ?? ZERO;
  }

  /** How many (account, asset) pairs ever had a posting; grows only, so a cache can key on it. */
  get keyCount(): number {
    return this.#balances.size;
  }

  /** What the account holds of an asset over all its accounts (main, spot, its frozen part, flex). */
  holding(asset: string): Decimal {
    return this.#holdings.get(asset) ?? ZERO;
  }

  /** Assets that ever had a posting on this account, sorted. */
  assets(account: LedgerAccount): string[] {
    const prefix = `${account}\u0000`;
    return [...this.#balances.keys()]
      .filter((k) => k.startsWith(prefix))
      .map((k) => k.slice(prefix.length))
      .sort();
  }

  post(timeMs: number, ref: string, postings: readonly Posting[]): void {
    // A group touches two or three balances: their new values side by side in arrays, applied
    // only once none would go below zero (a map per group cost a backtest one per fill).
    const keys: string[] = [];
    const values: Decimal[] = [];
    for (const p of postings) {
      const k = key(p.account, p.asset);
      const at = keys.indexOf(k);
      if (at === -1) {
        keys.push(k);
        values.push((this.#balances.get(k) ?? ZERO).add(p.delta));
      } else values[at] = (values[at] as Decimal).add(p.delta);
    }
    for (let i = 0; i < keys.length; i += 1) {
      const value = values[i] as Decimal;
      if (value.isNegative()) {
        const [account, asset] = (keys[i] as string).split('\u0000');
        throw new Error(`sim invariant: ${account} ${asset} would become ${formatDecimal(value)}`);
      }
    }
    if (this.#keepEntries) {
      for (const p of postings) {
        if (p.delta.isZero()) continue;
        this.#entries.push({
          seq: this.#entries.length + 1,
          timeMs,
          account: p.account,
          asset: p.asset,
          delta: p.delta,
          reason: p.reason,
          ref,
        });
      }
    }
    for (let i = 0; i < keys.length; i += 1) this.#balances.set(keys[i] as string, values[i] as Decimal);
    for (const p of postings) this.#holdings.set(p.asset, (this.#holdings.get(p.asset) ?? ZERO).add(p.delta));
  }

  entries(): readonly LedgerEntry[] {
    return this.#entries.slice();
  }

  /** Recompute every balance from the ledger and list where they differ (empty when exact). */
  mismatches(): LedgerMismatch[] {
    const sums = new Map<string, Decimal>();
    for (const e of this.#entries) {
      const k = key(e.account, e.asset);
      sums.set(k, (sums.get(k) ?? ZERO).add(e.delta));
    }
    const found: LedgerMismatch[] = [];
    for (const k of new Set([...sums.keys(), ...this.#balances.keys()])) {
      const balance = this.#balances.get(k) ?? ZERO;
      // Without entries there is nothing to recompute from: only the sign can be checked.
      const ledgerSum = this.#keepEntries ? (sums.get(k) ?? ZERO) : balance;
      if (!balance.eq(ledgerSum) || balance.isNegative()) {
        const [account, asset] = k.split('\u0000') as [LedgerAccount, string];
        found.push({ account, asset, balance, ledgerSum });
      }
    }
    return found;
  }
}
