import { AuthError, ExchangeRefusedError, ExchangeValidationError, ForeignOrderError, NonceError, NonceWindowError, StackerError, type ErrorCode } from '../domain/errors.ts';
import { StoreError } from '../store/errors.ts';

/**
 * What the engine does about an error, decided in one place:
 *
 * - `transient`: the exchange or the network failed for now (5xx, timeouts, resets, rate
 *   limits), or the disk refused a journal write (full, read-only): nothing was sent. A scheduled
 *   slot whose snapshot failed so is tried again within its window (Engine.runScheduledSlot);
 *   otherwise skip this tick with a warning; the next slot tries again.
 * - `refused`: the exchange understood and said no (422, validation). Log it with its context
 *   and carry on: retrying the same request gets the same answer.
 * - `fatal`: the key, the signature or the nonce was refused (every further request would be
 *   refused too and may lock the key); the journal file is gone or replaced (what is journalled
 *   reaches nothing a restart would read), or another daemon took the journal over; another client places orders with our ids (every slot
 *   would be bought twice); an order the journal cannot record, its id taken by another
 *   account's order (its fill would go uncounted). Stop trading and exit non-zero, for a human to look.
 * - `bug`: anything else (a TypeError in a strategy, a broken invariant). The instance that
 *   hit it is disabled; the others keep running.
 */
export type ErrorClass = 'transient' | 'refused' | 'fatal' | 'bug';

export function classifyError(error: unknown): ErrorClass {
  if (error instanceof AuthError || error instanceof NonceError || error instanceof ForeignOrderError) return 'fatal';
  if (error instanceof StoreError && (error.reason === 'journal-lost' || error.reason === 'not-owner' || error.reason === 'order-id-clash')) return 'fatal';
  if (error instanceof ExchangeRefusedError || error instanceof ExchangeValidationError) return 'refused';
  if (error instanceof StackerError) return error.retryable ? 'transient' : 'refused';
  return 'bug';
}

/** A stable code for the journal and metrics: the StackerError code, or E_BUG. */
export function errorCode(error: unknown): string {
  return error instanceof StackerError ? error.code : 'E_BUG';
}

/** The message, never anything attached to the error (bodies, requests). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * What a human should do about a nonce refusal. stacker's nonces never repeat within a
 * process, so a refusal that is not about the exchange's time window can only come from another
 * client signing with the same key (the exchange keeps one nonce sequence per key).
 */
export function nonceAdvice(error: NonceError): string {
  if (error instanceof NonceWindowError) {
    return "the nonce is outside the exchange's time window: this machine's clock is off the exchange's; fix the clock (NTP) and start again";
  }
  return "stacker's own nonces never repeat, so another client is using this API key at the same time (another stacker, a bot, a script): give each client its own key (should no other client exist, the exchange refused in the nonce's words for another reason, a throttle of the key: start again later)";
}

/** Raised by the engine to stop the daemon: auth or nonce refused, a lost journal, foreign orders. */
export class FatalEngineError extends StackerError {
  override readonly cause: unknown;
  /** The cause's code: what stopped trading (E_AUTH, E_NONCE, E_STORE, E_FOREIGN_ORDER…). */
  readonly code: ErrorCode;
  readonly retryable = false;
  constructor(message: string, cause: unknown) {
    super(cause instanceof NonceError ? `${message} — ${nonceAdvice(cause)}` : message);
    this.name = 'FatalEngineError';
    this.cause = cause;
    this.code = cause instanceof StackerError ? cause.code : 'E_UNEXPECTED';
  }
}
