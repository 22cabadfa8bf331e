import type { JournalWriteFailure } from './journal.ts';

/** How a store reads its own failures. */
export interface FailureKinds {
  /** The failure means "the journal cannot be written (or reached) now": /healthz reports it. */
  counts(error: unknown): boolean;
  /**
   * Its cause outlives another write's success: a full disk still takes the heartbeat's update of
   * a row that is there, and a role refused one table still writes another. Only the operation
   * that failed, succeeding again, clears it.
   */
  sticks(error: unknown): boolean;
}

/**
 * Since when the journal could not be written, and why: the first failure since the last write
 * that proved it writable again. Without the lasting kinds a full disk made the gauge flap, each
 * heartbeat "clearing" a failure the next slot met again, so an alert on it never fired; and a
 * role refused the orders table had each slot's claim clear it, then send an order it could not
 * record, slot after slot.
 */
export class WriteFailureWatch {
  readonly #kinds: FailureKinds;
  readonly #now: () => number;
  #failure: JournalWriteFailure | null = null;
  /** The operation a lasting failure waits on (its `doing`, ids left out); null for one any write clears. */
  #waitsOn: string | null = null;

  constructor(kinds: FailureKinds, now: () => number) {
    this.#kinds = kinds;
    this.#now = now;
  }

  get current(): JournalWriteFailure | null {
    return this.#failure;
  }

  /** `doing` succeeded: it clears a failure any write clears, and a lasting one only when it is the operation that failed. */
  succeeded(doing: string): void {
    if (this.#waitsOn !== null && this.#waitsOn !== operationOf(doing)) return;
    this.#failure = null;
    this.#waitsOn = null;
  }

  failed(error: unknown, doing: string): void {
    if (!this.#kinds.counts(error)) return;
    const lasting = this.#kinds.sticks(error);
    // Since the first failure: /healthz says how long the journal has not been written, not when it last tried.
    this.#failure = { atMs: this.#failure?.atMs ?? this.#now(), message: error instanceof Error ? error.message : String(error), ...(lasting || this.#waitsOn !== null ? { lasting: true } : {}) };
    if (lasting) this.#waitsOn = operationOf(doing);
  }
}

/** An operation as a failure waits on it: its words, ids and times left out (`recording order #`). */
function operationOf(doing: string): string {
  return doing.replace(/[\w.-]*\d[\w.@:#-]*/g, '#');
}
