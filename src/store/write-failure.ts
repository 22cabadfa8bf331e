import type { JournalWriteFailure } from './journal.ts';

/** How a store reads its own failures. */
export interface FailureKinds {
  /** The failure means "the journal cannot be written (or reached) now": /healthz reports it. */
  counts(error: unknown): boolean;
  /**
   * Its cause outlives a small write's success: a full disk still takes the heartbeat's update of
   * a row that is there, and a role refused one table still writes another. Only the daemon's own
   * work written again (a slot, an order) clears it.
   */
  sticks(error: unknown): boolean;
}

/**
 * Since when the journal could not be written, and why: the first failure since the last write
 * that proved it writable again. Without the sticking kinds a full disk made the gauge flap, each
 * heartbeat "clearing" a failure the next slot met again, so an alert on it never fired.
 */
export class WriteFailureWatch {
  readonly #kinds: FailureKinds;
  readonly #now: () => number;
  #failure: JournalWriteFailure | null = null;
  #sticks = false;

  constructor(kinds: FailureKinds, now: () => number) {
    this.#kinds = kinds;
    this.#now = now;
  }

  get current(): JournalWriteFailure | null {
    return this.#failure;
  }

  /** An operation succeeded: `housekeeping` (a heartbeat, a lease pulse, a read) proves the database reachable, not that the failure's cause is gone. */
  succeeded(housekeeping: boolean): void {
    if (housekeeping && this.#sticks) return;
    this.#failure = null;
    this.#sticks = false;
  }

  failed(error: unknown): void {
    if (!this.#kinds.counts(error)) return;
    // Since the first failure: /healthz says how long the journal has not been written, not when it last tried.
    this.#failure = { atMs: this.#failure?.atMs ?? this.#now(), message: error instanceof Error ? error.message : String(error) };
    this.#sticks = this.#sticks || this.#kinds.sticks(error);
  }
}
