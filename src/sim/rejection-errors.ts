import { CLIENT_ORDER_ID_TAKEN, ClientOrderIdTakenError, ExchangeRefusedError, ExchangeValidationError } from '../domain/errors.ts';
import { SimRejection } from './rejection.ts';

/**
 * The domain error an in-process simulator (paper, backtest) raises for its own refusal: the
 * class, code, exchange code, field map and refusal kind the HTTP client raises when the
 * sandbox answers the same refusal (test/sim/rejection-errors.test.ts checks every one), so the
 * engine decides the same way. No HTTP was involved, so it carries no status or path; the body
 * message is the exchange's ("Validation failed" for validation, "Inner validation failed" for
 * a business rule) so a person reads the same words in a dry run as live.
 */
export function toExchangeError(rejection: SimRejection): ExchangeValidationError | ExchangeRefusedError {
  const validation = rejection.kind === 'validation';
  const init = {
    exchangeCode: rejection.exchangeCode,
    exchangeMessage: validation ? 'Validation failed' : 'Inner validation failed',
    fieldErrors: rejection.fieldErrors(),
    refusal: rejection.refusal,
  };
  if (validation && (init.fieldErrors['clientOrderId'] ?? []).some((message) => CLIENT_ORDER_ID_TAKEN.test(message))) return new ClientOrderIdTakenError(init);
  return validation ? new ExchangeValidationError(init) : new ExchangeRefusedError(init);
}

/** Run a sim operation, turning its refusal into the domain error. */
export function asExchange<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof SimRejection) throw toExchangeError(error);
    throw error;
  }
}
