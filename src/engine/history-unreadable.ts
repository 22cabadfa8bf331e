import { type ErrorCode, StackerError } from '../domain/errors.ts';

/**
 * An account's order history could not be read this time (the exchange or the network failed).
 * Each account's history is its own ledger: the accounts that were read were compared, and only
 * this one's instances wait. Carries the cause's code, so metrics and logs read as before.
 */
export class HistoryUnreadableError extends StackerError {
  readonly code: ErrorCode;
  readonly retryable = true;
  readonly account: string;
  override readonly cause: unknown;
  /** `prefix`: "account NAME: " when the daemon trades several accounts, else empty. */
  constructor(account: string, prefix: string, cause: unknown) {
    const code: ErrorCode = cause instanceof StackerError ? cause.code : 'E_UNEXPECTED';
    super(`${prefix}reading the exchange's order history failed (${code}): ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'HistoryUnreadableError';
    this.account = account;
    this.cause = cause;
    this.code = code;
  }
}
